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
from store.errors import TokaError


class Directory:
    def __init__(self, store: EventStore, agents: Agents, windows: Mapping[str, int]) -> None:
        self.store = store
        self.agents = agents
        self.refs = Refs(store, agents)
        self._windows = windows  # [models] windows of config.toml
        # session -> the time of its latest activity (store/kinds.py), as the latest read gave it
        self._last_active: dict[str, int] = {}

    async def known(self) -> list[Agent]:
        """Every agent: spawned ones, and each agent of every session that recorded usage."""
        for info in await self.store.sessions():
            self._last_active[info.session] = info.last_ts
            if Kind.USAGE in info.kinds:
                for name in info.agents or [MAIN_AGENT]:
                    self.agents.implicit(info.session, name)
        return list(self.agents)

    async def of_session(self, session: str) -> list[Agent]:
        """The agents of one session: those the projection holds, and those of its usage."""
        try:
            info = await self.store.session(session)
        except TokaError:  # gone, or a name other sessions begin with and it is not
            return []
        if info.session == session:
            self._last_active[session] = info.last_ts
            if Kind.USAGE in info.kinds:
                for name in info.agents or [MAIN_AGENT]:
                    self.agents.implicit(session, name)
        return [agent for agent in self.agents if agent.session == session]

    async def session_active(self, session: str, fresh: bool = False) -> int | None:
        """When ``session`` was last active (its latest event of an agent's own activity), from
        the latest listing unless ``fresh``."""
        if fresh or session not in self._last_active:
            await self.of_session(session)
        return self._last_active.get(session)

    def last_active(self, agent: Agent, figures: UsageFigures | None = None) -> int | None:
        """When ``agent`` was last active, as far as the latest reads know: a session's main agent
        when its session was (it runs the others), any other agent at its own latest call, or,
        with none, when its session was. toka's own appends (store/kinds.py, ``TOKA_KINDS``) are
        not activity."""
        session = self._last_active.get(agent.session)
        own = (figures or agent.figures or UsageFigures(agent.session)).last_ts
        if agent.is_main:
            return max(session or 0, own or 0) or None
        return own or session

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
