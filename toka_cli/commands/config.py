"""`toka config show|get|set|path`."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from daemon.paths import resolve_paths
from toka_cli.base import make_app
from toka_cli.completers import choices
from toka_cli.options import JsonOpt
from toka_cli.output import emit, note, print_view
from toka_cli.render import table

app = make_app("Read and write config.toml (precedence: flag, env TOKA_*, file, default).", name="config")
KeyArg = Annotated[
    str,
    typer.Argument(
        help="A setting, e.g. store.durability (or just durability).",
        autocompletion=choices(load=lambda: _setting_keys()),
    ),
]


def _setting_keys() -> list[str]:
    from daemon.sections import SECTIONS

    return [SECTIONS.key_of(name) for name in SECTIONS.by_name]


@app.command()
def show(
    json_: JsonOpt = False,
    toml: Annotated[
        bool, typer.Option("--toml", help="Print the resolved settings as a config.toml document (secrets hidden).")
    ] = False,
) -> None:
    """Every setting with its resolved value and where it came from."""
    from daemon.config_file import load_settings
    from daemon.sections import SECTIONS  # loaded by the commands that read config.toml only

    resolved = load_settings(SECTIONS, resolve_paths().config_file)
    if toml:
        import tomli_w

        document: dict[str, Any] = {}
        for name in SECTIONS.by_name:
            *tables, key = SECTIONS.key_of(name).split(".")
            value = SECTIONS.shown(name, resolved.settings.value(name))
            table = document
            for part in tables:
                table = table.setdefault(part, {})
            table[key] = list(value) if isinstance(value, tuple) else value
        typer.echo(tomli_w.dumps(document), nl=False)
        return
    rows = [
        {
            "key": SECTIONS.key_of(name),
            "value": SECTIONS.shown(name, resolved.settings.value(name)),
            "source": resolved.sources[name],
            "help": SECTIONS.by_name[name].metadata["help"],
            "allowed": SECTIONS.allowed(name),
        }
        for name in SECTIONS.by_name
    ]
    emit({"settings": rows}, json_, _settings)


def _settings(document: dict[str, list[dict[str, Any]]]) -> None:
    grid = table("key", "value", "source")
    for row in document["settings"]:
        grid.add_row(row["key"], _shown(row["value"], ", "), row["source"])
    print_view(grid)


@app.command()
def get(key: KeyArg, json_: JsonOpt = False) -> None:
    """One setting's resolved value."""
    from daemon.config_file import load_settings
    from daemon.sections import SECTIONS

    name = SECTIONS.lookup(key)
    resolved = load_settings(SECTIONS, resolve_paths().config_file)
    value = SECTIONS.shown(name, resolved.settings.value(name))
    setting = {"key": SECTIONS.key_of(name), "value": value, "source": resolved.sources[name]}
    emit(setting, json_, lambda shown: typer.echo(_shown(shown["value"], "\n")))


@app.command("set")
def set_(key: KeyArg, value: Annotated[str, typer.Argument(help="The new value.")]) -> None:
    """Write one setting to config.toml, keeping the rest of the file. A running daemon reads it on restart."""
    from daemon.config_file import write_setting
    from daemon.sections import SECTIONS

    path = resolve_paths().config_file
    checked = write_setting(SECTIONS, path, key, value)
    name = SECTIONS.lookup(key)
    note(f"set {SECTIONS.key_of(name)} = {_shown(SECTIONS.shown(name, checked), ', ')} in {path}")


def _shown(value: object, separator: str) -> str:
    """A value for people: a list or table as its items (one per line for `get`, for scripts)."""
    if isinstance(value, dict):
        return separator.join(f"{k}={v if isinstance(v, int) else json.dumps(v)}" for k, v in value.items())
    if isinstance(value, bool):
        return str(value).lower()  # as config.toml and the environment write it
    return separator.join(value) if isinstance(value, (tuple, list)) else str(value)


@app.command()
def path() -> None:
    """Where config.toml lives (it may not exist yet)."""
    typer.echo(str(resolve_paths().config_file))
