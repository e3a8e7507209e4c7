"""`toka handoff create|show|list|chain|stats|verify` and `toka note`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from daemon.contract.policies import NoteKind, choices_of, spoken
from store.errors import IntegrityError, UsageError
from toka_cli.base import make_app
from toka_cli.call import call, call_and_show
from toka_cli.completers import choices
from toka_cli.options import JsonOpt, TargetArg
from toka_cli.output import console, emit, note, print_json, print_view
from toka_cli.render import key_values, percent, short_ts, table

if TYPE_CHECKING:
    from daemon.contract.results import Handoff, HandoffChain, HandoffCheck, HandoffList, HandoffSummary

app = make_app("Handoff documents: build, show, list, walk a trace's chain, check against the log.", name="handoff")
IdArg = Annotated[str, typer.Argument(help="A handoff id (its event id), or a unique prefix of one.")]
FORMATS = ("markdown", "prompt", "json")
NOTE_KINDS = choices_of(NoteKind)


@app.command()
def create(
    target: TargetArg,
    write: Annotated[Path | None, typer.Option(help="Also write the markdown to this file.")] = None,
    force: Annotated[bool, typer.Option(help="Let --write replace an existing file.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Build an agent's handoff document from its events as they stand, store it, and print its markdown."""
    if write is not None and write.exists() and not force:
        raise UsageError(f"{write} exists", "add --force to replace it, or choose another --write path")
    handoff: Handoff = call("handoffs.create", target=target)
    if write is not None:
        write.write_text(handoff["markdown"], encoding="utf-8")
        note(f"wrote {write}")
    emit(handoff, json_, _created)


def _created(handoff: Handoff) -> None:
    typer.echo(handoff["markdown"], nl=False)
    note(f"handoff {handoff['id'][:12]} stored")


@app.command()
def show(
    handoff_id: IdArg,
    format_: Annotated[
        str, typer.Option("--format", help="markdown, prompt or json (as --json).", autocompletion=choices(*FORMATS))
    ] = "markdown",
    json_: JsonOpt = False,
) -> None:
    """Print a stored handoff: markdown for people, the continuation prompt, or its JSON."""
    format_ = "json" if json_ else format_
    if format_ not in FORMATS:
        raise UsageError(f"unknown format {format_!r}", f"use one of: {', '.join(FORMATS)}")
    handoff: Handoff = call("handoffs.get", id=handoff_id)
    if format_ == "json":
        print_json(handoff)
    else:
        typer.echo(handoff["markdown" if format_ == "markdown" else "prompt"], nl=False)


def _print_rows(rows: Sequence[HandoffSummary]) -> None:
    grid = table("handoff", "when", "trace", "from", "to", "reason", "fill", "active")
    for row in rows:
        grid.add_row(
            row["id"][:12],
            short_ts(row["ts"]),
            row["trace"] or "-",
            row["predecessor"] or "-",
            row["successor"] or "-",
            row["reason"] or "manual",
            percent(row["fill_pct"]),
            "yes" if row["active"] else "",
        )
    print_view(grid)


@app.command("list")
def list_(
    trace: Annotated[str | None, typer.Option(help="Only this trace.")] = None,
    active: Annotated[bool, typer.Option("--active", help="Only the latest handoff of each trace.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Stored handoffs, oldest first."""
    call_and_show("handoffs.list", json_, _listed, active=active, trace=trace or None)


def _listed(result: HandoffList) -> None:
    _print_rows(result["handoffs"])


@app.command()
def chain(trace: Annotated[str, typer.Argument(help="A trace id.")], json_: JsonOpt = False) -> None:
    """A trace: its agents by version and the handoffs between them."""
    call_and_show("handoffs.chain", json_, _chain, trace=trace)


def _chain(found: HandoffChain) -> None:
    for agent in found["agents"]:
        reason = f" ({agent['reason']})" if agent["reason"] else ""
        console().print(f"v{agent['version']}  {agent['id']}  {agent['state']}{reason}", highlight=False, markup=False)
    _print_rows(found["handoffs"])


@app.command()
def stats(json_: JsonOpt = False) -> None:
    """How many handoffs, by reason, and the average fill and completion at handoff."""
    call_and_show("handoffs.stats", json_, _stats)


def _stats(figures: dict[str, Any]) -> None:
    """The counts, the averages, then a row per reason, most frequent first."""

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    print_view(
        key_values(
            [
                ("handoffs", figures["handoffs"]),
                ("traces", figures["traces"]),
                ("average fill", pct(figures["average_fill_pct"])),
                ("average completion", pct(figures["average_completion_pct"])),
            ]
        )
    )
    if figures["by_reason"]:
        typer.echo("")
        grid = table("reason", "handoffs")
        for reason, count in sorted(figures["by_reason"].items(), key=lambda item: (-item[1], item[0])):
            grid.add_row(reason, str(count))
        print_view(grid)


@app.command()
def verify(handoff_id: IdArg, json_: JsonOpt = False) -> None:
    """Check that the document is intact and that the log still gives it; exit 5 if not."""
    report = call_and_show("handoffs.verify", json_, _checked, id=handoff_id)
    if not report["ok"]:
        raise IntegrityError(
            f"handoff {report['id'][:12]}: " + "; ".join(report["problems"]), "rebuild it with `toka handoff create`"
        )


def _checked(report: HandoffCheck) -> None:
    if report["ok"]:
        console().print(f"ok: handoff {report['id'][:12]} matches the log (digest {report['digest'][:16]})")


def note_(
    target: TargetArg,
    kind: Annotated[
        str,
        typer.Argument(help=f"{spoken(NoteKind)}.", autocompletion=choices(*NOTE_KINDS)),
    ],
    text: Annotated[str, typer.Argument(help="The note.")],
    reason: Annotated[str | None, typer.Option(help="Why: the reason for a decision, or for rejecting a path.")] = None,
    agent: Annotated[
        str | None, typer.Option(help="The agent of the session that notes it (default: its main agent).")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Add a note the agent's next handoff document lists: decisions, rejected paths, assumptions, constraints."""
    if kind not in NOTE_KINDS:
        raise UsageError(f"unknown note kind {kind!r}", f"use one of: {', '.join(NOTE_KINDS)}")
    call_and_show("notes.add", json_, _noted, target=target, kind=kind, text=text, reason=reason, agent=agent)


def _noted(noted: dict[str, Any]) -> None:
    note(f"noted {noted['kind'].removeprefix('note.')} for {noted['agent']} as event {noted['seq']}")


def register(app_: typer.Typer) -> None:
    app_.add_typer(app)
    app_.command("note")(note_)
