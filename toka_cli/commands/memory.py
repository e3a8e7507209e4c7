"""`toka memory set|get|list|rm|history|watch`: the memory of scoped entries."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from daemon.contract.kinds import Kind
from store.errors import UsageError
from toka_cli.base import make_app
from toka_cli.call import call_and_show, connection
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit, emit_lines, print_view
from toka_cli.render import short_ts, table

if TYPE_CHECKING:
    from daemon.contract.results import Event, MemoryEntry, MemoryList

app = make_app("Durable scoped memory: global, agent:<id>, session:<name>, trace:<id>.", name="memory")
ScopeArg = Annotated[str, typer.Argument(help="global, agent:<id>, session:<name> or trace:<id>.")]
KeyArg = Annotated[str, typer.Argument(help="The key within the scope.")]
ExpectOpt = Annotated[
    int | None,
    typer.Option("--expect-version", min=0, help="Only if the key is at this version (0: not set); else exit 6."),
]


def _value(text: str) -> Any:
    raw = sys.stdin.read() if text == "-" else text
    try:
        return json.loads(raw, parse_constant=_not_a_number, parse_float=_finite)
    except ValueError as exc:
        raise UsageError(f"the value is not JSON: {exc}", "quote a string as JSON: '\"some text\"'") from None


def _not_a_number(word: str) -> Any:
    """NaN, Infinity and -Infinity, which Python's JSON reads and JSON itself has no words for."""
    raise UsageError(f"the value is not JSON: {word} is not a JSON number", f"store it as a string: '\"{word}\"'")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise UsageError(f"the value is not JSON: {text} is not a finite number", "store it as a string")
    return number


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@app.command("set")
def set_(
    scope: ScopeArg,
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="A JSON value, or - to read it from stdin.")],
    expect_version: ExpectOpt = None,
    ttl: Annotated[
        float | None, typer.Option(help="Forget it after this many seconds (more than 0, at most 10 years).")
    ] = None,
    pin: Annotated[
        bool | None, typer.Option("--pin/--unpin", help="Put it first in `toka context` (as it was when not given).")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Set a key to a JSON value; each change gets the next version."""
    args: dict[str, Any] = {"scope": scope, "key": key, "value": _value(value)}
    args |= {k: v for k, v in {"expect_version": expect_version, "ttl": ttl, "pinned": pin}.items() if v is not None}
    with connection() as client:  # not call(): the value may be null, which call() leaves out
        entry: MemoryEntry = client.call("memory.set", **args)
    emit(entry, json_, lambda stored: typer.echo(f"{scope} {key} = version {stored['version']}", err=True))


@app.command()
def get(scope: ScopeArg, key: KeyArg, json_: JsonOpt = False) -> None:
    """A key's value (as JSON); --json adds its version, pin and times."""
    call_and_show("memory.get", json_, lambda entry: typer.echo(_shown(entry["value"])), scope=scope, key=key)


@app.command("list")
def list_(
    scope: Annotated[str | None, typer.Argument(help="Only this scope.")] = None,
    prefix: Annotated[str, typer.Option(help="Only keys starting so.")] = "",
    pinned: Annotated[bool, typer.Option("--pinned", help="Only pinned entries.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Live entries, by scope and key (expired and deleted ones are left out)."""
    call_and_show("memory.list", json_, _entries, prefix=prefix, scope=scope or None, pinned=pinned or None)


def _entries(result: MemoryList) -> None:
    grid = table("scope", "key", "version", "pinned", "set", "value")
    for entry in result["entries"]:
        value = _shown(entry["value"])
        grid.add_row(
            entry["scope"],
            entry["key"],
            str(entry["version"]),
            "yes" if entry["pinned"] else "",
            short_ts(entry["set_ts"]),
            value if len(value) <= 60 else value[:59] + "…",
        )
    print_view(grid)


@app.command("rm")
def rm(scope: ScopeArg, key: KeyArg, expect_version: ExpectOpt = None, json_: JsonOpt = False) -> None:
    """Delete a key (its history stays in the log)."""

    def deleted(result: dict[str, Any]) -> None:
        typer.echo(f"{scope} {key} deleted (version {result['version']})", err=True)

    call_and_show("memory.delete", json_, deleted, scope=scope, key=key, expect_version=expect_version)


@app.command()
def history(scope: ScopeArg, key: KeyArg, json_: JsonOpt = False) -> None:
    """Every change of a key, oldest first."""
    call_and_show("memory.history", json_, _history, scope=scope, key=key)


def _history(found: dict[str, Any]) -> None:
    for change in found["changes"]:
        console().print(
            f"{short_ts(change['ts'])}  v{change['version']}  {_what(change)}", highlight=False, markup=False
        )


def _what(change: dict[str, Any]) -> str:
    return "deleted" if change["kind"] == Kind.MEMORY_DELETE else _shown(change.get("value"))


@app.command()
def watch(
    scope: Annotated[str | None, typer.Argument(help="Only this scope.")] = None,
    key: Annotated[str | None, typer.Argument(help="Only this key.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Print changes as they commit, until Ctrl-C."""
    with connection() as client:
        changes = client.subscribe(session="toka.memory", kinds=["memory.*"])
        emit_lines(_changes(changes, scope, key), json_, _change_line)


def _changes(events: Iterator[Event], scope: str | None, key: str | None) -> Iterator[dict[str, Any]]:
    """Each change of the scope and key watched: its event's payload with its seq, time and kind."""
    for event in events:
        payload = event["payload"]
        if (scope and payload.get("scope") != scope) or (key and payload.get("key") != key):
            continue
        yield {"seq": event["seq"], "ts": event["ts"], "kind": event["kind"], **payload}


def _change_line(change: dict[str, Any]) -> None:
    line = f"{short_ts(change['ts'])}  {change['scope']} {change['key']} v{change['version']}  {_what(change)}"
    console().print(line, highlight=False, markup=False)
