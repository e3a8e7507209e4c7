"""`toka alerts`: what the daemon alerted about (docs/cost.md), and a test of `[alerts] command`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from daemon.contract.kinds import Kind
from store.errors import NotFound
from toka_cli.call import call, connection
from toka_cli.options import JsonOpt, LimitOpt, SinceOpt
from toka_cli.output import console, emit, emit_lines
from toka_cli.render import short_ts, when

SESSION = "toka.alerts"
STYLES = {"critical": "bold red", "warning": "yellow", "info": "dim"}


def _line(alert: dict[str, Any]) -> None:
    from rich.text import Text

    style = STYLES.get(alert.get("level", ""), "")
    level = Text(f"{alert.get('level', '-'):<8}", style=style)
    ran = {"rate_limited": " (command rate-limited)", "busy": " (command skipped: busy)"}.get(
        alert.get("command", ""), ""
    )
    console().print(Text(f"{short_ts(alert['ts'])}  ") + level + Text(f"  {alert.get('message', '')}{ran}"))


def _listed(found: dict[str, Any]) -> None:
    if not found["alerts"]:
        console().print("no alerts")
    for alert in found["alerts"]:
        _line(alert)


def alerts(
    since: SinceOpt = None,
    limit: LimitOpt = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Then keep printing alerts as they come.")] = False,
    test: Annotated[bool, typer.Option("--test", help="Raise a test alert, which runs [alerts] command.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Alerts: agents that went WARNING or CRITICAL, 5-hour blocks over their limits; oldest first."""
    if test:
        emit(call("alerts.test"), json_, _line)
        return
    if not follow:
        emit(call("alerts.list", since=when(since, "--since"), limit=limit), json_, _listed)
        return
    with connection() as client:
        asked: dict[str, Any] = {k: v for k, v in {"since": when(since, "--since"), "limit": limit}.items() if v}
        found = client.call("alerts.list", **asked)
        emit_lines(found["alerts"], json_, _line)
        last = max((a["seq"] for a in found["alerts"]), default=None)
        if last is None:  # none shown: follow from the log's head, not from the first alert
            try:
                last = int(client.call("sessions.get", session=SESSION)["last_seq"])
            except NotFound:
                last = 0
        stream = client.subscribe(session=SESSION, kinds=[Kind.ALERT], after_seq=last)
        emit_lines(({"seq": e["seq"], "id": e["id"], "ts": e["ts"], **e["payload"]} for e in stream), json_, _line)


def register(app: typer.Typer) -> None:
    app.command()(alerts)
