"""`toka events`, `toka replay` and `toka record`: reading and writing a session's events."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import NotFound, UsageError
from toka_cli.call import connection
from toka_cli.gists import gist
from toka_cli.options import (
    ExcludeKindOpt,
    JsonOpt,
    KindOpt,
    LimitOpt,
    SessionArg,
    SinceOpt,
    UntilOpt,
    kind_patterns,
)
from toka_cli.output import console, emit, emit_lines, note, plain, styled
from toka_cli.render import short_ts, when

if TYPE_CHECKING:
    from daemon.contract.results import Event


def _line(event: Event) -> None:
    agent = event["agent"] or "-"
    what = gist(event["kind"], event["payload"])
    line = f"{event['seq']:>7}  {short_ts(event['ts'])}  {agent:<12}  {event['kind']:<14}  {what}"
    sys.stdout.write(plain(line) + "\n")
    sys.stdout.flush()  # --follow: each event as it commits


def events(
    session: SessionArg,
    kind: KindOpt = None,
    exclude_kind: ExcludeKindOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    last: Annotated[
        bool, typer.Option("--last", help="With --limit, the newest events instead of the oldest.")
    ] = False,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Then keep printing events as they commit.")] = False,
    json_: JsonOpt = False,
) -> None:
    """List a session's events, oldest first; with --json, one JSON object per line."""
    kinds = kind_patterns(kind, exclude_kind)
    query: dict[str, Any] = {
        "session": session,
        "kinds": kinds,
        "since": when(since, "--since"),
        "until": when(until, "--until"),
    }
    query = {k: v for k, v in query.items() if v not in (None, [])}
    with connection() as client:
        head = None
        started = True
        if follow:
            # List up to the head as it is now, then stream from just after it: no gap, no repeat.
            try:
                head = int(client.call("sessions.get", session=session)["last_seq"])
            except NotFound:  # a session that has not started yet: wait for its first event
                head, started = 0, False
            query["before_seq"] = head + 1
        found: Iterator[Event] = (
            client.iter_events(**query, limit=limit, order="desc" if last else "asc") if started else iter(())
        )
        if last:
            found = iter(reversed(list(found)))
        emit_lines(found, json_, _line)
        if head is not None:
            emit_lines(client.subscribe(session=session, kinds=kinds, after_seq=head), json_, _line)


def replay(
    session: SessionArg,
    to: Annotated[
        str | None, typer.Option("--to", help="Stop at this event: a seq number or an event id (prefix).")
    ] = None,
    kind: KindOpt = None,
    exclude_kind: ExcludeKindOpt = None,
    all_kinds: Annotated[
        bool, typer.Option("--all", help="Show raw records too (the transcript hides them unless --kind names them).")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """The session as it stood at a point, in order: a readable transcript, or JSON lines.

    Each lifecycle change comes right after the event that caused it (the usage that crossed a
    threshold), also when it was appended later, as after an import's batch. The transcript
    leaves out raw records (what toka kept of lines it does not map, such as progress), saying
    how many; --all shows them. --json prints every event unless --kind or --exclude-kind says
    otherwise.
    """
    from daemon.client.replay import RAW, replay_lines

    kinds = kind_patterns(kind, exclude_kind)
    hide_raw = not (kinds or all_kinds or json_)
    with connection() as client:
        to_seq = None
        if to is not None:
            point = client.call("events.get", **({"seq": int(to)} if to.isdigit() else {"id": to}))
            to_seq = int(point["seq"])
            if not any(client.iter_events(session=session, after_seq=to_seq - 1, before_seq=to_seq + 1, limit=1)):
                raise UsageError(
                    f"event {to} is not in session {session} (it is in {point['session']})",
                    f"toka events {session} lists the session's events",
                )
        emit_lines(replay_lines(client, session, to_seq, [f"!{RAW}"] if hide_raw else kinds), json_, _transcript_entry)
        if hide_raw:
            up_to: dict[str, Any] = {} if to_seq is None else {"before_seq": to_seq + 1}
            hidden = client.call("events.count", session=session, kinds=[RAW], **up_to)["events"]
            if hidden:
                note(f"{hidden:,} raw record{'s' if hidden != 1 else ''} left out (toka replay --all shows them)")


def _transcript_entry(event: Event) -> None:
    who = f" {plain(event['agent'])}" if event["agent"] else ""
    when = styled(f"{short_ts(event['ts'])} #{event['seq']}", "dim")
    head = f"{when}{who} {styled(plain(event['kind']), 'bold')}"
    sys.stdout.write(f"{head}\n  {plain(gist(event['kind'], event['payload'], width=400))}\n")


def _read_payloads(payload: str | None) -> list[tuple[str, Any]]:
    """Each payload given, with where it was given (``stdin line 3``)."""
    if payload is not None and payload != "-":
        text, source = payload, "the PAYLOAD argument"
    else:
        text, source = sys.stdin.read(), "stdin"
    try:
        items = [(source, json.loads(text))]  # one JSON value, on one line or pretty-printed over many
    except ValueError:
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"{source} line {number}", json.loads(line)))
            except ValueError as exc:
                raise UsageError(
                    f"{source} line {number} is not JSON ({exc}); nothing was recorded",
                    'give one JSON object per line, e.g. {"text": "hi"}',
                ) from None
    if not items:
        raise UsageError(f"{source} is empty", "give a JSON object, or JSON lines on stdin")
    return items


