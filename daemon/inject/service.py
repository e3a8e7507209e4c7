"""The context an agent's hook is answered with (docs/injection.md).

A hook of SessionStart, UserPromptSubmit or PreCompact sends its event with ``hooks.answer``
instead of ``events.append``: the daemon appends it as any event, then decides what the agent
should be given:

- **SessionStart** ``compact`` or ``clear``: what toka holds of the session the agent just lost
  the detail of (after ``clear``, the folder's previous session when the cleared one comes back
  under a new id): its latest handoff's continuation prompt, built again when the agent did
  anything after it;
- ``startup``: the handoff of the folder's previous session, when it was handed off (by the
  lifecycle, ``toka handoff create`` or a compaction), once: the first session to start after it
  gets it; with ``inject.recall`` on, otherwise, the folder's latest notes;
- ``resume``: the session's handoff only when it was compacted or handed off since the agent last
  started or was given its context;
- **UserPromptSubmit**: once per change of the session's state to WARNING or CRITICAL, a short
  notice: the fill, the state, and what to do (``/compact``, the handoff made for it);
- **PreCompact**: nothing for the agent; the session's handoff is built from the log, in the
  background, so that the SessionStart after the compaction finds it.

What is given is cut to ``inject.budget_tokens``, redacted as every handoff is, and recorded as a
``context.injected`` event of the session (``toka events`` shows what the agent was told and when).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import dataclass, replace
from typing import Any

from daemon.agents.refs import Refs
from daemon.component import Component, Projection
from daemon.compress.tokens import estimator
from daemon.contract import results
from daemon.contract.kinds import NOTE_PREFIX, Kind
from daemon.contract.states import AgentState
from daemon.core import Core
from daemon.handoff.service import Handoffs
from daemon.inject.recall import ranked_notes
from daemon.inject.settings import InjectMode, InjectSettings
from daemon.lifecycle.service import Lifecycle
from daemon.recall.service import Embeddings
from daemon.redact import redact
from daemon.redact.settings import RedactionSettings
from store.base import EventQuery
from store.events import Event, parse_new_event

log = logging.getLogger("toka.daemon")

# Events after a handoff that do not make it stale: the session starting, compacting or ending
# around it, its figures, and what toka appends of its own; the agent's work and the notes made
# of it (decisions, to-dos) do.
_NOT_WORK = (
    Kind.HOOK_SESSION_START,
    Kind.HOOK_SESSION_END,
    Kind.HOOK_PRE_COMPACT,
    Kind.HOOK_POST_COMPACT,
    Kind.COMPACTION + ".*",
    Kind.STATUSLINE,
    Kind.SESSION_META,
    Kind.USAGE,
    Kind.TELEMETRY + ".*",
    Kind.HANDOFF,
    Kind.CONTEXT_INJECTED,
    Kind.LIFECYCLE,
    Kind.ALERT,
    Kind.CHECKPOINT,
    Kind.COMPRESSION,
    Kind.AGENT_SPAWN,
    "memory.*",
    "pool.*",
)
_WORK = tuple("!" + kind for kind in _NOT_WORK)
# Why the handoffs toka builds for the agent itself are built: the session compacting, starting
# again (compact, clear, resume) and reaching CRITICAL. Only the last, a lifecycle handoff and
# one a person made (`toka handoff create`) hand a session on to the next session of its folder.
COMPACTING = "compaction"
RESTARTING = "session start"
AT_CRITICAL = "context at CRITICAL"
_NOT_HANDED_ON = (COMPACTING, RESTARTING)
# Notes given at the start of a session with ``inject.recall`` on.
_RECALLED_NOTES = 20
_PROJECTED = (
    Kind.SESSION_META,
    Kind.HOOK_SESSION_START,
    Kind.HOOK_USER_PROMPT_SUBMIT,
    Kind.HOOK_PRE_COMPACT,
    Kind.HOOK_POST_COMPACT,
    Kind.COMPACTION,
    Kind.HANDOFF,
    Kind.CONTEXT_INJECTED,
)


@dataclass(frozen=True, slots=True)
class Given:
    """What one answer gives the agent, and why (the ``context.injected`` payload's fields)."""

    text: str
    why: str  # handoff, notice or recall
    handoff: str | None = None
    from_session: str | None = None
    notice: str | None = None
    handed_on: str | None = None  # the handoff that handed the previous session on, given once


class Injector(Component):
    def __init__(self, core: Core, lifecycle: Lifecycle, embeddings: Embeddings) -> None:
        self.core = core
        self.lifecycle = lifecycle
        self.embeddings = embeddings  # the project recall's ranking
        self.handoffs: Handoffs = lifecycle.handoffs
        self.refs: Refs = lifecycle.directory.refs
        self.folder: dict[str, str] = {}  # session -> its working directory
        self.sessions_in: dict[str, dict[str, int]] = {}  # folder -> {session: its latest seq seen}
        self.handoff_of: dict[str, tuple[int, str]] = {}  # session -> its latest handoff (seq, id)
        self.handed_on: dict[str, str] = {}  # session -> its latest handoff that hands it on
        self.changed: dict[str, int] = {}  # session -> seq of its latest compaction or handoff
        self.given: dict[str, int] = {}  # session -> seq of its latest start or injection
        self.delivered: set[str] = set()  # handoffs given to an agent
        self.noticed: dict[str, str] = {}  # session -> the state change it was last told of
        self._builds: dict[str, asyncio.Task[Event | None]] = {}
        self._tokens = estimator()

    # The projection.

    def projection(self) -> Projection:
        return Projection("injections", _PROJECTED, self._apply)

    def _apply(self, event: Event) -> None:
        session, payload = event.session, event.payload
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        if isinstance(cwd, str) and cwd:
            self.folder[session] = cwd
        if (folder := self.folder.get(session)) is not None:
            seen = self.sessions_in.setdefault(folder, {})
            seen.pop(session, None)  # kept in order of the latest seen last
            seen[session] = event.seq
        kind = event.kind
        if kind == Kind.HANDOFF:
            self.handoff_of[session] = (event.seq, event.id)
            self.changed[session] = event.seq
            if payload.get("reason") not in _NOT_HANDED_ON:
                self.handed_on[session] = event.id
        elif kind in (Kind.COMPACTION, Kind.HOOK_POST_COMPACT):
            self.changed[session] = event.seq
        elif kind == Kind.HOOK_SESSION_START:
            self.given[session] = event.seq
        elif kind == Kind.CONTEXT_INJECTED:
            self.given[session] = event.seq
            if isinstance(handed_on := payload.get("handed_on"), str):
                self.delivered.add(handed_on)
            if isinstance(notice := payload.get("notice"), str):
                self.noticed[session] = notice

    async def stop(self, deadline: float) -> None:
        builds = [task for task in self._builds.values() if not task.done()]
        if builds:
            await asyncio.wait(builds, timeout=deadline)

    # Answering a hook.

    async def answer(self, raw: dict[str, Any]) -> results.HookAnswer:
        """Append the hook's event and say what the agent is to be given (None: nothing)."""
        event = parse_new_event(raw)
        session = event.session
        given_before = self.given.get(session, 0)
        [result] = await self.core.append([event])
        stored = result.event
        answer: results.HookAnswer = {"seq": stored.seq, "id": stored.id, "created": result.created, "context": None}
        mode = self.core.settings[InjectSettings].mode
        if not result.created or mode == InjectMode.OFF:
            return answer
        given: Given | None = None
        if stored.kind == Kind.HOOK_SESSION_START:
            given = await self._session_start(stored, given_before, mode)
        elif stored.kind == Kind.HOOK_USER_PROMPT_SUBMIT and mode == InjectMode.ALL:
            given = await self._notice(session)
        elif stored.kind == Kind.HOOK_PRE_COMPACT:
            self._build_soon(session, COMPACTING)
        if given is None:
            return answer
        text, cut, tokens = self._within_budget(given.text, given.handoff)
        await self._record(stored, given, text, cut, tokens)
        answer["context"] = text
        return answer

    async def _session_start(self, start: Event, given_before: int, mode: str) -> Given | None:
        session = start.session
        source = start.payload.get("source")
        folder = self.folder.get(session)
        if source == "compact":
            return await self._handoff_given(session, build=True)
        if source == "clear":
            # Claude Code gives a cleared session a new id; an agent that keeps it is continued.
            if given_before or session in self.handoff_of:
                return await self._handoff_given(session, build=True)
            previous = self._previous_in(folder, session)
            return None if previous is None else await self._handoff_given(previous, build=True)
        if source == "resume":
            if self.changed.get(session, 0) > given_before:
                return await self._handoff_given(session, build=True)
            return None
        previous = self._previous_in(folder, session)
        handed_on = None if previous is None else self.handed_on.get(previous)
        if previous is not None and handed_on is not None and handed_on not in self.delivered:
            given = await self._handoff_given(previous, build=False)
            return None if given is None else replace(given, handed_on=handed_on)
        if mode == InjectMode.ALL and self.core.settings[InjectSettings].recall and folder is not None:
            return await self._recall(folder, session)
        return None

    def _previous_in(self, folder: str | None, session: str) -> str | None:
        """The session of ``folder`` seen last, other than ``session``."""
        if folder is None:
            return None
        others = [s for s in self.sessions_in.get(folder, {}) if s != session]
        return others[-1] if others else None

    async def _handoff_given(self, session: str, build: bool) -> Given | None:
        """The session's handoff, built again when the agent did anything after it (built when it
        has none and ``build``), as what to give."""
        event = await self._current_handoff(session, build)
        if event is None:
            return None
        prompt = event.payload.get("prompt")
        if not isinstance(prompt, str) or not _holds_work(event.payload.get("document")):
            return None
        return Given(prompt, "handoff", handoff=event.id, from_session=session)

    async def _current_handoff(self, session: str, build: bool) -> Event | None:
        if (running := self._builds.get(session)) is not None:
            await asyncio.shield(running)
        latest = self.handoff_of.get(session)
        if latest is None:
            if not build or not await self._active_after(session, 0):
                return None
            return await self._build(session, RESTARTING)
        seq, handoff_id = latest
        if await self._active_after(session, seq):
            return await self._build(session, RESTARTING)
        return await self.core.store.get(handoff_id)

    async def _active_after(self, session: str, seq: int) -> bool:
        """Whether the agent did any work in ``session`` after ``seq`` (one indexed lookup)."""
        query = EventQuery(session=session, kinds=_WORK, after_seq=seq, limit=1)
        return bool(await self.core.store.query(query))

    def _build_soon(self, session: str, reason: str) -> None:
        if (running := self._builds.get(session)) is not None and not running.done():
            return
        # A context of its own: the hook that asked has hung up by the time the build reads the log,
        # and a read on behalf of a requester that is gone is skipped (store/requester.py).
        task = asyncio.create_task(self._build(session, reason), context=contextvars.Context())
        self._builds[session] = task
        task.add_done_callback(lambda _: self._builds.pop(session, None) if self._builds.get(session) is task else None)

    async def _build(self, session: str, reason: str) -> Event | None:
        try:
            return await self.handoffs.build(self.refs.main_of(session), reason=reason)
        except Exception:
            log.exception("inject: the handoff of session %s could not be built", session)
            return None

    async def _notice(self, session: str) -> Given | None:
        """The notice of a change of the session's main agent to WARNING or CRITICAL, once."""
        agent = self.refs.main_of(session)
        if agent.state not in (AgentState.WARNING, AgentState.CRITICAL):
            return None
        change = f"{agent.state}@{agent.changed_ts}"
        if self.noticed.get(session) == change:
            return None
        figures = agent.figures
        window, _ = self.lifecycle.directory.window(agent)
        used = None if figures is None else figures.context_tokens
        fill = "" if used is None else f" is at {100 * used / window:.0f}% of its {_tokens(window)}-token window"
        if agent.state == AgentState.WARNING:
            text = (
                f"toka: this session's context{fill} (WARNING): compaction is near. Note the decisions and to-dos"
                " worth keeping now, and /compact at a good point; toka gives them back after it."
            )
            return Given(text, "notice", notice=change)
        handoff = await self._build(session, AT_CRITICAL)
        continued = (
            f" Or start a fresh session in this folder: it is given handoff {handoff.id[:12]} (`toka handoff show"
            f" {handoff.id[:12]}`)."
            if handoff is not None
            else ""
        )
        text = (
            f"toka: this session's context{fill} (CRITICAL). Run /compact now: toka gives the decisions and"
            f" to-dos back after it.{continued}"
        )
        return Given(text, "notice", handoff=None if handoff is None else handoff.id, notice=change)

    async def _recall(self, folder: str, session: str) -> Given | None:
        """The notes of the folder's other sessions: the nearest its last request when semantic
        recall runs (daemon/inject/recall.py), else the latest."""
        others = list(reversed([s for s in self.sessions_in.get(folder, {}) if s != session]))
        notes = await ranked_notes(self.core, self.embeddings, others, _RECALLED_NOTES)
        lines = [f"- {note.kind.removeprefix(NOTE_PREFIX)}: {str(note.payload['text']).strip()}" for note in notes]
        if not lines:
            return None
        order = "nearest the last request first" if self.embeddings.on else "latest first"
        text = f"toka: notes recorded in this folder's earlier sessions ({order}):\n" + "\n".join(lines)
        return Given(redact(text, self.core.settings[RedactionSettings].kinds).text, "recall")

    def _within_budget(self, text: str, handoff: str | None) -> tuple[str, bool, int]:
        """The text cut to the budget at a line, whether it was cut, and its tokens."""
        budget = self.core.settings[InjectSettings].budget_tokens
        count = self._tokens.count
        if (tokens := count(text)) <= budget:
            return text, False, tokens
        rest = f": the whole handoff is `toka handoff show {handoff[:12]}`" if handoff else ""
        tail = f"\n\n[cut to {budget} tokens{rest}]"
        kept: list[str] = []
        used = count(tail)
        for line in text.splitlines():
            cost = count(line) + 1
            if used + cost > budget:
                break
            kept.append(line)
            used += cost
        return "\n".join(kept) + tail, True, used

    async def _record(self, hook: Event, given: Given, text: str, cut: bool, tokens: int) -> None:
        payload = {
            "hook": hook.payload.get("hook_event_name") or hook.kind,
            "source": hook.payload.get("source"),
            "why": given.why,
            "text": text,
            "tokens": tokens,
            "cut": cut,
            "handoff": given.handoff,
            "from_session": given.from_session,
            "notice": given.notice,
            "handed_on": given.handed_on,
            "answered": hook.id,
        }
        event = {"session": hook.session, "kind": Kind.CONTEXT_INJECTED, "key": f"inject:{hook.id}", "payload": payload}
        await self.core.append([parse_new_event(event)])


def _holds_work(document: object) -> bool:
    """Whether a handoff document says anything of the work: a request, a report, a note, a file,
    a to-do or a call under way (a session that only started has none, and is not worth giving)."""
    if not isinstance(document, dict):
        return False
    task = document.get("task") or {}
    texts = (document.get("original_request"), task.get("request"), task.get("status"))
    lists = ("decisions", "rejected", "assumptions", "constraints", "dependencies", "files")
    todos = (document.get("todos") or {}).get("items")
    calls = (document.get("in_progress") or {}).get("calls")
    return any(texts) or any(document.get(name) for name in lists) or bool(todos) or bool(calls)


def _tokens(n: int) -> str:
    return f"{n / 1_000_000:g}M" if n >= 1_000_000 else f"{round(n / 1000)}k"
