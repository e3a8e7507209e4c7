"""`toka memory set|get|list|rm|history|watch`: the context store."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from daemon.client.sync import Client
from store.errors import UsageError
from toka_cli.base import make_app
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_json, print_json_line
from toka_cli.render import short_ts, table

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
        return json.loads(raw)
    except ValueError as exc:
        raise UsageError(f"the value is not JSON: {exc}", "quote a string as JSON: '\"some text\"'") from None


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@app.command("set")
def set_(
    scope: ScopeArg,
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="A JSON value, or - to read it from stdin.")],
    expect_version: ExpectOpt = None,
    ttl: Annotated[float | None, typer.Option(min=0, help="Forget it after this many seconds.")] = None,
    pin: Annotated[
        bool | None, typer.Option("--pin/--unpin", help="Put it first in `toka context` (as it was when not given).")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Set a key to a JSON value; each change gets the next version."""
    args: dict[str, Any] = {"scope": scope, "key": key, "value": _value(value)}
    optional = {"expect_version": expect_version, "ttl": ttl, "pinned": pin}
    args |= {k: v for k, v in optional.items() if v is not None}
    with Client() as client:
        entry = client.call("memory.set", **args)
    if json_:
        print_json(entry)
    else:
        typer.echo(f"{scope} {key} = version {entry['version']}", err=True)


@app.command()
def get(scope: ScopeArg, key: KeyArg, json_: JsonOpt = False) -> None:
    """A key's value (as JSON); --json adds its version, pin and times."""
    with Client() as client:
        entry = client.call("memory.get", scope=scope, key=key)
    if json_:
        print_json(entry)
    else:
        typer.echo(_shown(entry["value"]))


@app.command("list")
def list_(
    scope: Annotated[str | None, typer.Argument(help="Only this scope.")] = None,
    prefix: Annotated[str, typer.Option(help="Only keys starting so.")] = "",
    pinned: Annotated[bool, typer.Option("--pinned", help="Only pinned entries.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Live entries, by scope and key (expired and deleted ones are left out)."""
    args: dict[str, Any] = (
        {"prefix": prefix} | ({"scope": scope} if scope else {}) | ({"pinned": True} if pinned else {})
    )
    with Client() as client:
        entries = client.call("memory.list", **args)["entries"]
    if json_:
        print_json({"entries": entries})
        return
    grid = table("scope", "key", "version", "pinned", "set", "value")
    for entry in entries:
        value = _shown(entry["value"])
        grid.add_row(
            entry["scope"],
            entry["key"],
            str(entry["version"]),
            "yes" if entry["pinned"] else "",
            short_ts(entry["set_ts"]),
            value if len(value) <= 60 else value[:59] + "…",
        )
    console().print(grid)


@app.command("rm")
def rm(scope: ScopeArg, key: KeyArg, expect_version: ExpectOpt = None, json_: JsonOpt = False) -> None:
    """Delete a key (its history stays in the log)."""
    args: dict[str, Any] = {"scope": scope, "key": key} | (
        {"expect_version": expect_version} if expect_version is not None else {}
    )
    with Client() as client:
        result = client.call("memory.delete", **args)
    if json_:
        print_json(result)
    else:
        typer.echo(f"{scope} {key} deleted (version {result['version']})", err=True)


@app.command()
def history(scope: ScopeArg, key: KeyArg, json_: JsonOpt = False) -> None:
    """Every change of a key, oldest first."""
    with Client() as client:
        found = client.call("memory.history", scope=scope, key=key)
    if json_:
        print_json(found)
        return
    for change in found["changes"]:
        what = "deleted" if change["kind"] == "memory.delete" else _shown(change.get("value"))
        console().print(f"{short_ts(change['ts'])}  v{change['version']}  {what}", highlight=False, markup=False)


@app.command()
def watch(
    scope: Annotated[str | None, typer.Argument(help="Only this scope.")] = None,
    key: Annotated[str | None, typer.Argument(help="Only this key.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Print changes as they commit, until Ctrl-C."""
    with Client() as client:
        for event in client.subscribe(session="toka.memory", kinds=["memory.*"]):
            payload = event["payload"]
            if (scope and payload.get("scope") != scope) or (key and payload.get("key") != key):
                continue
            if json_:
                print_json_line({"seq": event["seq"], "ts": event["ts"], "kind": event["kind"], **payload})
            else:
                what = "deleted" if event["kind"] == "memory.delete" else _shown(payload.get("value"))
                line = f"{short_ts(event['ts'])}  {payload['scope']} {payload['key']} v{payload['version']}  {what}"
                console().print(line, highlight=False, markup=False)
