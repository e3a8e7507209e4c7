"""`toka hook claude-code`: record one Claude Code hook payload, fast, and never in the agent's way.

Claude Code runs the hook on every tool call, so this path imports the standard library, the
client's connection (daemon/client/socket.py), the paths and the spool writer, and nothing else: no Typer, Rich,
asyncio, aiosqlite or blake3 (toka_cli/entry.py dispatches here before the Typer app loads).

The payload (stdin) becomes one event of its session: kind ``hook.<event in snake_case>``,
agent ``main``, the whole payload as the event's payload, and key ``hook:<sha256 of stdin>``, so
a retried hook is recorded once. It takes one round trip (no ``hello``: the append's own answer
says whether the daemon understood). When the daemon is not running the event goes to the spool
(daemon/client/spool.py) instead, never to an autostarted daemon: a cold start would cost every tool
call about 200 ms while the daemon is down, and the spool lands in the log when it next starts.

Whatever happens the hook exits 0 and prints nothing on stdout (Claude Code reads stdout as
context or control on some events, and exit 2 would block the tool call); problems are one
line on stderr. Two options break the silence: with ``--headroom``, on UserPromptSubmit it
prints the context fill, which Claude Code adds to the agent's context; with ``--statusline`` it
is Claude Code's status line command: the input is recorded as a ``statusline`` event (its
``context_window_size`` is the agent's own window, which toka then uses) and it prints one line
for the status bar, whatever happens.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

from daemon.client.socket import Connection, DaemonNotRunning
from daemon.client.spool import append_to_spool
from daemon.paths import hook_files
from store.errors import Busy, DaemonUnavailable, ProtocolError, StoreUnavailable, TokaError

# typing costs a hook about 4 ms to import, so it is read by type checkers only.
TYPE_CHECKING = False
if TYPE_CHECKING:
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

AGENTS = ("claude-code",)
USAGE = "usage: toka hook claude-code [--headroom | --statusline] < payload.json"
# The kind of a status line input (Claude Code's statusLine command; daemon/agents/usage.py reads its
# context_window.context_window_size as the agent's own window).
STATUSLINE = "statusline"
# How long a hook waits for the daemon's answer before spooling instead (keys dedupe the case
# where the daemon committed after all). Claude Code's own hook timeout is 60 s.
ANSWER_TIMEOUT_S = 5.0
# A full accept queue is retried this long before the payload goes to the spool.
BACKLOG_RETRY_S = 0.25
# Context fill from which the agent is told compaction is near (DESIGN.md's WARNING threshold).
WARNING_PCT = 75.0


def _note(stderr: IO[str], message: str) -> None:
    stderr.write(f"toka hook: {message}\n")


def event_kind(name: object) -> str:
    """``PreToolUse`` -> ``hook.pre_tool_use``; names toka does not know yet are kept the same way."""
    if not isinstance(name, str) or not name.strip():
        return "hook.unknown"
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name.strip()).lower()
    return "hook." + (re.sub(r"[^a-z0-9_-]+", "_", snake).strip("_") or "unknown")


def hook_event(raw: bytes, kind: str | None = None) -> dict[str, Any]:
    """The event a payload becomes (of ``kind``, else named by its ``hook_event_name``);
    ValueError saying why when it is no hook payload."""
    if not raw.strip():
        raise ValueError("empty stdin, expected one hook payload (a JSON object)")
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"the payload is a JSON {type(payload).__name__}, not an object")
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        raise ValueError("the payload has no session_id")
    return {
        "session": session,
        "kind": kind or event_kind(payload.get("hook_event_name")),
        "agent": "main",
        "ts": time.time(),  # when the hook ran, also for an event spooled and ingested later
        "key": f"{kind or 'hook'}:" + sha256(raw).hexdigest(),
        "payload": payload,
    }


def headroom_line(figures: dict[str, Any]) -> str | None:
    """``context 71% of 200k`` (and ``; compaction near`` from 75%), None when unknown."""
    pct, window = figures.get("fill_pct"), figures.get("context_window")
    if figures.get("context_tokens") is None or not isinstance(pct, (int, float)) or not isinstance(window, int):
        return None
    size = f"{window // 1_000_000}M" if window % 1_000_000 == 0 else f"{round(window / 1000)}k"
    line = f"context {round(pct)}% of {size}"
    return line + "; compaction near" if pct >= WARNING_PCT else line


def status_line(figures: dict[str, Any] | None, payload: dict[str, Any] | None) -> str:
    """What ``--statusline`` prints: toka's figures when the daemon answered, else the agent's
    own percentage from the payload, marked as such."""
    line = headroom_line(figures) if figures else None
    if line:
        state = figures.get("state") if figures else None
        return f"toka · {line}" + (f" · {state}" if state not in (None, "ACTIVE") else "")
    window = payload.get("context_window") if isinstance(payload, dict) else None
    used = window.get("used_percentage") if isinstance(window, dict) else None
    if isinstance(used, (int, float)) and not isinstance(used, bool):
        return f"toka · context {round(used)}% (Claude Code's figure; toka has none yet)"
    return "toka · no figures yet"


def record_hook(
    agent: str, raw: bytes, stdout: IO[str], stderr: IO[str], *, headroom: bool = False, statusline: bool = False
) -> int:
    """Record one payload of ``agent``'s hook, or with ``statusline`` one status line input
    (kind ``statusline``: it carries the agent's own context window), and print the status
    line; the exit code (0 unless the command line is wrong)."""
    if agent not in AGENTS:
        _note(stderr, f"unknown agent {agent!r} (known: {', '.join(AGENTS)})")
        return 1  # not 2: Claude Code blocks the tool call on exit 2
    figures: dict[str, Any] | None = None
    try:
        event = hook_event(raw, STATUSLINE if statusline else None)
    except ValueError as exc:
        _note(stderr, f"nothing recorded: {exc}")
        if statusline:
            stdout.write(status_line(None, None) + "\n")
        return 0
    try:
        figures = _record(event, headroom, statusline, stderr)
    finally:
        if statusline:
            stdout.write(status_line(figures, event["payload"]) + "\n")
        elif figures is not None and (text := headroom_line(figures)):
            stdout.write(text + "\n")
    return 0


def _record(event: dict[str, Any], headroom: bool, statusline: bool, stderr: IO[str]) -> dict[str, Any] | None:
    """Append ``event`` (or spool it); the session's usage figures when they are wanted and
    the daemon gave them."""
    files = hook_files()
    line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    try:
        connection = Connection(files.socket, ANSWER_TIMEOUT_S, BACKLOG_RETRY_S)
    except DaemonNotRunning:
        append_to_spool(files.spool, line)
        return None
    except TokaError as exc:  # permission denied, socket path too long: worth a word
        append_to_spool(files.spool, line)
        _note(stderr, f"spooled: {exc.message}")
        return None
    try:
        try:
            connection.call("events.append", events=[event])
        except (DaemonUnavailable, Busy, StoreUnavailable) as exc:  # StoreUnavailable: its database is down
            append_to_spool(files.spool, line)
            _note(stderr, f"spooled: {exc.message}")
            return None
        except ProtocolError as exc:
            append_to_spool(files.spool, line)
            _note(stderr, f"spooled: {exc.message} (run `toka daemon restart`)")
            return None
        except TokaError as exc:  # the daemon refused this event: spooling it would not help
            _note(stderr, f"nothing recorded: {exc.message}")
            return None
        if statusline or (headroom and event["kind"] == "hook.user_prompt_submit"):
            try:
                figures: dict[str, Any] = connection.call("usage", session=event["session"])
                return figures
            except TokaError:
                return None
        return None
    finally:
        connection.close()


def main(args: list[str]) -> int:
    """``toka hook AGENT [--headroom]`` without Typer; entry.py sends ``--help`` to the Typer app."""
    stderr = sys.stderr
    options = [a for a in args if a.startswith("-")]
    agents = [a for a in args if not a.startswith("-")]
    if len(agents) != 1 or set(options) - {"--headroom", "--statusline"}:
        _note(stderr, USAGE)
        return 1
    if sys.stdin is not None and sys.stdin.isatty():  # run by hand: say what it wants rather than wait for end of input
        _note(stderr, "expects one hook payload on stdin; " + USAGE)
        return 1
    try:
        raw = sys.stdin.buffer.read()
        return record_hook(
            agents[0], raw, sys.stdout, stderr, headroom="--headroom" in options, statusline="--statusline" in options
        )
    except TokaError as exc:  # the spool itself refused: not the user's own (daemon/ownership.py)
        _note(stderr, f"nothing recorded: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
        return 0
    except Exception as exc:  # a bug must not break the agent; TOKA_DEBUG=1 shows it
        if os.environ.get("TOKA_DEBUG") == "1":
            raise
        _note(stderr, f"internal error: {exc!r}")
        return 0
