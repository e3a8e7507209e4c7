"""`toka deps add|rm|show|order`: what each agent or workstream needs, and the order work can run in."""

from __future__ import annotations

from typing import Annotated

import typer

from daemon.client.sync import Client
from toka_cli.base import make_app
from toka_cli.options import JsonOpt
from toka_cli.output import console, note, print_json
from toka_cli.render import table

app = make_app("Dependencies between agents or workstreams: a graph kept acyclic, run in waves.", name="deps")
NodeArg = Annotated[str, typer.Argument(help="An agent, workstream or any name.")]
NeedsOpt = Annotated[list[str], typer.Option("--needs", help="A node it needs (repeatable).")]


@app.command()
def add(node: NodeArg, needs: NeedsOpt, json_: JsonOpt = False) -> None:
    """Record that NODE needs others; an edge that would close a cycle is refused (exit 6)."""
    with Client() as client:
        result = client.call("deps.add", node=node, needs=needs)
    if json_:
        print_json(result)
    elif result["added"]:
        note(f"{node} needs {', '.join(result['added'])}")
    else:
        note(f"{node} already needs {', '.join(needs)}: nothing stored")


@app.command("rm")
def rm(node: NodeArg, needs: NeedsOpt, json_: JsonOpt = False) -> None:
    """Drop edges; an edge that is not there is an error (exit 3) and nothing is stored."""
    with Client() as client:
        result = client.call("deps.remove", node=node, needs=needs)
    if json_:
        print_json(result)
    else:
        note(f"{node} no longer needs {', '.join(result['removed'])}")


@app.command()
def show(json_: JsonOpt = False) -> None:
    """Every edge: node and what it needs."""
    with Client() as client:
        edges = client.call("deps.list")["edges"]
    if json_:
        print_json({"edges": edges})
        return
    grid = table("node", "needs")
    for edge in edges:
        grid.add_row(edge["node"], edge["needs"])
    console().print(grid)


@app.command()
def order(json_: JsonOpt = False) -> None:
    """The nodes in waves: wave 0 needs nothing, each wave needs only earlier ones; a wave runs in parallel."""
    with Client() as client:
        result = client.call("deps.order")
    if json_:
        print_json(result)
        return
    for number, wave in enumerate(result["waves"]):
        typer.echo(f"wave {number}: {' '.join(wave)}")


def register(app_: typer.Typer) -> None:
    app_.add_typer(app)
