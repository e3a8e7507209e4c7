"""What the screens say once an action is done: the notification for each op's answer.

An action (:meth:`toka_cli.tui.widgets.TokaScreen.act`) calls an op, then hands the answer to
one of these; what it returns is shown as a notification. The overview and the session screen
offer the same actions, so they say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.contract.results import Agent, Compression, Handoff, VerifyReport
    from toka_cli.tui.widgets import TokaScreen


def compressed(result: Compression) -> str:
    if not result.get("stored"):
        return "nothing to compress"
    return f"compressed events {result['first_seq']}-{result['last_seq']}: {result['tokens_saved']:,} tokens saved"


def handed_off(result: Handoff) -> str:
    return f"handoff {result['id'][:12]} created (2: Handoffs)"


def changed_state(agent: Agent) -> str:
    return f"{agent['id']} is {agent['state']}"


def verified(screen: TokaScreen, report: VerifyReport) -> str | None:
    """A clean log is a notification; problems are a modal, since they need reading."""
    from toka_cli.tui.modals import ErrorScreen

    if report["ok"]:
        return f"verified {report['events']:,} events: the log is intact"
    lines = [
        f"the database file: {p['detail']}"
        if p["seq"] == 0
        else f"seq {p['seq']} {p['session']}: {p['what']}: {p['detail']}"
        for p in report["problems"][:10]
    ]
    screen.app.push_screen(
        ErrorScreen(f"{report['problem_count']} problems\n" + "\n".join(lines), title="verify found problems")
    )
    return None
