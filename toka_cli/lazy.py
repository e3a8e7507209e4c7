"""Commands known by name and loaded when used: a command's module is imported only when the
command runs, its help is asked for, or a completion needs its parameters.

Importing every command module costs each `toka` process about 60 ms (their own imports, and
Typer reading every function's signature); `toka status` needs one of them. The root group holds
a :class:`Lazy` entry per command (its name, the module under ``toka_cli.commands`` that
registers it, and its short help), so `toka --help` lists every command without importing one.
tests/cli/test_lazy_commands.py keeps the entries equal to what the modules register.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from typer.core import TyperCommand

from toka_cli.base import TokaGroup


@dataclass(frozen=True, slots=True)
class Lazy:
    """A command of the root group: ``module`` (under ``toka_cli.commands``) registers it, by its
    ``register(app)`` or, for a group of its own, as its ``app``; ``help`` is its help's first
    paragraph, what `toka --help` shows of it, under the heading ``panel``."""

    name: str
    module: str
    help: str
    panel: str = "Commands"


def load(module_name: str) -> dict[str, Any]:
    """The Click commands ``toka_cli.commands.MODULE`` registers, by name."""
    import typer.main

    from toka_cli.base import make_app

    module = importlib.import_module(f"toka_cli.commands.{module_name}")
    holder = make_app("")
    register = getattr(module, "register", None)
    if register is not None:
        register(holder)
    else:
        holder.add_typer(module.app)
    return dict(typer.main.get_group(holder).commands)


class LazyCommands(MutableMapping[str, Any]):
    """The root group's commands: every name is there from the start, and a command is built
    the first time it is read (with the others of its module)."""

    def __init__(self, entries: tuple[Lazy, ...], built: MutableMapping[str, Any]) -> None:
        self.entries = {entry.name: entry for entry in entries}
        self.built = dict(built)

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            entry = self.entries[name]  # KeyError: no such command
            self.built.update(load(entry.module))
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        self.built.pop(name, None)
        self.entries.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self.entries
        yield from (name for name in self.built if name not in self.entries)

    def __len__(self) -> int:
        return len(set(self.entries) | set(self.built))

    def __contains__(self, name: object) -> bool:
        return name in self.entries or name in self.built

    def placeholder(self, name: str) -> Any:
        """What `--help` lists for ``name``: the command once built, else a stand-in with its help."""
        if name in self.built or name not in self.entries:
            return self.built.get(name)
        return TyperCommand(name, help=self.entries[name].help)


class LazyGroup(TokaGroup):
    """The root group: its subclass names the commands in ``COMMANDS``; each is loaded when it
    is resolved (to run it, show its help or complete its words)."""

    COMMANDS: tuple[Lazy, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.COMMANDS, self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        commands: LazyCommands = self.commands  # type: ignore[assignment]
        listed = [(name, commands.placeholder(name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in listed if command is not None and not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        panels: dict[str, list[tuple[str, str]]] = {}
        for name, command in shown:
            entry = commands.entries.get(name)
            panel = "Commands" if entry is None else entry.panel
            panels.setdefault(panel, []).append((name, command.get_short_help_str(limit)))
        for panel, rows in panels.items():
            with formatter.section(panel):
                formatter.write_dl(rows)
