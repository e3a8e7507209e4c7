"""Finding agents: every agent the log knows (the :class:`~daemon.agents.model.Agents`
projection) and the agents of sessions the daemon has not met since it started, by id, prefix
or session, with the window each works with.

The lifecycle, the handoffs and compression all look agents up here; it reads the store only
when the projection does not answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from daemon.agents.model import Agent, Agents
from daemon.agents.usage import MAIN_AGENT, UsageFigures
from store.base import EventStore
from store.errors import Ambiguous, NotFound


class Directory:
    def __init__(self, store: EventStore, agents: Agents, windows: Mapping[str, int]) -> None:
        self.store = store
        self.agents = agents
        self._windows = windows  # [models] windows of config.toml

    async def known(self) -> list[Agent]:
        """Every agent: spawned ones, and each agent of every session that recorded usage."""
        for info in await self.store.sessions():
            if "usage" in info.kinds:
                for name in info.agents or [MAIN_AGENT]:
                    self.agents.implicit(info.session, name)
        return list(self.agents)

    async def find(self, ref: str) -> Agent:
        """An agent by id or unique prefix. The sessions are read (for agents the daemon has
        not met since it started) only when the agents it knows do not answer."""
        try:
            return self.agents.find(ref)
        except (NotFound, Ambiguous):
            await self.known()
            return self.agents.find(ref)

    async def agent_or_session(self, ref: str) -> Agent:
        """An agent by id or prefix; else the main agent of a session by name or prefix (made
        with the defaults when the session has reported no usage)."""
        try:
            return await self.find(ref)
        except NotFound:
            session = (await self.store.session(ref)).session
            return self.agents.get(session, MAIN_AGENT) or self.agents.implicit(session, MAIN_AGENT)

    def figures(self, agent: Agent) -> UsageFigures:
        """The agent's figures since the daemon started; its own model until usage names one."""
        if agent.figures is None:
            agent.figures = UsageFigures(agent.session, agent.name, model=agent.model)
        return agent.figures

    def window(self, agent: Agent) -> tuple[int, str]:
        """The agent's context window and where it came from (daemon/agents/usage.py)."""
        return self.figures(agent).window(agent.window, self._windows)

    def window_of(self, figures: UsageFigures, agent: Agent | None = None) -> tuple[int, str]:
        """The window ``figures`` read from the log give, with ``agent``'s own setting first."""
        return figures.window(None if agent is None else agent.window, self._windows)
