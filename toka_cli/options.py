"""Options shared by every command, so flags and help text read the same everywhere."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from store.errors import UsageError
from toka_cli.completers import complete_sessions, complete_targets

# The agents whose sessions toka reads, as --source names them.
SOURCES = ("claude-code", "codex", "toka")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (shapes in docs/json.md) instead of tables.")]
SessionArg = Annotated[
    str,
    typer.Argument(
        help="Session name, or a unique prefix of one (SESSION/NAME: the session of that agent).",
        autocompletion=complete_sessions,
    ),
]
TargetArg = Annotated[
    str,
    typer.Argument(
        help="A session or a unique prefix of one (its main agent), or an agent: SESSION/NAME, or its id.",
        autocompletion=complete_targets,
    ),
]
OptionalSessionArg = Annotated[
    str | None,
    typer.Argument(help="Session name or unique prefix; all sessions when left out.", autocompletion=complete_sessions),
]
LimitOpt = Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Show at most this many.")]
# Every --since and --until reads the one grammar of daemon/contract/times.py.
TIME_HELP = "an age (30m, 2h, 7d, 2w), a date or time (2026-12-01, '2026-12-01 14:00'), today, yesterday, '3 days ago'"
SinceOpt = Annotated[str | None, typer.Option(help=f"Only events at or after this time: {TIME_HELP}.")]
UntilOpt = Annotated[str | None, typer.Option(help="Only events before this time, in the same forms as --since.")]
KindOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--kind", "-k", help="Only this kind (repeatable); 'tool.*' matches a family, '!raw' leaves a kind out."
    ),
]
ExcludeKindOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude-kind", help="Leave this kind out (repeatable; 'tool.*': a family), as --kind '!KIND'."),
]


def kind_patterns(kinds: list[str] | None, excluded: list[str] | None = None) -> list[str]:
    """The kinds of --kind and --exclude-kind as the daemon reads them: ``tool.*``, ``!raw``."""
    patterns = [k.strip() for k in kinds or []] + [f"!{k.strip().removeprefix('!')}" for k in excluded or []]
    for pattern in patterns:
        if pattern.removeprefix("!") in ("", "*", ".*") or pattern.startswith("!!"):
            raise UsageError(
                f"--kind {pattern!r} names no kind", "name one: --kind message, --kind 'tool.*', --kind '!raw'"
            )
    return patterns


def project_arg(value: str | None) -> str | None:
    """A ``--project`` given as ``.``, ``~/x`` or ``a/b`` made absolute; a bare name kept (a
    folder's or a repository's)."""
    if value is None or not (value.startswith((".", "~", "/")) or "/" in value):
        return value
    return os.path.abspath(os.path.expanduser(value))
