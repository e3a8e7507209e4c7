"""`toka hook claude-code` and `toka hook codex`: record one hook payload, fast, and never in the
agent's way.

Claude Code runs the hook on every tool call, so this path imports the standard library, the
client's connection (daemon/client/socket.py), the paths and the spool writer, and nothing else: no Typer, Rich,
asyncio, aiosqlite or blake3 (toka_cli/entry.py dispatches here before the Typer app loads).

The payload (stdin) becomes one event of its session: kind ``hook.<event in snake_case>``,
agent ``main``, the whole payload as the event's payload, and a key naming the occurrence
(:func:`occurrence_key`): the tool use for a tool's events, else this invocation, so that one
occurrence delivered twice lands once and two occurrences of the same payload are two events.
Codex's ``notify`` program gets its payload as its last argument instead (``{"type":
"agent-turn-complete", "thread-id": ..., "turn-id": ..., ...}``): it becomes kind
``hook.agent_turn_complete`` of session ``thread-id`` (the rollout's session id), keyed by its
turn. It takes one round trip (no ``hello``: the append's own answer says whether the daemon
understood), and a second only when it finds a spool (``spool.drain``).

Whatever the daemon does not take goes to the spool (daemon/client/spool.py): when it is not
running (never autostarted: a cold start would cost every tool call about 200 ms while it is
down), unreachable, slow to answer, or answers with any error (its store read-only, corrupt or
full; a payload longer than its request line). The daemon ingests the spool in its own process,
at start and while it runs; a payload is lost only when the spool cannot be written either.

Whatever happens the hook exits 0 and prints nothing on stdout (Claude Code reads stdout as
context or control on some events, and exit 2 would block the tool call); problems are one
line on stderr. With ``--headroom``, on UserPromptSubmit it prints the context fill, which
Claude Code adds to the agent's context. ``toka hook claude-code --statusline`` is the status
line's older spelling, kept for the settings.json files that name it: toka_cli/entry.py sends
it to `toka statusline` (toka_cli/statusline.py), the same code with the same output.

The status line shares this module's fast path: :func:`delivered`, the one way to the daemon
(send the event, or spool it), and the short forms of the figures both print (:func:`tokens`,
:func:`percent`, :func:`dollars`).
"""

from __future__ import annotations

import contextlib  # loaded at interpreter start-up already
import json
import os
import sys
import time

from daemon.client.socket import Connection, DaemonNotRunning
from daemon.client.spool import append_to_spool
from daemon.contract.hooks import hook_kind, tool_key
from daemon.contract.kinds import Kind
from daemon.paths import hook_files
from store.errors import ProtocolError, TokaError

# typing costs a hook about 4 ms to import, so it is read by type checkers only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from hashlib import sha256
    from typing import IO, Any
else:
    # CPython's own SHA-256 gives hashlib's digest without loading OpenSSL, which costs a hook
    # about 3.5 ms; a build without it falls back to hashlib.
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:
            from hashlib import sha256

AGENTS = ("claude-code", "codex")
USAGE = (
    "usage: toka hook claude-code [--headroom] < payload.json, toka hook codex < payload.json,"
    " or toka hook codex PAYLOAD_JSON (its notify program)"
)
# The kind of a status line input (Claude Code's statusLine command, `toka statusline`;
# daemon/agents/usage.py reads its context_window.context_window_size as the agent's own window).
STATUSLINE = Kind.STATUSLINE
# How long a hook waits for the daemon's answer before spooling instead (keys dedupe the case
# where the daemon committed after all). Claude Code's own hook timeout is 60 s.
ANSWER_TIMEOUT_S = 5.0
# A full accept queue is retried this long before the payload goes to the spool.
BACKLOG_RETRY_S = 0.25
# The hook events whose answer may give the agent context (daemon/inject/): sent with
# ``hooks.answer`` instead of ``events.append``, unless TOKA_INJECT=0 is in the agent's environment.
ANSWERED = (Kind.HOOK_SESSION_START, Kind.HOOK_USER_PROMPT_SUBMIT, Kind.HOOK_PRE_COMPACT)
# Context fill from which the agent is told compaction is near (DESIGN.md's WARNING threshold).
WARNING_PCT = 75.0


def _note(stderr: IO[str], message: str) -> None:
    stderr.write(f"toka hook: {message}\n")


def event_kind(name: object) -> str:
    """``PreToolUse`` -> ``hook.pre_tool_use`` (daemon/contract/hooks.py, which the daemon's inbox reads too)."""
    return hook_kind(name)


def _payload(raw: bytes, source: str) -> dict[str, Any]:
    if not raw.strip():
        raise ValueError(f"empty {source}, expected one hook payload (a JSON object)")
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{source} is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"the payload is a JSON {type(payload).__name__}, not an object")
    return payload


