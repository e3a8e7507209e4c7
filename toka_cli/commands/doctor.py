"""`toka doctor`: check the daemon, socket, database, disk, config, watched paths, integrations and clocks."""

from __future__ import annotations

from typing import Any

import typer

from daemon.paths import resolve_paths
from store.errors import TokaError
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit

_STYLES = {"ok": "green", "warning": "yellow", "problem": "bold red"}


def doctor(json_: JsonOpt = False) -> None:
    """Check that toka works here, and name the command that fixes each problem found.

    Looks at the daemon (running, same version), the socket's permissions, the database
    (SQLite quick_check, schema version, no events from the future; on PostgreSQL the
    connection, server version, schema steps and the rights of the daemons' role), free disk
    space, the config, the watched paths, what `toka integrate` installed (Claude Code's hooks,
    toka's MCP server, which must answer, Codex's notify) and the daemon's clock. Never starts the
    daemon or changes anything. Exit code 0 when nothing is wrong (warnings allowed), 1 when
    something is.
    """
    from toka_cli.doctor import problems, run_checks

    checks = run_checks(resolve_paths())
    found = problems(checks)
    emit({"ok": not found, "checks": [check.to_json() for check in checks]}, json_, _report)
    if found:
        names = ", ".join(check.name for check in found)
        raise TokaError(f"{len(found)} of {len(checks)} checks found a problem ({names})", "each check names its fix")


def _report(document: dict[str, Any]) -> None:
    from rich.text import Text

    checks = document["checks"]
    width = max(len(check["name"]) for check in checks)
    for check in checks:
        status = check["status"]
        line = Text.assemble((f"{status:<8}", _STYLES[status]), f"{check['name']:<{width}}  ", check["detail"])
        if check["fix"] and status != "ok":
            line.append(f"; fix: {check['fix']}")
        elif check["fix"]:
            line.append(f"; add with: {check['fix']}")
        console().print(line, highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
