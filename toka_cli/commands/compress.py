"""`toka compress`, `toka context` and `toka blob show`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from daemon.contract.policies import CompressionPolicy, choices_of, spoken
from store.errors import UsageError
from toka_cli.base import make_app
from toka_cli.call import call, call_and_show
from toka_cli.completers import choices
from toka_cli.options import JsonOpt, TargetArg
from toka_cli.output import console, note, print_json, print_view
from toka_cli.render import key_values

if TYPE_CHECKING:
    from daemon.contract.results import Compression, WorkingContext

POLICIES = choices_of(CompressionPolicy)
POLICY_HELP = f"{spoken(CompressionPolicy)} (default: compression.policy)."
CONTEXT_FORMATS = ("messages", "text", "json")
blob_app = make_app("Payloads by digest: what a summary elided as [blob DIGEST SIZE].", name="blob")


def compress(
    session: TargetArg,
    policy: Annotated[str | None, typer.Option(help=POLICY_HELP, autocompletion=choices(*POLICIES))] = None,
    target: Annotated[
        float | None, typer.Option(min=1, max=99, help="Aim at this % of the window (default 37.5).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would happen; store nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Compress even within the rate limits.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Compress an agent's older events into a summary, without deleting or changing any.

    A session names its main agent; SESSION/NAME one of its subagents. Appends a `compression`
    event for a range of the agent's events in its session: the summary, the range, the
    policy, the tokens before and after. Refused (exit 6) when the session was compressed less
    than compression.min_interval_s ago or has fewer than compression.min_messages new
    messages, unless --force.
    """
    call_and_show(
        "compress",
        json_,
        _compressed,
        progress_label="reading the session",
        session=session,
        dry_run=dry_run,
        force=force,
        policy=policy,
        target_pct=target,
    )


def _compressed(result: Compression) -> None:
    if result["first_seq"] is None:
        note(
            f"nothing to compress for {result['agent']}: {result['tokens_before']:,} tokens fit the target of"
            f" {result['target_tokens']:,}"
        )
        return
    rows = [
        ("agent", result["agent"]),
        ("stored", f"yes, event {result['seq']}" if result["stored"] else "no (dry run)"),
        ("policy", result["policy"]),
        ("range", f"seq {result['first_seq']} to {result['last_seq']} ({result['events_in_range']} events)"),
        ("tokens", f"{result['tokens_before']:,} -> {result['tokens_after']:,} (target {result['target_tokens']:,})"),
        ("saved", f"{result['tokens_saved']:,} ({100 * (1 - result['ratio']):.0f}%)"),
        ("summarizer", _summarizer(result.get("summarizer"))),
    ]
    print_view(key_values(rows))
    if result.get("summary"):
        console().print("\n" + result["summary"], highlight=False, markup=False)


def _summarizer(used: dict[str, Any] | None) -> str:
    if used is None:
        return "-"
    if used.get("fallback"):
        return f"extractive (fell back: {used['fallback']['reason']})"
    return str(used.get("command") or used["kind"])


def context(
    session: TargetArg,
    budget: Annotated[int, typer.Option(min=1000, help="Tokens the context may take in all.")] = 100_000,
    policy: Annotated[
        str | None,
        typer.Option(help=POLICY_HELP + " Used when the history does not fit.", autocompletion=choices(*POLICIES)),
    ] = None,
    format_: Annotated[
        str,
        typer.Option("--format", help="messages, text or json (as --json).", autocompletion=choices(*CONTEXT_FORMATS)),
    ] = "messages",
    raw: Annotated[
        bool, typer.Option("--raw", help="Show the texts as recorded: no secrets or personal data redacted.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """The working context of an agent (a session: its main agent) as it should see it now, fitted to a budget.

    Secrets and personal data (redaction.kinds) are redacted from its texts, as it is meant to be
    handed to a model; --raw shows them as the log holds them.
    """
    format_ = "json" if json_ else format_
    if format_ not in CONTEXT_FORMATS:
        raise UsageError(f"unknown format {format_!r}", f"use one of: {', '.join(CONTEXT_FORMATS)}")
    result: WorkingContext = call(
        "context",
        progress_label="reading the session",
        session=session,
        budget=budget,
        policy=policy or None,
        raw=raw,
    )
    if format_ == "json":
        print_json(result)
    elif format_ == "messages":
        print_json(result["messages"])
    else:
        for message in result["messages"]:
            typer.echo(f"{message['role']}: {message['content']}\n")
    if format_ != "json":
        note(f"context of {result['agent']}: {len(result['messages'])} messages, {result['tokens']:,} tokens")
    if format_ != "json" and result["left_out"]:
        note(f"{len(result['left_out'])} events left out to fit {budget:,} tokens (see --json)")
    if format_ != "json" and (counts := result["redaction"]["counts"]):
        found = ", ".join(f"{kind} {count}" for kind, count in counts.items())
        total = sum(counts.values())
        note(f"{total} value{'s' if total != 1 else ''} redacted ({found}); --raw shows them")


@blob_app.command()
def show(
    digest: Annotated[str, typer.Argument(help="A payload's blake3 digest, or a unique prefix of one.")],
    json_: JsonOpt = False,
) -> None:
    """Print a stored payload, such as one a summary cites as [blob DIGEST SIZE]."""
    call_and_show("blobs.get", json_, _payload, digest=digest)


def _payload(blob: dict[str, Any]) -> None:
    typer.echo(json.dumps(blob["payload"], indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command()(compress)
    app.command()(context)
    app.add_typer(blob_app)
