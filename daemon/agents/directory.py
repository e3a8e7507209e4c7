"""Finding agents: every agent the log knows (the :class:`~daemon.agents.model.Agents`
projection) and the agents of sessions the daemon has not met since it started, with the window
each works with. The names people and agents give are read by :attr:`Directory.refs`
(daemon/agents/refs.py).

The lifecycle, the handoffs and compression all look agents up here.
"""

from __future__ import annotations

from collections.abc import Mapping

from daemon.agents.model import Agent, Agents
from daemon.agents.refs import Refs
from daemon.agents.usage import MAIN_AGENT, UsageFigures
from daemon.contract.kinds import Kind
from store.base import EventStore


class Directory:
    def __init__(self, store: EventStore, agents: Agents, windows: Mapping[str, int]) -> None:
        self.store = store
        self.agents = agents
        self.refs = Refs(store, agents)
        self._windows = windows  # [models] windows of config.toml

    async def known(self) -> list[Agent]:
        """Every agent: spawned ones, and each agent of every session that recorded usage."""
        for info in await self.store.sessions():
            if Kind.USAGE in info.kinds:
                for name in info.agents or [MAIN_AGENT]:
                    self.agents.implicit(info.session, name)
        return list(self.agents)

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
