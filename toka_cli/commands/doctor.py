"""`toka doctor`: check the daemon, socket, database, disk, config, watched paths, hooks and clocks."""

from __future__ import annotations

import typer

from daemon.paths import resolve_paths
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_json

_STYLES = {"ok": "green", "warning": "yellow", "problem": "bold red"}


def doctor(json_: JsonOpt = False) -> None:
    """Check that toka works here, and name the command that fixes each problem found.

    Looks at the daemon (running, same version), the socket's permissions, the database
    (SQLite quick_check, schema version, no events from the future), free disk space, the
    config, the watched paths, Claude Code hooks and the daemon's clock. Never starts the
    daemon or changes anything. Exit code 0 when nothing is wrong (warnings allowed), 1 when
    something is.
    """
    from rich.text import Text

    from toka_cli.doctor import problems, run_checks

    checks = run_checks(resolve_paths())
    ok = not problems(checks)
    if json_:
        print_json({"ok": ok, "checks": [check.to_json() for check in checks]})
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            line = Text.assemble(
                (f"{check.status:<8}", _STYLES[check.status]), f"{check.name:<{width}}  ", check.detail
            )
            if check.fix and check.status != "ok":
                line.append(f"; fix: {check.fix}")
            elif check.fix:
                line.append(f"; to add them: {check.fix}")
            console().print(line, highlight=False)
    raise typer.Exit(0 if ok else 1)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
