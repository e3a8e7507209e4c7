"""Naming sessions and agents: how every op that takes a session or an agent reads the name it is
given (``toka show 8463c716``, ``toka handoff create 8463c716``, ``toka agent show 8463c716/main``,
the MCP tools' ``session``). One reading for all of them:

1. an agent's exact id: a spawned agent's name (``frontend-v2-3f9a``), or ``SESSION/NAME``;
2. a session's exact name, which names the session's main agent;
3. ``SESSIONPREFIX/NAME``: the agent NAME of the session the prefix names (NAME may itself be a
   unique prefix of the agent's name; ``main`` is always the session's main agent);
4. a prefix of a session's name (its main agent) or of a spawned agent's name.

A prefix that fits several sessions or agents is :class:`~store.errors.Ambiguous`, and its hint
lists them; a name that fits nothing is :class:`~store.errors.NotFound`. Where an op wants a
session, an agent names the session it belongs to.

The main agent of a session is the one events recorded without an agent belong to
(:meth:`~daemon.agents.model.Agent.is_main`): ``main`` for Claude Code and Codex sessions, or the
spawned agent whose session bears its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.agents.model import Agent, Agents
from daemon.agents.usage import MAIN_AGENT
from store.base import EventStore, SessionInfo
from store.errors import Ambiguous, NotFound, UsageError
from store.events import format_ts

# Candidates an ambiguity's hint names before it says how many more there are.
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Completion:
    """A name that completes what was typed (``toka show 84<Tab>``): a session, one of its agents
    (``SESSIONPREFIX/NAME``, the prefix as typed), or a spawned agent's id."""

    name: str
    what: str  # "session" or "agent"
    session: str
    last_ts: int | None  # the session's latest event; None for an agent that recorded nothing yet
    events: int

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "what": self.what,
            "session": self.session,
            "last_ts": None if self.last_ts is None else format_ts(self.last_ts),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class _Candidate:
    """One thing a name may stand for: ``label`` is how an ambiguity shows it (a session's name
    for a session, an agent's id for an agent); ``name`` None stands for the session's main agent."""

    label: str
    session: str
    name: str | None

    @property
    def is_session(self) -> bool:
        """Whether it is a whole session (a spawned agent's id that is its session's name is)."""
        return self.label == self.session


