"""`toka doctor`'s look at what the running daemon reports of itself in `status`: whether it signs
the log (docs/tamper-evidence.md) and what of the heads file it did not trust, the events its
tables could not apply and skipped (docs/json.md, `projections`), and whether it serves the
OpenTelemetry receiver the config asks for (docs/otel.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from daemon.client.doctor import CLOCK_TIMEOUT_S
from daemon.client.sync import Client
from daemon.paths import Paths
from store.errors import TokaError
from toka_cli.doctor_check import Check
from toka_cli.watch_views import agents_line, history_line

if TYPE_CHECKING:
    from daemon.contract.results import Status


def status_checks(paths: Paths, listen: str) -> list[Check]:
    """The heads, tables, otel and agents checks, from one `status` call. ``listen``: the config's
    otel.listen ("" when unset)."""
    if not paths.socket.exists():
        return [
            Check("heads", "ok", "the daemon is not running; it checks its heads when it starts"),
            Check("tables", "ok", "the daemon is not running; it applies the log to its tables when it starts"),
            _otel_unasked(listen, "the daemon is not running; it serves it when it starts"),
            Check("agents", "ok", "the daemon is not running; it follows the agents' folders when it starts"),
        ]
    try:
        with Client(paths, autostart=False, timeout=CLOCK_TIMEOUT_S) as client:
            status = cast("Status", client.call("status"))
    except TokaError as exc:
        unasked = f"not asked: {exc.message}"
        return [
            Check("heads", "ok", unasked),
            Check("tables", "ok", unasked),
            _otel_unasked(listen, unasked),
            Check("agents", "ok", unasked),
        ]
    return [_heads(status), _tables(status), _otel(status, listen), _agents(status)]


def _agents(status: Status) -> Check:
    """Which of the agents' folders the daemon follows, and whether their history is imported."""
    watch = status.get("watch")
    agents = None if watch is None else watch.get("agents")
    if watch is None or agents is None:
        return Check("agents", "ok", "the agents' folders are not followed (watch.agents is off)")
    line = agents_line(agents)
    if not any(folder["found"] for folder in agents):
        return Check("agents", "ok", line)
    return Check("agents", "ok", f"{line}; {history_line(watch['history'])}")


def _otel_unasked(listen: str, why: str) -> Check:
    if not listen:
        return Check("otel", "ok", OTEL_OFF)
    return Check("otel", "ok", f"otel.listen is {listen}; {why}")


OTEL_OFF = "the OpenTelemetry receiver is off (otel.listen is not set)"
RESTART = "toka daemon restart"


def _otel(status: Status, listen: str) -> Check:
    """A receiver the config asks for must be served: an agent pointed at it loses what it sends."""
    otel = status.get("otel")
    if not listen:
        if otel is not None and otel.get("listen"):
            served = f"the daemon serves {otel['listen']}, which otel.listen no longer sets"
            return Check("otel", "warning", served, RESTART)
        return Check("otel", "ok", OTEL_OFF)
    if otel is None:
        return Check("otel", "problem", f"otel.listen is {listen}, but the running daemon started without it", RESTART)
    if otel.get("error"):
        return Check("otel", "problem", f"otel.listen is {listen}, but it is not served: {otel['error']}", RESTART)
    received = f"{otel.get('requests', 0)} requests, {otel.get('refused', 0)} refused"
    return Check("otel", "ok", f"the OpenTelemetry receiver serves {otel['listen']} ({received})")


def _heads(status: Status) -> Check:
    heads = status.get("heads")
    if heads is None:
        return Check("heads", "ok", "no heads are signed (store.signed_heads is off, or the log is in memory)")
    if heads.get("refused"):
        return Check(
            "heads",
            "problem",
            f"the daemon refuses to sign the log: {heads['refused']}",
            "toka verify; once you know why, toka heads --reset --yes",
        )
    if heads.get("untrusted"):
        return Check(
            "heads",
            "problem",
            f"{heads['untrusted']} lines at the end of {heads['file']} are not heads signed by this key",
            "toka verify names them; move the heads file aside only once you know who wrote them",
        )
    signed = "none yet" if heads["size"] is None else f"the latest covers {heads['size']} events"
    return Check("heads", "ok", f"signing: {signed}")


def _tables(status: Status) -> Check:
    """An event a table could not apply is skipped, never fatal: the daemon goes on, but what the
    table answers lacks that event, so it is a warning to look at, not a failure."""
    projections = status.get("projections") or {"skipped": 0, "recent": []}
    if not projections["skipped"]:
        return Check("tables", "ok", "every event since the daemon started was applied to its tables")
    last = projections["recent"][-1] if projections["recent"] else None
    latest = (
        ""
        if last is None
        else f"; the latest: seq {last['seq']} ({last['kind']}, {last['projection']}): {last['reason']}"
    )
    return Check(
        "tables",
        "warning",
        f"{_events(projections['skipped'])} not be applied to the daemon's tables, and skipped{latest}",
        "toka status --json lists the last ten; toka events SESSION shows them in the log",
    )


def _events(count: int) -> str:
    return "1 event could" if count == 1 else f"{count} events could"
