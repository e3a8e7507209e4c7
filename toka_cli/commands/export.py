"""`toka export`: a session as toka's JSON lines (`toka export SESSION`, the import format), or
sessions as OpenTelemetry traces sent to a collector (`toka export otel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.base import TokaGroup, make_app
from toka_cli.call import call_and_show
from toka_cli.commands.transfer import export as export_jsonl
from toka_cli.options import JsonOpt, SinceOpt, UntilOpt
from toka_cli.output import console, note
from toka_cli.render import when

if TYPE_CHECKING:
    from daemon.contract.results import OtelExport


class ExportGroup(TokaGroup):
    """`toka export SESSION` is the JSON-lines export it always was: a first argument that names
    no subcommand goes to `jsonl` (a session named like a subcommand: `toka export jsonl NAME`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["jsonl", *args]
        return list(super().parse_args(ctx, args))


app = make_app(
    "Export sessions: as toka's JSON lines (toka export SESSION), or as OpenTelemetry traces (toka export otel).",
    name="export",
    cls=ExportGroup,
)

SessionsArg = Annotated[
    list[str] | None,
    typer.Argument(help="Sessions (names or unique prefixes); none: every session with events in the time given."),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="The collector's OTLP/HTTP URL, e.g. http://127.0.0.1:4318 (/v1/traces is added);"
        " default: export.otlp.endpoint, with its headers.",
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option("--header", help="NAME=VALUE sent with each request, e.g. 'authorization=Bearer KEY' (repeatable)."),
]
ContentOpt = Annotated[
    bool | None,
    typer.Option(
        "--include-content/--no-content",
        help="Also send prompts, messages and tool input and output, redacted (default: export.otlp.include_content).",
    ),
]


def headers_of(given: list[str] | None) -> dict[str, str] | None:
    if not given:
        return None
    headers = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r} is not NAME=VALUE", "e.g. --header 'authorization=Bearer KEY'")
        headers[name.strip()] = value.strip()
    return headers


@app.command("otel")
def otel(
    sessions: SessionsArg = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    endpoint: EndpointOpt = None,
    header: HeaderOpt = None,
    include_content: ContentOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Send sessions to an OpenTelemetry collector as GenAI traces (OTLP/HTTP, protobuf).

    A session is a trace, each agent a span (the main agent the root), each model request and
    tool call a child span with its tokens and cost; lifecycle changes and handoffs are span
    events. Ids derive from the log's, so exporting again sends the same spans. Payload text is
    sent only with --include-content, redacted. docs/otel.md says what is sent.
    """
    call_and_show(
        "export.otel",
        json_,
        _sent,
        progress_label="exporting",
        endpoint=endpoint,
        sessions=sessions or [],
        since=when(since, "--since"),
        until=when(until, "--until"),
        headers=headers_of(header),
        include_content=include_content,
    )


def _sent(summary: OtelExport) -> None:
    console().print(
        f"sent {summary['spans']} spans of {summary['sessions']} sessions to {summary['endpoint']}"
        f" ({summary['requests']} requests, {summary['tool_calls']} tool calls, {summary['agents']} agents)"
    )
    if summary["dropped"]:
        note(f"the collector refused {summary['dropped']} spans")
    if summary["skipped_requests"]:
        note(f"{summary['skipped_requests']} requests reported by both a transcript and telemetry were sent once")


app.command("jsonl")(export_jsonl)
