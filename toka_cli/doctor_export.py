"""`toka doctor`'s look at the forwarder (docs/otel.md, "Export"): off, sending, or not getting
its spans to the collector, and what that costs (events waiting in the log, spans refused)."""

from __future__ import annotations

from daemon.client.doctor import export_status
from daemon.paths import Paths
from store.errors import TokaError
from toka_cli.doctor_check import Check


def export_check(paths: Paths) -> Check:
    if not paths.socket.exists():
        return Check("export", "ok", "the daemon is not running")
    try:
        export = export_status(paths)
    except TokaError as exc:
        return Check("export", "ok", f"not asked: {exc.message}")
    if export is None:
        return Check("export", "ok", "off (export.otlp.endpoint is not set)")
    where = export["endpoint"]
    if export["error"]:
        return Check("export", "problem", f"not forwarding to {where}: {export['error']}", "toka daemon restart")
    if export["last_error"]:
        return Check(
            "export",
            "warning",
            f"{export['last_error']}; {export['behind']} events wait in the log for it",
            "start the collector or fix export.otlp.endpoint and headers; `toka status` shows the forwarder",
        )
    if export["dropped_spans"]:
        return Check(
            "export",
            "warning",
            f"{where} refused {export['dropped_spans']} spans for good since the daemon started",
            "see the collector's log; `toka export otel --since TIME` sends a time's spans again",
        )
    return Check("export", "ok", f"{where}: {export['sent_spans']} spans sent, {export['behind']} events behind")