class Refs:
    """Reads the names of sessions and agents against the log and the agents' projection."""

    def __init__(self, store: EventStore, agents: Agents) -> None:
        self.store = store
        self.agents = agents

    async def agent(self, ref: str, asked: str = "session") -> Agent:
        """The agent ``ref`` names; a session names its main agent. ``asked``: what the caller
        asked for ("session" or "agent"), which the error of a name that fits nothing says."""
        found = await self._candidates(ref, asked)
        if len(found) > 1:
            raise _ambiguous(ref, found)
        return self._agent(found[0])

    async def session(self, ref: str, may_be_new: bool = False) -> str:
        """The full name of the session ``ref`` names; an agent names its session.

        ``may_be_new``: a name that fits nothing is taken as it is (following a session that has
        not started yet).
        """
        try:
            return (await self.session_and_agent(ref))[0]
        except NotFound:
            if may_be_new and ref:
                return ref
            raise

    async def session_and_agent(self, ref: str) -> tuple[str, Agent | None]:
        """The session ``ref`` names, with the agent when it names one of the session's agents
        (``SESSION/NAME``, a spawned agent in a shared session) rather than the session."""
        found = await self._candidates(ref, "session")
        if len({candidate.session for candidate in found}) > 1:
            raise _ambiguous(ref, found)
        if len(found) > 1 or found[0].is_session:
            return found[0].session, None
        return found[0].session, self._agent(found[0])

    async def completions(self, typed: str, agents: bool, limit: int) -> list[Completion]:
        """What completes ``typed``, at most ``limit``: the sessions it begins, the most recently
        active first, then (with ``agents``) the spawned agents it begins; after ``SESSION/``, the
        agents of the one session SESSION names, the most active first."""
        head, slash, name = typed.rpartition("/")
        if slash and agents:
            sessions = await self._sessions(head)
            if len(sessions) != 1:
                return []
            info = await self.store.session(sessions[0])
            names = [MAIN_AGENT, *(n for n in _names(info, self.agents) if n != MAIN_AGENT)]
            # Events recorded without an agent are the main agent's; the session counts them apart.
            unnamed = info.events - sum(info.agents.values())
            return [
                Completion(
                    f"{head}/{n}",
                    "agent",
                    info.session,
                    info.last_ts,
                    info.agents.get(n, 0) + unnamed * (n == MAIN_AGENT),
                )
                for n in names
                if n.startswith(name)
            ][:limit]
        infos = sorted(
            (info for info in await self.store.sessions() if info.session.startswith(typed)),
            key=lambda info: info.last_ts,
            reverse=True,
        )
        found = [Completion(i.session, "session", i.session, i.last_ts, i.events) for i in infos[:limit]]
        if agents:
            named = {c.name for c in found}
            found += [
                Completion(a.name, "agent", a.session, None, 0)
                for a in self.agents
                if a.spawned and a.name.startswith(typed) and a.name not in named
            ]
        return found[:limit]

    def main_of(self, session: str) -> Agent:
        """The session's main agent (made with the defaults when the log has not named it)."""
        spawned = self.agents.get(session, session)
        if spawned is not None and spawned.spawned:
            return spawned
        return self.agents.get(session, MAIN_AGENT) or self.agents.implicit(session, MAIN_AGENT)

    def _agent(self, candidate: _Candidate) -> Agent:
        if candidate.name is None:
            return self.main_of(candidate.session)
        return self.agents.get(candidate.session, candidate.name) or self.agents.implicit(
            candidate.session, candidate.name
        )

    async def _candidates(self, ref: str, asked: str) -> list[_Candidate]:
        """Everything ``ref`` may name, never empty; NotFound when it names nothing."""
        if not ref:
            raise UsageError(f"an empty name names no {asked}", "give a session or an agent, or a prefix of one")
        exact = self.agents.by_id(ref)
        if exact is not None:
            return [_Candidate(ref, exact.session, exact.name)]
        sessions = await self._sessions(ref)
        if ref in sessions:
            return [_Candidate(ref, ref, None)]
        head, _, name = ref.rpartition("/")
        if head and name:
            try:
                return [await self._agent_of(head, name)]
            except NotFound:
                if not sessions:  # no session's name goes on with "/": the agent was meant
                    raise
        found = [_Candidate(session, session, None) for session in sessions]
        found += [
            _Candidate(a.name, a.session, a.name)
            for a in self.agents
            # A spawned agent whose session bears its name is that session's main agent.
            if a.spawned and a.name.startswith(ref) and not (a.session == a.name and a.session in sessions)
        ]
        if not found:
            raise _not_found(ref, asked)
        return found

    async def _sessions(self, prefix: str) -> list[str]:
        """The names of the sessions ``prefix`` is (the one it is exactly, when there is one) or
        begins."""
        try:
            return [(await self.store.session(prefix)).session]
        except NotFound:
            return []
        except Ambiguous:
            return [info.session for info in await self.store.sessions() if info.session.startswith(prefix)]

    async def _agent_of(self, session_ref: str, name: str) -> _Candidate:
        """Agent ``name`` (or the one whose name starts with it) of the session ``session_ref`` names."""
        sessions = await self._sessions(session_ref)
        if len(sessions) > 1:
            raise _ambiguous(session_ref, [_Candidate(s, s, None) for s in sessions])
        if not sessions:
            raise _not_found(session_ref, "session")
        info = await self.store.session(sessions[0])
        session = info.session
        if name == MAIN_AGENT:
            return _Candidate(f"{session}/{name}", session, None)
        names = _names(info, self.agents)
        chosen = [name] if name in names else [n for n in names if n.startswith(name)]
        if len(chosen) > 1:
            raise _ambiguous(f"{session_ref}/{name}", [_Candidate(f"{session}/{n}", session, n) for n in chosen])
        if not chosen:
            shown = ", ".join(names[:20]) or "none yet"
            raise NotFound(f"session {session} has no agent {name!r}", f"its agents: {shown}")
        return _Candidate(f"{session}/{chosen[0]}", session, chosen[0])


def _names(info: SessionInfo, agents: Agents) -> list[str]:
    """The agents of a session: those its events name, the most active first, then those the
    projection knows (spawned into it, say) that have recorded nothing yet."""
    names = list(info.agents)
    names += [a.name for a in agents if a.session == info.session and a.name not in info.agents]
    return names


def _ambiguous(ref: str, found: list[_Candidate]) -> Ambiguous:
    labels = sorted(candidate.label for candidate in found)
    sessions = sum(1 for candidate in found if candidate.is_session)
    what = {0: "agents", len(labels): "sessions"}.get(sessions, "sessions and agents")
    if len(labels) <= SHOWN:
        listed = ", ".join(labels[:-1]) + f" or {labels[-1]}"
    else:
        listed = ", ".join(labels[:SHOWN]) + f" or {len(labels) - SHOWN} more"
    return Ambiguous(
        f"{ref!r} is ambiguous: it fits {len(labels)} {what}", f"it could be {listed}; give more of the name"
    )


def _not_found(ref: str, asked: str) -> NotFound:
    if asked == "agent":
        return NotFound(f"no agent matches {ref!r}", "list them with `toka agent list`; a session names its main agent")
    return NotFound(
        f"no session matches {ref!r}", "list them with `toka sessions`; SESSION/NAME names one of its agents"
    )
