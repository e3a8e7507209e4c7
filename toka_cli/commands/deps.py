"""`toka deps add|rm|show|order`: what each agent or workstream needs, and the order work can run in."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt
from toka_cli.output import note, print_view
from toka_cli.render import table

app = make_app("Dependencies between agents or workstreams: a graph kept acyclic, run in waves.", name="deps")
NodeArg = Annotated[str, typer.Argument(help="An agent, workstream or any name.")]
NeedsOpt = Annotated[list[str], typer.Option("--needs", help="A node it needs (repeatable).")]


@app.command()
def add(node: NodeArg, needs: NeedsOpt, json_: JsonOpt = False) -> None:
    """Record that NODE needs others; an edge that would close a cycle is refused (exit 6)."""

    def added(result: dict[str, Any]) -> None:
        if result["added"]:
            note(f"{node} needs {', '.join(result['added'])}")
        else:
            note(f"{node} already needs {', '.join(needs)}: nothing stored")

    call_and_show("deps.add", json_, added, node=node, needs=needs)


@app.command("rm")
def rm(node: NodeArg, needs: NeedsOpt, json_: JsonOpt = False) -> None:
    """Drop edges; an edge that is not there is an error (exit 3) and nothing is stored."""

    def removed(result: dict[str, Any]) -> None:
        note(f"{node} no longer needs {', '.join(result['removed'])}")

    call_and_show("deps.remove", json_, removed, node=node, needs=needs)


@app.command()
def show(json_: JsonOpt = False) -> None:
    """Every edge: node and what it needs."""
    call_and_show("deps.list", json_, _edges)


def _edges(result: dict[str, Any]) -> None:
    grid = table("node", "needs")
    for edge in result["edges"]:
        grid.add_row(edge["node"], edge["needs"])
    print_view(grid)


@app.command()
def order(json_: JsonOpt = False) -> None:
    """The nodes in waves: wave 0 needs nothing, each wave needs only earlier ones; a wave runs in parallel."""
    call_and_show("deps.order", json_, _waves)


def _waves(result: dict[str, Any]) -> None:
    for number, wave in enumerate(result["waves"]):
        typer.echo(f"wave {number}: {' '.join(wave)}")


def register(app_: typer.Typer) -> None:
    app_.add_typer(app)