def codex_event(raw: bytes) -> dict[str, Any]:
    """The event a Codex notify payload becomes; ValueError saying why when it is none."""
    payload = _payload(raw, "the argument")
    session, turn = payload.get("thread-id"), payload.get("turn-id")
    if not isinstance(session, str) or not session:
        raise ValueError("the payload has no thread-id")
    kind = event_kind(str(payload.get("type") or "unknown").replace("-", "_"))
    return {
        "session": session,
        "kind": kind,
        "agent": "main",
        "ts": time.time(),
        # A turn is notified once; without its id, the notification is an occurrence of its own.
        "key": f"{kind}:{turn}" if isinstance(turn, str) and turn else f"{kind}:{invocation_id()}",
        "payload": payload,
    }


def hook_event(raw: bytes, kind: str | None = None) -> dict[str, Any]:
    """The event a payload becomes (of ``kind``, else named by its ``hook_event_name``);
    ValueError saying why when it is no hook payload."""
    payload = _payload(raw, "stdin")
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        raise ValueError("the payload has no session_id")
    kind = kind or event_kind(payload.get("hook_event_name"))
    return {
        "session": session,
        "kind": kind,
        "agent": "main",
        "ts": time.time(),  # when the hook ran, also for an event spooled and ingested later
        "key": occurrence_key(kind, payload, raw),
        "payload": payload,
    }


def invocation_id() -> str:
    """An id of this run of the hook: 128 random bits."""
    return os.urandom(16).hex()


def occurrence_key(kind: str, payload: dict[str, Any], raw: bytes) -> str:
    """The idempotency key of the event a payload becomes (docs/hooks.md, "One event per
    occurrence"): it names the occurrence, so that the same one delivered twice (spooled after
    an answer that came too late, a spool ingested again) lands once, while a payload repeated
    word for word by a later occurrence (Stop after every turn) is an event of its own.

    - a tool's event (``tool_use_id``): the kind and the tool use, one of each per tool call,
      however many times the hook runs for it;
    - a status line input: its bytes, a snapshot of state that says nothing new when repeated;
    - anything else: this invocation, chosen once and kept by the event wherever it goes.
    """
    if key := tool_key(kind, payload):
        return key
    if kind == STATUSLINE:
        return f"{kind}:" + sha256(raw).hexdigest()
    return f"{kind}:{invocation_id()}"


