"""`toka state get|set|history|list|machines|register`: entities moving through declared state machines."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.base import make_app
from toka_cli.call import call_and_show, connection
from toka_cli.completers import complete_targets
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit, note, print_view
from toka_cli.render import key_values, short_ts, table

app = make_app(
    "State machines: the state of agents, sessions and workstreams, every change an event.\n\n"
    "Built in: agent (INITIALIZING, READY, EXECUTING_TASK, ...) and session (phases with progress);"
    " more in config.toml ([state.machines.NAME]) or with `toka state register`.",
    name="state",
)
MachineArg = Annotated[str, typer.Argument(help="A state machine: agent, session, or one declared or registered.")]
EntityArg = Annotated[
    str, typer.Argument(help="Whose state: an agent id, a session name, any name.", autocompletion=complete_targets)
]


def _progress(value: float | None) -> str:
    return "-" if value is None else f"{value:g}%"


def _show(entry: dict[str, Any]) -> None:
    rows = [
        ("machine", entry["machine"]),
        ("entity", entry["entity"]),
        ("state", entry["state"]),
        ("progress", _progress(entry["progress"])),
        ("since", short_ts(entry["since"]) if entry["since"] else "never changed"),
        ("changes", entry["history_len"]),
    ]
    print_view(key_values(rows))


@app.command()
def get(machine: MachineArg, entity: EntityArg, json_: JsonOpt = False) -> None:
    """The entity's current state (its machine's initial state until it first changes)."""
    call_and_show("state.get", json_, _show, machine=machine, entity=entity)


@app.command("set")
def set_(
    machine: MachineArg,
    entity: EntityArg,
    to: Annotated[str, typer.Argument(help="The state to move to; the machine must allow it.")],
    reason: Annotated[str | None, typer.Option(help="Why, in words; kept in the history.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Move an entity to another state; a transition its machine does not allow is refused (exit 6)."""
    call_and_show("state.set", json_, _moved, machine=machine, entity=entity, to=to, reason=reason or None)


def _moved(entry: dict[str, Any]) -> None:
    if entry["changed"]:
        typer.echo(f"{entry['entity']}: {entry['from']} -> {entry['state']}")
    else:
        note(f"{entry['entity']} is already {entry['state']}: nothing stored")


@app.command()
def history(machine: MachineArg, entity: EntityArg, json_: JsonOpt = False) -> None:
    """Every change of the entity's state in that machine, oldest first."""
    call_and_show("state.history", json_, _history, machine=machine, entity=entity)


def _history(entry: dict[str, Any]) -> None:
    grid = table("seq", "time", "from", "to", "progress", "reason")
    for change in entry["changes"]:
        when = short_ts(change["ts"])
        progress = _progress(change["progress"])
        grid.add_row(str(change["seq"]), when, change["from"], change["to"], progress, change["reason"] or "")
    print_view(grid)


@app.command("list")
def list_(
    machine: Annotated[str | None, typer.Argument(help="Only this machine.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Every entity whose state has changed, by machine."""
    call_and_show("state.list", json_, _entities, machine=machine or None)


def _entities(result: dict[str, Any]) -> None:
    grid = table("machine", "entity", "state", "progress", "since")
    for entry in result["entities"]:
        since = short_ts(entry["since"]) if entry["since"] else "-"
        grid.add_row(entry["machine"], entry["entity"], entry["state"], _progress(entry["progress"]), since)
    print_view(grid)


@app.command()
def machines(json_: JsonOpt = False) -> None:
    """The state machines: states, where each may go, progress, and where each was declared."""
    call_and_show("state.machines", json_, _machines)


def _machines(result: dict[str, Any]) -> None:
    for machine in result["machines"]:
        console().print(f"{machine['name']} ({machine['source']}), starts {machine['initial']}", highlight=False)
        for state in machine["states"]:
            pct = machine["progress"].get(state)
            targets = ", ".join(machine["transitions"].get(state, [])) or "final"
            label = state + (f" ({pct:g}%)" if pct is not None else "")
            console().print(f"  {label} -> {targets}", highlight=False)


@app.command("register")
def register_(
    file: Annotated[Path, typer.Argument(help="A TOML file of [state.machines.NAME] tables, as in config.toml.")],
    json_: JsonOpt = False,
) -> None:
    """Register the machines a TOML file declares (or redefine ones registered before)."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{file} is not valid TOML: {exc}") from None
    declared = data.get("state", {}).get("machines") if isinstance(data.get("state"), dict) else None
    if not isinstance(declared, dict) or not declared:
        raise UsageError(f"{file} declares no machine", "write [state.machines.NAME] tables (docs/state.md)")
    registered = []
    with connection() as client:
        for name, definition in declared.items():
            if not isinstance(definition, dict):
                raise UsageError(f"state.machines.{name} must be a table")
            registered.append(client.call("state.register", **(definition | {"name": name})))
    emit({"machines": registered}, json_, _registered)


def _registered(result: dict[str, list[dict[str, Any]]]) -> None:
    for machine in result["machines"]:
        typer.echo(f"{machine['name']}: {'registered' if machine['changed'] else 'unchanged'}")


def register(app_: typer.Typer) -> None:
    app_.add_typer(app)
