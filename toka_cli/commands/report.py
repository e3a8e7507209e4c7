"""`toka report daily|weekly|monthly|session|blocks`: what the agents' usage cost (docs/cost.md)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from daemon.client.zone import local_timezone
from store.errors import UsageError
from toka_cli.base import make_app
from toka_cli.call import call_and_show, connection
from toka_cli.completers import choices
from toka_cli.cost_views import FORMATS, report_view
from toka_cli.history import wait_for_history
from toka_cli.options import SOURCES, JsonOpt, project_arg
from toka_cli.output import console, emit_lines

app = make_app(
    "Usage and what it cost, over every session, agent and source in the log: by day, week, month, session or"
    " 5-hour block.",
    name="report",
)

ReportSinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="First day counted: the day of a time given as a date (2026-05-01), today, yesterday, an age (2h, 7d,"
        " 2w) or '3 days ago'; all when left out.",
    ),
]
ReportUntilOpt = Annotated[str | None, typer.Option("--until", help="Last day counted, in the same forms.")]
ZoneOpt = Annotated[
    str | None,
    typer.Option("--timezone", "-z", help="Time zone the days are read in (Europe/Paris, UTC, +05:30); the local one."),
]
SourceOpt = Annotated[
    str | None,
    typer.Option(
        "--source", help="Only sessions of this agent: claude-code, codex, toka.", autocompletion=choices(*SOURCES)
    ),
]
ProjectOpt = Annotated[
    str | None,
    typer.Option("--project", help="Only sessions run in this folder (a path, or under it) or repository (a name)."),
]
BreakdownOpt = Annotated[bool, typer.Option("--breakdown", help="Each model's share under each row.")]
FormatOpt = Annotated[
    str, typer.Option("--format", help="table, csv or markdown (--json for JSON).", autocompletion=choices(*FORMATS))
]


def show_report(kind: str, fmt: str, as_json: bool, **args: Any) -> None:
    if as_json and fmt != "table":
        raise UsageError("--json and --format are two outputs", "give one of them")
    for name in ("since", "until"):
        if args.get(name) is not None:
            check_time(args[name], f"--{name}")  # the daemon reads it into a day of the report's zone
    render = report_view(fmt)
    if kind == "blocks" and fmt == "table":
        from toka_cli.block_views import blocks_table

        render = blocks_table
    wait_for_history()
    call_and_show("report", as_json, render, kind=kind, timezone=args.pop("timezone") or local_timezone(), **args)


def check_time(value: str, option: str) -> None:
    """A UsageError naming ``option`` when ``value`` is none of the forms of a time."""
    import time

    from daemon.contract.times import moment

    moment(value, time.time(), None, option)


def _period_command(kind: str, help: str) -> None:
    def command(
        since: ReportSinceOpt = None,
        until: ReportUntilOpt = None,
        timezone: ZoneOpt = None,
        source: SourceOpt = None,
        project: ProjectOpt = None,
        breakdown: BreakdownOpt = False,
        format_: FormatOpt = "table",
        json_: JsonOpt = False,
    ) -> None:
        _show_period(kind, format_, json_, since, until, timezone, source, project, breakdown)

    command.__doc__ = help
    app.command(kind)(command)


_period_command("daily", "Usage and cost per day, with the totals.")
_period_command("weekly", "Usage and cost per week (from Monday), with the totals.")
_period_command("monthly", "Usage and cost per month, with the totals.")
CompareOpt = Annotated[
    str | None,
    typer.Option(
        "--compare",
        help="telemetry: per session and model, toka's price of the requests the agent's telemetry reported beside"
        " the agent's own cost_usd, and the difference in % (docs/otel.md).",
    ),
]


@app.command("session")
def session(
    since: ReportSinceOpt = None,
    until: ReportUntilOpt = None,
    timezone: ZoneOpt = None,
    source: SourceOpt = None,
    project: ProjectOpt = None,
    breakdown: BreakdownOpt = False,
    compare: CompareOpt = None,
    format_: FormatOpt = "table",
    json_: JsonOpt = False,
) -> None:
    """Usage and cost per session, with its source, project and agents, and the totals."""
    if compare is not None:
        from toka_cli.compare_views import compare_table

        if format_ != "table" or breakdown:
            raise UsageError("--compare shows a table or --json", "leave out --format and --breakdown")
        zone = timezone or local_timezone()
        for value, option in ((since, "--since"), (until, "--until")):
            if value is not None:
                check_time(value, option)
        call_and_show("report.compare", json_, compare_table, against=compare, since=since, until=until,
                      timezone=zone, source=source, project=project_arg(project))  # fmt: skip
        return
    _show_period("session", format_, json_, since, until, timezone, source, project, breakdown)


def _show_period(
    kind: str,
    format_: str,
    json_: bool,
    since: str | None,
    until: str | None,
    timezone: str | None,
    source: str | None,
    project: str | None,
    breakdown: bool,
) -> None:
    """A report by day, week, month or session: the rows, or their JSON."""
    show_report(
        kind,
        format_,
        json_,
        since=since,
        until=until,
        timezone=timezone,
        source=source,
        project=project_arg(project),
        breakdown=breakdown or None,
    )


TokenLimitOpt = Annotated[
    str | None,
    typer.Option("--token-limit", help="Tokens a block may use (or max: the most a block used); shows the share used."),
]
CostLimitOpt = Annotated[
    str | None, typer.Option("--cost-limit", help="Dollars a block may cost (or max); shows the share used.")
]


@app.command("blocks")
def blocks(
    since: ReportSinceOpt = None,
    until: ReportUntilOpt = None,
    timezone: ZoneOpt = None,
    source: SourceOpt = None,
    project: ProjectOpt = None,
    token_limit: TokenLimitOpt = None,
    cost_limit: CostLimitOpt = None,
    breakdown: BreakdownOpt = False,
    live: Annotated[
        bool,
        typer.Option("--live", help="Then keep showing the active block, today's cost and the agents as usage comes."),
    ] = False,
    format_: FormatOpt = "table",
    json_: JsonOpt = False,
) -> None:
    """Claude's 5-hour billing blocks: usage and cost of each, and the active one's burn rate and projection."""
    if live:
        if format_ != "table":
            raise UsageError("--live shows a table, or JSON lines with --json", "leave --format out")
        live_blocks(timezone or local_timezone(), source, _limit(token_limit), _limit(cost_limit), json_)
        return
    show_report(
        "blocks",
        format_,
        json_,
        since=since,
        until=until,
        timezone=timezone,
        source=source,
        project=project_arg(project),
        breakdown=breakdown or None,
        token_limit=_limit(token_limit),
        cost_limit=_limit(cost_limit),
    )


def _limit(value: str | None) -> int | float | str | None:
    """A limit as the daemon takes it: a number, or max (anything else it refuses, saying why)."""
    if value is None or value == "max":
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    return int(number) if number.is_integer() else number


def live_blocks(timezone: str, source: str | None, token_limit: Any, cost_limit: Any, as_json: bool) -> None:
    """The live summary from the daemon's cost.live stream: redrawn in place on a terminal, one
    JSON line (or one rendering) per update otherwise; until Ctrl-C."""
    from toka_cli.block_views import summary_view

    args = {"timezone": timezone, "source": source, "token_limit": token_limit, "cost_limit": cost_limit}
    with connection() as client:
        updates = (m["summary"] for m in client.stream("cost.live", **{k: v for k, v in args.items() if v is not None}))
        try:
            if as_json or not sys.stdout.isatty():
                emit_lines(updates, as_json, lambda summary: console().print(summary_view(summary)))
                return
            from rich.live import Live

            with Live(console=console(), auto_refresh=False) as screen:
                for summary in updates:
                    screen.update(summary_view(summary), refresh=True)
        except KeyboardInterrupt:
            return
