"""Import hygiene: `store` <- `daemon` <- `toka_cli`, and the light client stays light.

Two checks: what importing the lower layers actually loads (in a fresh interpreter), and a
static check of every import statement in their source, lazy ones inside functions included.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT

FORBIDDEN = {
    "store": {"daemon", "toka_cli", "typer", "rich", "textual"},
    "daemon": {"toka_cli", "typer", "textual", "rich"},
}


def _loaded_after(statement: str, candidates: list[str]) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {candidates!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_store_and_daemon_load_no_ui() -> None:
    loaded = _loaded_after(
        "import store, daemon, store.sqlite, store.ephemeral, daemon.server.main, daemon.client.sync",
        ["textual", "typer", "rich", "toka_cli", "click"],
    )
    assert loaded == []


def test_the_client_loads_no_asyncio_database_or_hashing() -> None:
    loaded = _loaded_after(
        "import daemon.client.sync",
        ["asyncio", "aiosqlite", "blake3", "sqlite3", "textual", "typer", "rich", "toka_cli", "store.sqlite"],
    )
    assert loaded == []


def test_the_check_sees_real_imports() -> None:
    # The subprocess check is not vacuous: the CLI does load what the layers below must not.
    loaded = _loaded_after("import toka_cli.main; from toka_cli.output import console; console()", ["typer", "rich"])
    assert set(loaded) == {"typer", "rich"}


def test_cli_start_up_leaves_rich_for_human_output() -> None:
    # `toka --help` and every --json command never pay for Rich: it loads on first human output.
    assert _loaded_after("import toka_cli.main", ["typer", "rich", "textual"]) == ["typer"]


def imported_modules(source: str, module: str) -> set[str]:
    """Top-level names of every module that ``source`` (the module ``module``) imports."""
    package = module.split(".")[:-1]  # "daemon.client.sync" and "daemon.__init__" live in "daemon"
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names.add(str(node.module).split(".")[0])
                continue
            # Relative: `from . import x` in daemon/ is daemon.x; `from .. import x` is plain x.
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                names.add([*base, *node.module.split(".")][0])
            else:
                names.update(([*base, alias.name])[0] for alias in node.names)
    return names


def _sources(layer: str) -> list[Path]:
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, layer
    return files


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_only_downwards(layer: str) -> None:
    offences = []
    for path in _sources(layer):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        bad = imported_modules(path.read_text(encoding="utf-8"), module) & FORBIDDEN[layer]
        offences += [f"{path.relative_to(ROOT)} imports {name}" for name in sorted(bad)]
    assert offences == []


def test_the_static_check_catches_lazy_and_relative_imports() -> None:
    source = (
        "import os\n"
        "from store.errors import TokaError\n"
        "def later():\n"
        "    import rich.console\n"
        "    from typer import Typer\n"
        "class C:\n"
        "    def m(self):\n"
        "        from toka_cli import output\n"
        "from . import paths\n"
        "from .. import toka_cli\n"
    )
    found = imported_modules(source, "daemon.example")
    assert {"os", "store", "rich", "typer", "toka_cli", "daemon"} <= found
