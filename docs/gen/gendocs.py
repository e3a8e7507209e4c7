"""Shell completions and the man page, generated from the Typer app.

``python docs/gen/gendocs.py`` rewrites ``toka_cli/completions/toka.bash``, ``.../_toka`` (zsh),
``.../toka.fish`` and ``man/toka.1`` from the commands as they are registered in
:mod:`toka_cli.main`. The scripts are in the package, where `toka completion SHELL` reads them,
and the wheel installs them and the page under share/ (pyproject.toml).
tests/cli/test_gendocs.py fails when the committed files differ from what it would write. Build
tooling, not part of the installed package: it runs from a checkout, with toka installed
(``pip install -e .``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from command_docs import command_tree
from man_page import man_page
from shell_completion import bash_completion, fish_completion, zsh_completion

ROOT = Path(__file__).resolve().parents[2]


def generate(app: typer.Typer | None = None) -> dict[str, str]:
    """The generated files, by path under the project root, for ``app`` (toka's own by default)."""
    if app is None:
        from toka_cli.main import app as toka_app

        app = toka_app
    tree = command_tree(app)
    return {
        "toka_cli/completions/toka.bash": bash_completion(tree),
        "toka_cli/completions/_toka": zsh_completion(tree),
        "toka_cli/completions/toka.fish": fish_completion(tree),
        "man/toka.1": man_page(tree),
    }


def main() -> None:
    for relative, text in generate().items():
        path = ROOT / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {relative}", file=sys.stderr)


if __name__ == "__main__":
    main()
