"""The toka command as the generated docs see it: every command and group, each option and argument.

:func:`command_tree` walks the Typer app as Click builds it, so the completions and the man
page (shell_completion.py, man_page.py) describe exactly the commands that are registered.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

import typer
import typer.main

from toka_cli.completers import FROM_DAEMON

PROG = "toka"
HEADER = "generated from the toka command by `python docs/gen/gendocs.py`; do not edit"


@dataclass(frozen=True)
class ParamDoc:
    """One option or argument of a command, as completion and the man page need it."""

    kind: str  # "option" or "argument"
    names: tuple[str, ...]  # "--limit", "-n" (options); the metavar (arguments)
    metavar: str  # what the value is called in usage lines; "" for flags
    takes_value: bool
    choices: tuple[str, ...]
    is_path: bool
    help: str
    required: bool
    repeated: bool  # an argument that takes any number of values, an option given many times
    from_daemon: bool = False  # session or agent names: the scripts ask `toka` (toka_cli/completers.py)


@dataclass(frozen=True)
class CommandDoc:
    """One command or group: ``path`` is its words after `toka` (empty for `toka` itself)."""

    path: tuple[str, ...]
    usage: str  # "[OPTIONS] SESSION", as in --help
    help: str
    short_help: str
    params: tuple[ParamDoc, ...]
    subcommands: tuple[str, ...]

    @property
    def name(self) -> str:
        return " ".join((PROG, *self.path))

    @property
    def options(self) -> tuple[ParamDoc, ...]:
        return tuple(p for p in self.params if p.kind == "option")

    @property
    def arguments(self) -> tuple[ParamDoc, ...]:
        return tuple(p for p in self.params if p.kind == "argument")

    @property
    def asks_toka(self) -> bool:
        """Whether the scripts ask `toka` for its arguments: one of them takes names from the
        daemon or a few words, and only Click knows which argument the cursor is on."""
        return any(argument.from_daemon or argument.choices for argument in self.arguments)


def _help_text(text: str | None) -> str:
    # Click's convention: a form feed ends what help shows of a docstring.
    return inspect.cleandoc((text or "").split("\f", 1)[0]).strip()


def _value_name(param: Any, descriptor: Any) -> str:
    """What a value is called in usage lines: ``SESSION``, ``PATH``, ``N``."""
    if param.metavar:
        return str(param.metavar)
    if descriptor is not None and (descriptor.is_path or descriptor.is_file):
        return "PATH"
    annotation = repr(getattr(descriptor, "annotation", ""))
    if param.param_type_name == "option" and re.search(r"\bint\b", annotation):
        return "N"
    longest = max([*param.opts, param.name], key=len) if param.param_type_name == "option" else param.name
    return str(longest).lstrip("-").replace("-", "_").upper()


def _completer(descriptor: Any) -> Any:
    info = getattr(descriptor, "parameter_info", None)
    return getattr(info, "autocompletion", None)


def _param(param: Any) -> ParamDoc | None:
    if getattr(param, "hidden", False):
        return None
    descriptor = getattr(param, "type_descriptor", None)
    choices = tuple(str(c) for c in (descriptor.choices or ())) if descriptor is not None else ()
    completer = _completer(descriptor)
    if not choices and hasattr(completer, "choices"):
        choices = tuple(completer.choices())
    from_daemon = completer in FROM_DAEMON
    is_path = bool(descriptor is not None and (descriptor.is_path or descriptor.is_file))
    help = _help_text(param.help)
    if param.param_type_name == "argument":
        name = _value_name(param, descriptor)
        return ParamDoc(
            "argument", (name,), name, True, choices, is_path, help, param.required, param.nargs == -1, from_daemon
        )
    takes_value = not (param.is_flag or param.count)
    metavar = _value_name(param, descriptor) if takes_value else ""
    names = tuple(sorted(param.opts, key=lambda n: n.startswith("--"))) + tuple(param.secondary_opts)
    return ParamDoc(
        "option", names, metavar, takes_value, choices, is_path, help, param.required, param.multiple, from_daemon
    )


def _usage(params: tuple[ParamDoc, ...], is_group: bool) -> str:
    pieces = ["[OPTIONS]"]
    for argument in (p for p in params if p.kind == "argument"):
        word = argument.metavar + ("..." if argument.repeated else "")
        pieces.append(word if argument.required else f"[{word}]")
    if is_group:
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def command_tree(app: typer.Typer) -> list[CommandDoc]:
    """Every visible command of ``app``, `toka` itself first, each group before its commands."""
    root = typer.main.get_command(app)
    found: list[CommandDoc] = []

    def walk(command: Any, path: tuple[str, ...], parent: Any) -> None:
        name = path[-1] if path else PROG
        ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
        params = tuple(p for p in (_param(param) for param in command.get_params(ctx)) if p is not None)
        children = getattr(command, "commands", {})
        visible = tuple(name for name in sorted(children) if not getattr(children[name], "hidden", False))
        usage = _usage(params, bool(visible))
        short = command.get_short_help_str(limit=80) if path else _help_text(command.help).splitlines()[0]
        found.append(CommandDoc(path, usage, _help_text(command.help), short, params, visible))
        for name in visible:
            walk(children[name], (*path, name), ctx)

    walk(root, (), None)
    return found


def one_line(text: str) -> str:
    return " ".join(text.split())
