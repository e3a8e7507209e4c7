"""Shell completions and the man page, generated from the Typer app.

``python -m toka_cli.gendocs`` rewrites ``completions/toka.bash``, ``completions/_toka`` (zsh),
``completions/toka.fish`` and ``man/toka.1`` from the commands as they are registered in
:mod:`toka_cli.main`; tests/cli/test_gendocs.py fails when the committed files differ from what
it would write. ``tree`` reads the commands, ``completions`` and ``man`` write the documents.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from toka_cli.gendocs.completions import bash_completion, fish_completion, zsh_completion
from toka_cli.gendocs.man import man_page
from toka_cli.gendocs.tree import CommandDoc, ParamDoc, command_tree

__all__ = ["CommandDoc", "ParamDoc", "command_tree", "generate", "main"]

ROOT = Path(__file__).resolve().parents[2]


def generate(app: typer.Typer | None = None) -> dict[str, str]:
    """The generated files, by path under the project root, for ``app`` (toka's own by default)."""
    if app is None:
        from toka_cli.main import app as toka_app

        app = toka_app
    tree = command_tree(app)
    return {
        "completions/toka.bash": bash_completion(tree),
        "completions/_toka": zsh_completion(tree),
        "completions/toka.fish": fish_completion(tree),
        "man/toka.1": man_page(tree),
    }


def main() -> None:
    for relative, text in generate().items():
        path = ROOT / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {relative}", file=sys.stderr)
