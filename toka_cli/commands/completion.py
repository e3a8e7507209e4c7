"""`toka completion SHELL`: the shell completion script installed with toka, printed."""

from __future__ import annotations

import sys
from importlib.resources import files
from typing import Annotated

import typer

from store.errors import UsageError
from toka_cli.completers import choices

# The scripts docs/gen/gendocs.py writes into toka_cli/completions/, by shell.
SCRIPTS = {"bash": "toka.bash", "zsh": "_toka", "fish": "toka.fish"}


def completion(
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish.", autocompletion=choices(*SCRIPTS))],
) -> None:
    """Print the completion script for SHELL: commands, options, their values, and the names of
    sessions and agents from the running daemon (most recent first).

    Put it where the shell loads it, then open a new shell:

    \b
    bash: toka completion bash > ~/.local/share/bash-completion/completions/toka
          (or, in ~/.bashrc: source <(toka completion bash))
    zsh:  toka completion zsh > ~/.zfunc/_toka
          (in ~/.zshrc, before compinit: fpath=(~/.zfunc $fpath))
    fish: toka completion fish > ~/.config/fish/completions/toka.fish
    """
    if shell not in SCRIPTS:
        raise UsageError(f"no completion script for {shell!r}", f"use one of: {', '.join(SCRIPTS)}")
    sys.stdout.write(files("toka_cli").joinpath("completions", SCRIPTS[shell]).read_text(encoding="utf-8"))


def register(app: typer.Typer) -> None:
    app.command()(completion)
