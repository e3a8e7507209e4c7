"""`toka pool stats|health|put|get|rm|list`: the daemon's memory pool (docs/pool.md)."""

from __future__ import annotations

import base64
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import NotFound, TokaError
from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt, LimitOpt
from toka_cli.output import note, print_view
from toka_cli.render import key_values, size, table

if TYPE_CHECKING:
    from daemon.contract.results import PoolStats

app = make_app(
    "The memory pool: short-lived working memory in the daemon, bounded in bytes, with time-to-live and"
    " least-recently-used eviction.",
    name="pool",
)
KeyArg = Annotated[str, typer.Argument(help="The entry's key (up to 1024 characters).")]


def _value_args(value: str) -> dict[str, Any]:
    """The value as the daemon takes it; ``-`` reads the bytes on stdin."""
    if value != "-":
        return {"value": value}
    data = sys.stdin.buffer.read()
    try:
        return {"value": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"value_b64": base64.b64encode(data).decode("ascii")}


def _ttl(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:g}s"


@app.command()
def put(
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="The value, or - to read its bytes from stdin.")],
    ttl: Annotated[
        float | None, typer.Option(min=0, help="Seconds it lives (0: expires at once); no expiry when left out.")
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Store a value under KEY, replacing what it held; least recently used entries make room.

    Exits 6 when the value does not fit the pool.
    """

    def stored(result: dict[str, Any]) -> None:
        evicted = f", {result['evicted']} evicted to make room" if result["evicted"] else ""
        if result["stored"]:
            expires = "never expires" if ttl is None else f"expires in {ttl:g}s"
            note(f"stored {key} ({size(result['size'])}, {expires}){evicted}")
        else:
            note(f"{key}: a ttl of 0 stores nothing")

    call_and_show("pool.put", json_, stored, key=key, ttl=ttl, **_value_args(value))


@app.command()
def get(key: KeyArg, json_: JsonOpt = False) -> None:
    """Print the value stored under KEY, as raw bytes (exit 3 when there is none)."""
    call_and_show("pool.get", json_, _raw_value, key=key)


def _raw_value(entry: dict[str, Any]) -> None:
    data = entry["value"].encode("utf-8") if "value" in entry else base64.b64decode(entry["value_b64"])
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


@app.command()
def rm(key: KeyArg, json_: JsonOpt = False) -> None:
    """Delete the entry under KEY; exits 3 when there was none."""

    def deleted(result: dict[str, Any]) -> None:
        if result["deleted"]:
            note(f"deleted {key}")

    if not call_and_show("pool.delete", json_, deleted, key=key)["deleted"]:
        raise NotFound(f"no pool entry {key}")


@app.command("list")
def list_(
    prefix: Annotated[str | None, typer.Argument(help="Only keys that start with this.")] = None,
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """The live entries, by key, without their values."""
    call_and_show("pool.list", json_, _entries, prefix=prefix, limit=limit)


def _entries(result: dict[str, Any]) -> None:
    grid = table("key", "size", "age", "ttl left", "hits")
    for entry in result["entries"]:
        grid.add_row(
            entry["key"], size(entry["size"]), f"{entry['age']:.1f}s", _ttl(entry["ttl_left"]), str(entry["hits"])
        )
    print_view(grid)
    if result["more"]:
        note(f"{len(result['entries'])} of {result['total']} entries shown; raise --limit for more")


@app.command()
def stats(json_: JsonOpt = False) -> None:
    """Fill, pressure level, high water, puts, hits, evictions and value sizes."""
    call_and_show("pool.stats", json_, _figures)


def _figures(figures: PoolStats) -> None:
    thresholds = figures["thresholds"]
    histogram = ", ".join(f"≤{size(int(b))} {n}" for b, n in figures["size_histogram"].items()) or "-"
    rows = [
        ("used", f"{size(figures['used_bytes'])} of {size(figures['capacity_bytes'])} ({figures['fill_pct']:g}%)"),
        ("level", f"{figures['level']} (warning {thresholds['warning_pct']}%, critical {thresholds['critical_pct']}%)"),
        ("high water", size(figures["high_water_bytes"])),
        ("entries", figures["entries"]),
        ("puts", "{accepted} accepted, {rejected} rejected".format(**figures["puts"])),
        ("gets", "{hits} hits, {misses} misses".format(**figures["gets"])),
        ("deletes", figures["deletes"]),
        ("evictions", "{expired} expired, {lru} least recently used".format(**figures["evictions"])),
        ("value sizes", histogram),
        ("sweeper", _sweeper(figures["sweeper"])),
    ]
    print_view(key_values(rows))


def _sweeper(sweeper: dict[str, Any]) -> str:
    if not sweeper["running"]:
        return "not running"
    return f"every {sweeper['interval_s']:g}s, {sweeper['sweeps']} sweeps"


@app.command()
def health(json_: JsonOpt = False) -> None:
    """What is wrong with the pool, in words: near capacity, many rejected puts, sweeper not running.

    Exit status: 0 when ok, 0 with a note on stderr at warning, 1 when critical.
    """
    report = call_and_show("pool.health", json_, _health)
    if report["level"] == "warning":
        note("the pool needs attention (exit status 0; 1 only when critical)")
    if report["level"] == "critical":
        raise TokaError("the pool is critical", "`toka pool stats` shows what fills it")


def _health(report: dict[str, Any]) -> None:
    typer.echo(report["level"])
    for problem in report["problems"]:
        typer.echo(f"  {problem['level']}: {problem['message']}")


def register(root: typer.Typer) -> None:
    root.add_typer(app)