def tokens(n: int) -> str:
    """``950``, ``12k``, ``1.2M``: as short as a status bar wants."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 1000:
        return f"{round(n / 1000)}k"
    return str(n)


def percent(value: float) -> str:
    """``55%``: whole percents."""
    return f"{round(value)}%"


def dollars(value: Any) -> str:
    """``$1,234.56``, or ``unpriced`` when the daemon had no price."""
    return f"${value:,.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "unpriced"


def headroom_line(figures: dict[str, Any]) -> str | None:
    """``context 71% of 200k`` (and ``; compaction near`` from 75%), None when unknown."""
    pct, window = figures.get("fill_pct"), figures.get("context_window")
    if figures.get("context_tokens") is None or not isinstance(pct, (int, float)) or not isinstance(window, int):
        return None
    line = f"context {percent(pct)} of {tokens(window)}"
    return line + "; compaction near" if pct >= WARNING_PCT else line


def record_hook(
    agent: str, raw: bytes, stdout: IO[str], stderr: IO[str], *, headroom: bool = False, notify: bool = False
) -> int:
    """Record one payload of ``agent``'s hook (``notify``: Codex's notify program's, else a hook's
    on stdin) and print what the agent is to be given, if anything (:func:`answer_json`); the exit
    code (0 unless the command line is wrong)."""
    if agent not in AGENTS:
        _note(stderr, f"unknown agent {agent!r} (known: {', '.join(AGENTS)})")
        return 1  # not 2: Claude Code blocks the tool call on exit 2
    try:
        event = codex_event(raw) if notify else hook_event(raw)
    except ValueError as exc:
        _note(stderr, f"nothing recorded: {exc}")
        return 0
    kind = event["kind"]
    answered = kind in ANSWERED and os.environ.get("TOKA_INJECT", "").strip() != "0"
    context, figures = _record(event, answered, headroom and kind == Kind.HOOK_USER_PROMPT_SUBMIT, stderr)
    parts = [context, None if figures is None else headroom_line(figures)]
    if text := "\n\n".join(part for part in parts if part):
        stdout.write(answer_json(event["payload"], text) + "\n")
    return 0


def answer_json(payload: dict[str, Any], text: str) -> str:
    """What a hook prints to give the agent ``text``: Claude Code and Codex both pass a hook's
    ``hookSpecificOutput.additionalContext`` to the model (SessionStart, UserPromptSubmit)."""
    name = payload.get("hook_event_name")
    output = {"hookEventName": name if isinstance(name, str) else "UserPromptSubmit", "additionalContext": text}
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def spool_event(spool: str, line: bytes, why: str | None, note: Callable[[str], None]) -> None:
    """Keep an event the daemon did not take (``why``; None: it is not running) in the spool,
    which the daemon ingests in its own process; it is lost only when the spool cannot take it."""
    try:
        append_to_spool(spool, line)
    except OSError as exc:
        note(
            f"nothing recorded: {why or 'the daemon is not running'},"
            f" and the spool at {spool} cannot take it either ({exc.strerror or exc})"
        )
        return
    if why is not None:
        note(f"spooled: {why}")


def drain_if_spooled(connection: Connection, spool: str) -> None:
    """Have the daemon drain the spool now, when there is one (hooks spooled while it was away
    or busy); it answers at once and drains in the background. One stat when there is none."""
    if os.path.exists(spool):
        with contextlib.suppress(TokaError):  # an older daemon, say: it drains at its next start
            connection.call("spool.drain")


@contextlib.contextmanager
def delivered(
    event: dict[str, Any], note: Callable[[str], None], op: str, args: dict[str, Any]
) -> Iterator[tuple[Connection, Any] | None]:
    """Send ``event`` to the daemon in one ``op`` call (``args``: ``{"events": [event]}`` for
    ``events.append``, ``{"event": event}`` for ``statusline``) and give the open connection and the
    answer, for a further call; or spool the event and give None when the daemon cannot take it:
    it is not running (never autostarted: a cold start would cost every tool call about 200 ms),
    unreachable, slow to answer, or answers with any error (its store read-only, corrupt or full,
    a payload longer than its request line, an op it does not know). The daemon ingests the spool
    in its own process, and sets aside in hooks.spool.jsonl.rejected what its log refuses."""
    files = hook_files()
    connection: Connection | None = None
    refused: TokaError | None = None
    try:
        connection = Connection(files.socket, ANSWER_TIMEOUT_S, BACKLOG_RETRY_S)
        answer = connection.call(op, **args)
    except TokaError as exc:
        refused = exc
    if connection is None or refused is not None:
        if connection is not None:
            connection.close()
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
        spool_event(files.spool, line, _why(refused), note)
        yield None
        return
    try:
        drain_if_spooled(connection, files.spool)
        yield connection, answer
    finally:
        connection.close()


def _why(refused: TokaError | None) -> str | None:
    """What to say of an event spooled: nothing when the daemon is simply not running."""
    if refused is None or isinstance(refused, DaemonNotRunning):
        return None
    if isinstance(refused, ProtocolError):
        return f"{refused.message} (run `toka daemon restart`)"
    return refused.message


def _record(
    event: dict[str, Any], answered: bool, figures_wanted: bool, stderr: IO[str]
) -> tuple[str | None, dict[str, Any] | None]:
    """Append ``event`` (or spool it): with ``answered``, through ``hooks.answer``, whose answer
    holds the context the agent is to be given; and the session's usage figures when they are
    wanted and the daemon gave them."""

    def note(message: str) -> None:
        _note(stderr, message)

    op, args = ("hooks.answer", {"event": event}) if answered else ("events.append", {"events": [event]})
    with delivered(event, note, op, args) as delivery:
        if delivery is None:
            return None, None
        connection, answer = delivery
        given = answer.get("context") if answered and isinstance(answer, dict) else None
        context = given if isinstance(given, str) and given.strip() else None
        if not figures_wanted:
            return context, None
        try:
            figures: dict[str, Any] = connection.call("usage", session=event["session"])
        except TokaError:
            return context, None
        return context, figures


def main(args: list[str]) -> int:
    """``toka hook AGENT [--headroom]`` without Typer; entry.py sends ``--help`` to the Typer app."""
    stderr = sys.stderr
    options = [a for a in args if a.startswith("-")]
    agents = [a for a in args if not a.startswith("-")]
    # Codex's notify passes the payload as the last argument; its hooks and Claude Code's, on stdin.
    argument = agents[:1] == ["codex"] and len(agents) == 2 and not options
    if not argument and (len(agents) != 1 or set(options) - {"--headroom"}):
        _note(stderr, USAGE)
        return 1
    if not argument and sys.stdin is not None and sys.stdin.isatty():  # by hand: say what it wants, not wait
        _note(stderr, "expects one hook payload on stdin; " + USAGE)
        return 1
    try:
        raw = agents[1].encode() if argument else sys.stdin.buffer.read()
        return record_hook(agents[0], raw, sys.stdout, stderr, headroom="--headroom" in options, notify=argument)
    except TokaError as exc:  # the spool itself refused: not the user's own (daemon/ownership.py)
        _note(stderr, f"nothing recorded: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
        return 0
    except Exception as exc:  # a bug must not break the agent; TOKA_DEBUG=1 shows it
        if os.environ.get("TOKA_DEBUG") == "1":
            raise
        _note(stderr, f"internal error: {exc!r}")
        return 0
