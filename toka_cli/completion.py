"""Answering a shell's completion request in Click's protocol, which the completion scripts
(toka_cli/completions/) use for what only toka knows: the names of sessions and agents.

The script runs ``toka`` with ``_TOKA_COMPLETE=bash_complete`` (``zsh_complete``,
``fish_complete``), the words typed in ``COMP_WORDS`` and the index of the one being completed in
``COMP_CWORD``. Click resolves the command and the parameter; its completer
(toka_cli/completers.py) gives the values; each is printed as Click's own scripts read it: bash
``type,value`` lines, zsh ``type``/``value``/``help`` line triples, fish ``type,value<TAB>help``
lines. ``type`` is ``plain``, or ``file``/``dir`` where the shell should complete paths itself.
Nothing is written to stderr: the shell would show it in the middle of the command line.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

import typer.core

# Click's own steps from the words to the parameter being completed (private, as Click's scripts
# use them too): the value completed here for a path is the shell's job, which Click leaves empty.
from typer._click.shell_completion import (
    CompletionItem,
    ShellComplete,
    _resolve_context,
    _resolve_incomplete,
    split_arg_string,
)

SHELLS = ("bash", "zsh", "fish")


class _Complete(ShellComplete):
    """The words from COMP_WORDS and COMP_CWORD, as every shell's script sends them."""

    name = "click"
    source_template = ""

    def source_vars(self) -> dict[str, Any]:
        return {}

    def get_completion_args(self) -> tuple[list[str], str]:
        words = split_arg_string(os.environ.get("COMP_WORDS", ""))
        cword = int(os.environ.get("COMP_CWORD", "0") or 0)
        incomplete = words[cword] if 0 < cword < len(words) else ""
        return words[1:cword], incomplete

    def get_completions(self, args: list[str], incomplete: str) -> list[CompletionItem]:
        ctx = _resolve_context(self.cli, self.ctx_args, self.prog_name, args)
        completing, incomplete = _resolve_incomplete(ctx, args, incomplete)
        found: list[CompletionItem] = completing.shell_complete(ctx, incomplete)
        descriptor = getattr(completing, "type_descriptor", None)
        if not found and descriptor is not None and (descriptor.is_path or descriptor.is_file):
            return [CompletionItem(incomplete, type="file")]  # the shell completes paths
        return found

    def format_completion(self, item: CompletionItem) -> str:
        raise NotImplementedError


class BashComplete(_Complete):
    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.type},{item.value}"


class ZshComplete(_Complete):
    def format_completion(self, item: CompletionItem) -> str:
        help = " ".join((item.help or "_").split())
        # _describe splits a value from its help at the first colon that is not escaped
        value = item.value.replace(":", r"\:") if help != "_" else item.value
        return f"{item.type}\n{value}\n{help}"


class FishComplete(_Complete):
    def format_completion(self, item: CompletionItem) -> str:
        help = " ".join((item.help or "").split())
        return f"{item.type},{item.value}\t{help}" if help else f"{item.type},{item.value}"


@contextlib.contextmanager
def _values_left_as_typed() -> Iterator[None]:
    """A completion parses the words only to find the parameter being completed and never uses
    their values; Typer would convert each value through pydantic, whose import costs a Tab about
    60 ms. So parameters keep their words as typed while a completion runs (a Typer without that
    step is left as it is)."""
    parameter = getattr(typer.core, "_TyperParameter", None)
    if parameter is None or "process_value" not in vars(parameter):
        yield
        return
    converting = parameter.process_value
    parameter.process_value = lambda self, ctx, value: value
    try:
        yield
    finally:
        parameter.process_value = converting


_CLASSES: dict[str, type[_Complete]] = {"bash": BashComplete, "zsh": ZshComplete, "fish": FishComplete}


def answer(cli: Any, ctx_args: Any, prog_name: str, complete_var: str, instruction: str) -> int:
    """Print the completions ``instruction`` (``bash_complete``, or Typer's order ``complete_bash``)
    asks for; 1 for an instruction toka does not know, silently."""
    first, _, second = instruction.partition("_")
    shell = first if second == "complete" else second if first == "complete" else ""
    if shell not in _CLASSES:
        return 1
    completer = _CLASSES[shell](cli, dict(ctx_args), prog_name, complete_var)
    with contextlib.redirect_stderr(io.StringIO()), _values_left_as_typed():
        try:
            args, incomplete = completer.get_completion_args()
            lines = [completer.format_completion(item) for item in completer.get_completions(args, incomplete)]
        # A command line that does not parse completes nothing, and a traceback must not land in
        # the middle of the user's prompt.
        except (Exception, SystemExit):
            lines = []
    with contextlib.suppress(BrokenPipeError):  # the shell stopped reading
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
    return 0