def record(
    session: SessionArg,
    kind: Annotated[str, typer.Argument(help="Dotted kind, e.g. message, tool.call, note.decision.")],
    payload: Annotated[
        str | None, typer.Argument(help="JSON object; '-' or nothing reads stdin (JSON lines: a batch).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="The agent this event belongs to.")] = None,
    key: Annotated[str | None, typer.Option(help="Idempotency key: appending it again changes nothing.")] = None,
    ts: Annotated[
        str | None,
        typer.Option(
            help="When it happened, in the forms of --since (ISO-8601, '2026-12-01 14:00', 5m); now by default."
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Append an event (or a batch, one JSON payload per line on stdin) to a session.

    A payload too large for one request (daemon.max_line_bytes) is stored truncated, with the
    digest of the whole; it is named on stderr and the exit code is then 1.
    """
    from daemon.client.appends import append_all

    items = _read_payloads(payload)
    if key is not None and len(items) > 1:
        raise UsageError("--key names one event, but stdin holds several", "put a key in each event instead")
    fields = {k: v for k, v in {"agent": agent, "key": key, "ts": when(ts, "--ts")}.items() if v is not None}
    events = [{"session": session, "kind": kind, "payload": p, **fields} for _, p in items]
    with connection() as client:
        # Each request is atomic; a batch larger than one request commits request by request.
        appended = append_all(client, events)
    emit({"events": [result for _, result in appended]}, json_, _recorded)
    cut = [(where, prepared.truncation) for (where, _), (prepared, _) in zip(items, appended, strict=True)]
    for where, truncation in cut:
        if truncation is not None:
            note(f"{where}: {truncation.reason()}")
    if any(truncation is not None for _, truncation in cut):
        raise typer.Exit(1)


def _recorded(answer: dict[str, list[dict[str, Any]]]) -> None:
    results = answer["events"]
    created = sum(1 for r in results if r["created"])
    first, last_ = results[0], results[-1]
    span = f"seq {first['seq']}" if len(results) == 1 else f"seq {first['seq']}..{last_['seq']}"
    note = "" if created == len(results) else f" ({len(results) - created} already recorded)"
    console().print(f"recorded {created} event{'s' if created != 1 else ''}, {span}, head {last_['id'][:12]}{note}")


def register(app: typer.Typer) -> None:
    app.command()(events)
    app.command()(replay)
    app.command()(record)
