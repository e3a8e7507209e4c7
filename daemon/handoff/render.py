"""A handoff document three ways: markdown for people, a continuation prompt for the next agent,
JSON for scripts.

The markdown opens with YAML front matter (the subject and the validity footer's fields, each
value JSON-quoted, which YAML reads as it is), then numbered sections; a section with nothing in
it is left out and the numbers close up, so the reader never scrolls past empty headings. It is
plain CommonMark: lists and inline code only, readable in a terminal and on a code host.

The prompt is short on purpose: it goes into a fresh context window. It says who the reader is
and whom it succeeds, what was asked, where things stand, what is left, what was decided and
must not be reopened, what failed and must not be retried as it was, which files changed, and
what to do first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from daemon.handoff.document import FileChange, Handoff, Note, Request, Todo, ToolError
from store.events import format_ts

# How many items of a list the prompt shows before it says how many more there are.
PROMPT_TODOS = 12
PROMPT_NOTES = 10
PROMPT_FILES = 20
PROMPT_FAILURES = 8
_MARKS = {"completed": "x", "done": "x", "in_progress": "~"}


def render_json(document: Handoff) -> dict[str, Any]:
    """The documented JSON shape (docs/json.md, "Handoff document")."""
    return document.to_json()


def _yaml(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines()] or [">"]


def _short(event: str) -> str:
    return f"`{event[:12]}`"


def _note(note: Note) -> str:
    reason = f" (because: {_one_line(note.reason)})" if note.reason else ""
    return f"- {_one_line(note.text)}{reason} {_short(note.event)}"


def _todo(todo: Todo) -> str:
    return f"- [{_MARKS.get(todo.status, ' ')}] {_one_line(todo.text)} ({todo.status})"


def _file(change: FileChange) -> str:
    outcome = {True: "ok", False: "FAILED", None: "no result yet"}[change.ok]
    failed = f", {change.failed} failed" if change.failed else ""
    return (
        f"- `{change.path}`: {change.action}, {change.writes} write(s){failed}, "
        f"last by {change.tool}: {outcome} {_short(change.event)}"
    )


def _error(error: ToolError) -> str:
    what = f"{error.tool}" + (f" ({error.summary})" if error.summary else "") if error.tool else "error"
    after = "recovered: a later call succeeded" if error.recovered else "not recovered"
    return f"- {what} at {format_ts(error.ts)}: {_one_line(error.text)[:200]} ({after}) {_short(error.event)}"


def _request(request: Request | None) -> list[str]:
    if request is None:
        return []
    return [*_quote(request.text), "", f"{_short(request.event)} at {format_ts(request.ts)}"]


def _sections(doc: Handoff) -> list[tuple[str, list[str]]]:
    task: list[str] = []
    if doc.request is not None and (doc.original_request is None or doc.request.event != doc.original_request.event):
        task += ["Latest request:", "", *_request(doc.request)]
    if doc.status is not None:
        task += (["", "Latest agent message:", ""] if task else ["Latest agent message:", ""]) + _request(doc.status)
    if task and doc.subject.state:
        task += ["", f"State: {doc.subject.state}"]
    decisions = [_note(n) for n in doc.decisions]
    if doc.rejected:
        decisions += ["", "Rejected alternatives:", "", *(_note(n) for n in doc.rejected)]
    files = [_file(f) for f in doc.files]
    if doc.files_omitted:
        files.append(f"- and {doc.files_omitted} more")
    in_progress = [_todo(t) for t in doc.in_progress] + [
        f"- waiting for the result of {c.tool}"
        + (f": {_one_line(c.summary)}" if c.summary else "")
        + f" {_short(c.event)}"
        for c in doc.pending
    ]
    todos = [_todo(t) for t in doc.todos]
    if todos and doc.todos_event:
        todos += ["", f"From {_short(doc.todos_event)}."]
    tools = [
        "| tool | uses | failures | last use | last error |",
        "|---|---:|---:|---|---|",
        *(
            f"| {t.tool} | {t.uses} | {t.failures} | {format_ts(t.last_ts)} {_short(t.last_event)} | "
            + ("" if t.last_error is None else _one_line(t.last_error.text)[:80].replace("|", "\\|"))
            + " |"
            for t in doc.tools
        ),
    ]
    assumptions = [_note(n) for n in doc.assumptions]
    if doc.constraints:
        assumptions += (["", "Constraints:", ""] if assumptions else []) + [_note(n) for n in doc.constraints]
    errors = [_error(e) for e in doc.errors]
    if doc.error_count > len(doc.errors):
        errors.append(f"- and {doc.error_count - len(doc.errors)} earlier")
    usage: list[str] = []
    if doc.usage:
        fill = doc.usage.get("fill_pct")
        usage = [
            f"- context: {doc.usage.get('context_tokens')} of {doc.usage.get('context_window')} tokens"
            + ("" if fill is None else f" ({fill}%)"),
            f"- model: {doc.usage.get('model')}",
            f"- input {doc.usage.get('input_tokens', 0)}, output {doc.usage.get('output_tokens', 0)}, "
            f"cache write {doc.usage.get('cache_creation_tokens', 0)}, "
            f"cache read {doc.usage.get('cache_read_tokens', 0)}",
        ]
    progress = doc.progress
    progress_lines = (
        [f"{progress.done} of {progress.total} to-dos done ({progress.pct}%)."]
        if progress.total
        else ([f"State: {progress.state}."] if progress.state else [])
    )
    references = [f"- `{r['event']}` ({r['section']})" for r in doc.references()]
    return [
        ("Original request", _request(doc.original_request)),
        ("Task and status", task),
        ("Decisions", decisions),
        ("Work completed", files),
        ("Work in progress", in_progress),
        ("To-do list", todos),
        ("Tool state", tools if doc.tools else []),
        ("Assumptions and constraints", assumptions),
        ("Dependencies", [_note(n) for n in doc.dependencies]),
        ("Errors and recovery", errors),
        ("Token usage", usage),
        ("Task progress", progress_lines),
        ("References", references),
    ]


def render_markdown(doc: Handoff) -> str:
    subject = doc.subject
    front = {
        "toka": "handoff",
        "format": doc.to_json()["format"],
        **subject.to_json(),
        "head": doc.head,
        "events": doc.events,
        "digest": doc.digest,
    }
    lines = ["---", *(f"{key}: {_yaml(value)}" for key, value in front.items()), "---", ""]
    lines.append(f"# Handoff: {subject.agent} v{subject.version}")
    lines.append("")
    lines.append(
        f"Session `{subject.session}`"
        + (f", trace `{subject.trace}`" if subject.trace else "")
        + (f", succeeding `{subject.predecessor}`" if subject.predecessor else "")
        + (f". Reason: {subject.reason}." if subject.reason else ".")
    )
    number = 0
    for title, body in _sections(doc):
        if not body:
            continue
        number += 1
        lines += ["", f"## {number}. {title}", "", *body]
    lines += [
        "",
        "---",
        "",
        f"Built from {doc.events} events up to `{doc.head}`" + (f" (seq {doc.head_seq})" if doc.head_seq else "") + ".",
        f"Digest (blake3): `{doc.digest}`",
        "",
    ]
    return "\n".join(lines)


def _capped(items: list[str], limit: int, more: Callable[[int], str]) -> list[str]:
    if len(items) <= limit:
        return items
    return [*items[:limit], more(len(items) - limit)]


def render_prompt(doc: Handoff) -> str:
    """The continuation prompt: what the next agent reads first."""
    subject = doc.subject
    kind = " ".join(part for part in (subject.type, subject.role) if part) or "agent"
    where = f"session `{subject.session}`" + (f" of trace `{subject.trace}`" if subject.trace else "")
    lines = [
        f"You are the next {kind} (version {subject.version + 1}), taking over {where} "
        f"from agent `{subject.agent}` (version {subject.version}"
        + (f", model {subject.model}" if subject.model else "")
        + ")"
        + (f", which stopped because: {subject.reason}." if subject.reason else "."),
        "Its work is summarised below; the log holds the rest (the cited ids are toka event ids).",
    ]

    def block(title: str, body: list[str]) -> None:
        if body:
            lines.extend(["", f"## {title}", *body])

    if doc.original_request is not None:
        block("Original request", [doc.original_request.text])
    status: list[str] = []
    if doc.request is not None and (doc.original_request is None or doc.request.event != doc.original_request.event):
        status.append(f"Latest request: {doc.request.text}")
    if doc.status is not None:
        status.append(f"Last report: {_one_line(doc.status.text)}")
    if doc.progress.total:
        status.append(f"Progress: {doc.progress.done}/{doc.progress.total} to-dos done.")
    elif doc.progress.state:
        status.append(f"State: {doc.progress.state}.")
    block("Status", status)
    open_todos = [t for t in doc.todos if t.status not in ("completed", "done")]
    block(
        "To-dos",
        _capped([_todo(t) for t in open_todos], PROMPT_TODOS, lambda n: f"- ... and {n} more"),
    )
    block(
        "Decided (do not revisit)",
        _capped([_note(n) for n in doc.decisions][::-1], PROMPT_NOTES, lambda n: f"- ... and {n} earlier"),
    )
    failures = [_note(n) for n in doc.rejected][::-1] + [_error(e) for e in doc.errors if not e.recovered][::-1]
    block(
        "Paths not to retry (rejected or failed)",
        _capped(failures, PROMPT_NOTES + PROMPT_FAILURES, lambda n: f"- ... and {n} more"),
    )
    block("Assumptions and constraints", [_note(n) for n in (*doc.constraints, *doc.assumptions)][:PROMPT_NOTES])
    files = [f"- `{f.path}` ({f.action}{'' if f.ok is not False else ', last write FAILED'})" for f in doc.files]
    block("Files touched", _capped(files, PROMPT_FILES, lambda n: f"- ... and {n} more"))
    block("What to do first", [_first_step(doc)])
    lines += ["", f"(handoff {doc.digest[:16]}, built from {doc.events} events up to {doc.head})"]
    return "\n".join(lines) + "\n"


def _first_step(doc: Handoff) -> str:
    if doc.in_progress:
        return f"Finish the to-do in progress: {_one_line(doc.in_progress[0].text)}"
    if doc.pending:
        call = doc.pending[-1]
        what = _one_line(call.summary) or call.call_id
        return f"Check whether the last {call.tool} call finished ({what}): its result never arrived."
    unrecovered = [e for e in doc.errors if not e.recovered]
    if unrecovered:
        return f"Look into the unrecovered failure: {_error(unrecovered[-1])[2:]}"
    pending = [t for t in doc.todos if t.status not in ("completed", "done")]
    if pending:
        return f"Start the next to-do: {_one_line(pending[0].text)}"
    return "Check the latest request against the work completed, then confirm with the user before doing more."
