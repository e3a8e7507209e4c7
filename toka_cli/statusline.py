"""`toka statusline`: Claude Code's status line, in one short line and one round trip.

Claude Code runs its ``statusLine`` command after every turn with the session's JSON on stdin
(shared/docs/real-clients.md). This sends it to the daemon as the ``statusline`` event it
becomes (``statusline`` op: recorded, and its context window taken in) and prints what the
answer says::

    Opus 4.6 · ctx 55% (90k left) · session $1.23 · block $4.56, 2h 13m left · 5h 23% resets 1h26m

the model, the context fill and the headroom to the window (Claude Code's own figure of the
moment when its input has one), what the session cost, the active 5-hour block's cost and time
left, and how much of each window of the plan's limits is used and when it resets (when Claude
Code passes ``rate_limits``). ``toka hook claude-code --statusline``, the older
spelling that settings.json files may still name, runs this same command (toka_cli/entry.py
sends both here). Like the hook it runs on the fast path: the standard library and the
client's connection, no Typer, no Rich, one request, and the hook's own way to the daemon and
number formats (toka_cli/hook.py). When the daemon cannot take the input it is spooled, as a
hook's payload is (docs/hooks.md), and the line shows Claude Code's own figures. It always
prints one line and exits 0.
"""

from __future__ import annotations

import os
import sys
import time

from daemon.contract.states import AT_RISK
from store.errors import TokaError
from toka_cli.hook import STATUSLINE, delivered, dollars, hook_event, percent, tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

USAGE = "usage: toka statusline < session.json (Claude Code's statusLine command)"
# What the line says when it has nothing to show: no input, or a bug.
NO_FIGURES = "toka · no figures yet"
# The windows of the plan's limits Claude Code passes in ``rate_limits``, as the line names them.
LIMIT_NAMES = {"five_hour": "5h", "seven_day": "7d", "seven_day_opus": "7d opus", "seven_day_sonnet": "7d sonnet"}


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


def line(figures: dict[str, Any] | None, payload: dict[str, Any] | None, now: float | None = None) -> str:
    """The status line: toka's figures when the daemon answered, else Claude Code's own; the
    context is the agent's own figure when its input has one (the daemon takes it in too). The
    session's cost is Claude Code's while toka has counted none of its calls. Then the plan's
    limits, when Claude Code passes them."""
    parts = [name] if (name := _model(figures, payload)) else []
    fill = _fill(figures) if figures else None
    parts += [fill] if fill else [shown] if (shown := _reported_fill(payload)) else []
    spent = (figures.get("session_cost") or {}) if figures else {}
    if spent.get("calls"):
        parts.append(f"session {dollars(spent.get('cost_usd'))}" + ("*" if spent.get("unpriced_calls") else ""))
    elif (theirs := _claude_cost(payload)) is not None:
        parts.append(f"session {dollars(theirs)}")
    block = figures.get("block") if figures else None
    if isinstance(block, dict):
        parts.append(f"block {dollars(block.get('cost_usd'))}, {_time_left(block.get('remaining_minutes') or 0)}")
    parts += _limits(payload, time.time() if now is None else now)
    return " · ".join(parts) if parts else NO_FIGURES


def _fill(figures: dict[str, Any]) -> str | None:
    pct, context, window = figures.get("fill_pct"), figures.get("context_tokens"), figures.get("context_window")
    if not (isinstance(pct, (int, float)) and isinstance(context, int) and isinstance(window, int)):
        return None
    state = figures.get("state")
    flag = f" {state}" if state in AT_RISK else ""
    return f"ctx {percent(pct)} ({tokens(max(window - context, 0))} left){flag}"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _reported_fill(payload: dict[str, Any] | None) -> str | None:
    """Claude Code's own context percentage and headroom, from the input."""
    window = payload.get("context_window") if isinstance(payload, dict) else None
    if not isinstance(window, dict) or (used := _number(window.get("used_percentage"))) is None:
        return None
    size = _number(window.get("context_window_size"))
    left = f" ({tokens(max(round(size * (100 - used) / 100), 0))} left)" if size else ""
    return f"ctx {percent(used)}{left}"


def _claude_cost(payload: dict[str, Any] | None) -> float | None:
    cost = payload.get("cost") if isinstance(payload, dict) else None
    return _number(cost.get("total_cost_usd")) if isinstance(cost, dict) else None


def _limits(payload: dict[str, Any] | None, now: float) -> list[str]:
    """``5h 23% resets 1h26m``, one for each window of the plan's limits the input carries."""
    limits = payload.get("rate_limits") if isinstance(payload, dict) else None
    shown = []
    for name, window in limits.items() if isinstance(limits, dict) else ():
        used = _number(window.get("used_percentage")) if isinstance(window, dict) else None
        if used is None:
            continue
        text = f"{LIMIT_NAMES.get(name, str(name).replace('_', ' '))} {percent(used)}"
        resets = _epoch(window.get("resets_at"))
        if resets is not None and resets > now:
            text += f" resets {_span(resets - now)}"
        shown.append(text)
    return shown


def _epoch(value: Any) -> float | None:
    """A reset time as Claude Code gives it: seconds since the epoch (or an ISO-8601 time)."""
    if isinstance(value, str):
        from datetime import datetime

        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return _number(value)


def _span(seconds: float) -> str:
    """``42m``, ``1h26m``, ``3d4h``."""
    minutes = max(int(seconds // 60), 1)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


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
