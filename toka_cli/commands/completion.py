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

    bash: `toka completion bash > ~/.local/share/bash-completion/completions/toka` (or add
    `source <(toka completion bash)` to ~/.bashrc). zsh: `toka completion zsh > ~/.zfunc/_toka`,
    with `fpath=(~/.zfunc $fpath)` before `compinit` in ~/.zshrc. fish: `toka completion fish >
    ~/.config/fish/completions/toka.fish`. Open a new shell to use it.
    """
    if shell not in SCRIPTS:
        raise UsageError(f"no completion script for {shell!r}", f"use one of: {', '.join(SCRIPTS)}")
    sys.stdout.write(files("toka_cli").joinpath("completions", SCRIPTS[shell]).read_text(encoding="utf-8"))


def register(app: typer.Typer) -> None:
    app.command()(completion)
