"""`toka statusline`: Claude Code's status line, in one short line and one round trip.

Claude Code runs its ``statusLine`` command after every turn with the session's JSON on stdin
(shared/docs/real-clients.md). This sends it to the daemon as the ``statusline`` event it
becomes (``statusline`` op: recorded, and its context window taken in) and prints what the
answer says::

    Opus 4.6 · ctx 55% (90k left) · session $1.23 · block $4.56, 2h 13m left

the model, the context fill and the headroom to the window, what the session cost, and the
active 5-hour block's cost and time left. ``toka hook claude-code --statusline``, the older
spelling that settings.json files may still name, runs this same command (toka_cli/entry.py
sends both here). Like the hook it runs on the fast path: the standard library and the
client's connection, no Typer, no Rich, one request, and the hook's own way to the daemon and
number formats (toka_cli/hook.py). When the daemon cannot take the input it is spooled, as a
hook's payload is (docs/hooks.md), and the line shows Claude Code's own figures, marked as
such. It always prints one line and exits 0.
"""

from __future__ import annotations

import os
import sys

from daemon.contract.states import AT_RISK
from store.errors import TokaError
from toka_cli.hook import STATUSLINE, delivered, dollars, hook_event, percent, tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

USAGE = "usage: toka statusline < session.json (Claude Code's statusLine command)"
# What the line says when it has nothing to show: no input, or a bug.
NO_FIGURES = "toka · no figures yet"


def _note(stderr: IO[str], message: str) -> None:
    stderr.write(f"toka statusline: {message}\n")


def _time_left(minutes: float) -> str:
    hours, rest = divmod(max(int(minutes), 0), 60)
    return f"{hours}h {rest:02d}m left" if hours else f"{rest}m left"


def _model(figures: dict[str, Any] | None, payload: dict[str, Any] | None) -> str | None:
    model = payload.get("model") if isinstance(payload, dict) else None
    if isinstance(model, dict) and isinstance(model.get("display_name"), str) and model["display_name"]:
        return str(model["display_name"])
    named = figures.get("model") if figures else None
    return named if isinstance(named, str) else None


def line(figures: dict[str, Any] | None, payload: dict[str, Any] | None) -> str:
    """The status line: toka's figures when the daemon answered, else Claude Code's own."""
    parts = [name] if (name := _model(figures, payload)) else []
    if figures:
        pct, context, window = figures.get("fill_pct"), figures.get("context_tokens"), figures.get("context_window")
        if isinstance(pct, (int, float)) and isinstance(context, int) and isinstance(window, int):
            state = figures.get("state")
            flag = f" {state}" if state in AT_RISK else ""
            parts.append(f"ctx {percent(pct)} ({tokens(max(window - context, 0))} left){flag}")
        elif (used := _used_pct(payload)) is not None:
            parts.append(f"ctx {percent(used)} (Claude Code's)")
        spent = figures.get("session_cost") or {}
        if spent.get("calls"):
            parts.append(f"session {dollars(spent.get('cost_usd'))}" + ("*" if spent.get("unpriced_calls") else ""))
        block = figures.get("block")
        if isinstance(block, dict):
            parts.append(f"block {dollars(block.get('cost_usd'))}, {_time_left(block.get('remaining_minutes') or 0)}")
        return " · ".join(parts) if parts else NO_FIGURES
    cost = payload.get("cost") if isinstance(payload, dict) else None
    spent = cost.get("total_cost_usd") if isinstance(cost, dict) else None
    if (used := _used_pct(payload)) is not None:
        parts.append(f"ctx {percent(used)}")
    if isinstance(spent, (int, float)) and not isinstance(spent, bool):
        parts.append(f"session {dollars(spent)}")
    return " · ".join([*parts, "(Claude Code's figures; toka has none yet)"])


def _used_pct(payload: dict[str, Any] | None) -> float | None:
    """Claude Code's own context percentage, from the input."""
    window = payload.get("context_window") if isinstance(payload, dict) else None
    used = window.get("used_percentage") if isinstance(window, dict) else None
    return float(used) if isinstance(used, (int, float)) and not isinstance(used, bool) else None


def _ask(event: dict[str, Any], stderr: IO[str]) -> dict[str, Any] | None:
    """Record ``event`` and return the line's figures; spool it when the daemon cannot take it."""

    def note(message: str) -> None:
        _note(stderr, message)

    with delivered(event, note, "statusline", {"event": event}) as answered:
        if answered is None:
            return None
        figures: dict[str, Any] = answered[1]
        return figures


def show(raw: bytes, stdout: IO[str], stderr: IO[str]) -> int:
    """Record one status line input and print its line, exactly one; 0 whatever happens."""
    shown = NO_FIGURES
    try:
        event = hook_event(raw, STATUSLINE)
        shown = line(None, event["payload"])
        shown = line(_ask(event, stderr), event["payload"])
    except ValueError as exc:
        _note(stderr, f"nothing recorded: {exc}")
    except TokaError as exc:  # the spool itself refused: not the user's own (daemon/ownership.py)
        _note(stderr, f"nothing recorded: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
    except Exception as exc:  # a bug must not break the status bar; TOKA_DEBUG=1 shows it
        if os.environ.get("TOKA_DEBUG") == "1":
            raise
        _note(stderr, f"internal error: {exc!r}")
    finally:
        stdout.write(shown + "\n")
    return 0


def main(args: list[str]) -> int:
    """``toka statusline`` (and ``toka hook claude-code --statusline``) without Typer; entry.py
    sends ``--help`` to the Typer app."""
    stderr = sys.stderr
    if args:
        _note(stderr, USAGE)
        return 1
    if sys.stdin is not None and sys.stdin.isatty():
        _note(stderr, "expects the status line's JSON on stdin; " + USAGE)
        return 1
    return show(sys.stdin.buffer.read() if sys.stdin is not None else b"", sys.stdout, stderr)
