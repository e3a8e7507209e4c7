"""Import hygiene: `store` <- `daemon` <- `toka_cli`, and the light client stays light.

Two checks: what importing the lower layers actually loads (in a fresh interpreter), and a
static check of every import statement in their source, lazy ones inside functions included.
The CLI reaches below only through the client and the contracts it shares with the daemon.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from cli_support import ROOT

FORBIDDEN = {
    "store": {"daemon", "toka_cli", "typer", "rich", "textual"},
    "daemon": {"toka_cli", "typer", "textual", "rich"},
    # No SQL in the CLI: what it knows of the database it asks the daemon or its client.
    "toka_cli": {"sqlite3", "aiosqlite"},
}
# All that toka_cli may import of `store` and `daemon` (a module and what is inside it), and why.
CLI_MAY_IMPORT = {
    "store.errors": "the one exception hierarchy, raised and caught in every layer",
    "daemon.client": "the clients, autostart, imports, doctor's facts",
    "daemon.contract": "what the CLI, the MCP server and the daemon agree on: kinds, policies, states, results",
    "daemon.paths": "where the socket, database, config and logs are",
    "daemon.version": "the version `toka --version` prints",
    "daemon.ownership": "toka's own files opened as every process opens them (`toka daemon logs`)",
    "daemon.config": "how settings are named, checked and shown, and the daemon's own sections",
    "daemon.config_file": "reading and writing config.toml: `toka config`, `toka watch`, doctor",
    "daemon.sections": "every section of config.toml: `toka config`, `toka watch`, doctor, the man page",
    "daemon.ingest.settings": "the paths `toka watch` and doctor read from [watch]",
    "daemon.otel.settings": "the receiver's address and token that `toka integrate --otel` and doctor read from [otel]",
    "daemon.ingest.formats": "the formats `toka watch` reads",
    "daemon.ingest.tail": "the cursors of `toka watch`",
    "daemon.otel.token": "the receiver's token, which `toka integrate --otel` writes into the agents' settings",
    "daemon.ingest.watch": "`toka watch` follows files in the CLI's own process, appending through the client",
}
# The one exception: `toka daemon run` is the daemon itself, run in the foreground.
# The client package runs in the CLI's and the hook's process: of the daemon it may import the
# shared contracts and the transcript parsers (`toka import` parses in the client's process),
# never the server or the components it runs.
CLIENT_MAY_IMPORT = {
    "store.errors": "the exceptions it raises and the daemon's errors it re-raises",
    "store.sqlite.health": "doctor reads the database file itself when no daemon runs",
    "store.postgres.health": "doctor reads the PostgreSQL database itself when no daemon runs (none starts without it)",
    "store.sqlite.recover": "`toka admin recover` reads a damaged database no daemon may be able to open",
    "daemon.client": "its own modules",
    "daemon.contract": "the kinds, states and result types it shares with the daemon and the CLI",
    "daemon.paths": "where the socket, the spool and the logs are",
    "daemon.ownership": "the checks that toka's files, and the daemon it talks to, are the user's own",
    "daemon.protocol": "the wire format",
    "daemon.version": "the protocol version it checks",
    "daemon.config": "the daemon's own sections: the start timeout autostart waits, the backend doctor looks at",
    "daemon.config_file": "reading config.toml for those, without the components' sections (the daemon checks them)",
    "daemon.ingest.formats": "the transcript formats `toka import` parses",
    "daemon.ingest.lines": "the parse statistics of an import",
    "daemon.ingest.parser": "an import names the line of each record it reports",
    "daemon.ingest.tail": "`toka watch` reads each file on from its cursor, as the daemon's watcher does",
    "daemon.ingest.watch": "`toka watch` picks and reads the files as the daemon's watcher does",
    "daemon.batching": "requests are cut by the bounds the daemon's own batches use",
    "store.events": "the digest a record cut to fit a request keeps of the whole (loaded only then)",
    "store.kinds": "what a kind filter takes (`tool.*`, `!raw`), as the daemon reads it (a replay's lifecycle)",
}
# The contract is the bottom of `daemon`: the client, the CLI and every component import it, so it
# imports nothing of the daemon but itself, and of the store only its pure bottom modules.
CONTRACT_MAY_IMPORT = {
    "daemon.contract": "its own modules",
    "store.errors": "the UsageError a time that is none of the forms of times.py raises",
    "store.events": "the events the kinds name",
    "store.kinds": "what a kind filter takes",
}
CLI_MAY_IMPORT_IN = {"toka_cli/commands/daemon.py": {"daemon.server.main"}}


def _loaded_after(statement: str, candidates: list[str]) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {candidates!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_store_and_daemon_load_no_ui() -> None:
    loaded = _loaded_after(
        "import store, daemon, store.sqlite.store, store.ephemeral, daemon.server.main, daemon.client.sync",
        ["textual", "typer", "rich", "toka_cli", "click"],
    )
    assert loaded == []


def test_the_client_loads_no_asyncio_database_or_hashing() -> None:
    loaded = _loaded_after(
        "import daemon.client.sync",
        ["asyncio", "aiosqlite", "blake3", "sqlite3", "textual", "typer", "rich", "toka_cli", "store.sqlite"],
    )
    assert loaded == []


def _components() -> list[str]:
    """The packages of daemon/ (its components, the request plumbing, the server, the client)."""
    return sorted(f"daemon.{path.parent.name}" for path in (ROOT / "daemon").glob("*/__init__.py"))


def test_the_client_reads_its_settings_without_loading_a_component() -> None:
    # Autostart's timeout and doctor's backend come from the daemon's own sections; a hook's
    # process never pays for the components that declare the others.
    statement = (
        "import daemon.client.sync\n"
        "from daemon.config import OWN_SECTIONS\n"
        "from daemon.config_file import load_settings\n"
        "from daemon.paths import resolve_paths\n"
        "load_settings(OWN_SECTIONS, resolve_paths().config_file)"
    )
    components = [name for name in _components() if name != "daemon.client"]
    assert "daemon.lifecycle" in components and "daemon.rpc" in components
    assert _loaded_after(statement, components) == []
    # Not vacuous: every section, as the daemon reads them, loads the components that declare them.
    assert "daemon.lifecycle" in _loaded_after("import daemon.sections", components)


# The root modules of daemon/ are below every package of it, but for these, which are above all.
def test_the_check_sees_real_imports() -> None:
    # The subprocess check is not vacuous: the CLI does load what the layers below must not.
    loaded = _loaded_after("import toka_cli.main; from toka_cli.output import console; console()", ["typer", "rich"])
    assert set(loaded) == {"typer", "rich"}


def test_cli_start_up_leaves_rich_for_human_output() -> None:
    # `toka --help` and every --json command never pay for Rich: it loads on first human output.
    assert _loaded_after("import toka_cli.main", ["typer", "rich", "textual"]) == ["typer"]


def test_json_output_loads_neither_rich_nor_sqlite(example: str) -> None:
    # Scripts pay for neither: JSON is printed without Rich, and doctor asks the daemon.
    code = (
        "import sys\n"
        "from toka_cli.main import app\n"
        "for args in (['status'], ['sessions'], ['show', 'fix'], ['verify'], ['search', 'login'], ['doctor']):\n"
        "    sys.argv = ['toka', *args, '--json']\n"
        "    try:\n"
        "        app()\n"
        "    except SystemExit as exit:\n"
        "        assert exit.code == 0, (args, exit.code)\n"
        "print([m for m in ('rich', 'textual', 'sqlite3') if m in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "[]"


def imported_names(source: str, module: str) -> set[str]:
    """The dotted name of everything ``source`` (the module ``module``) imports: ``import a.b``
    gives ``a.b``, ``from a import b`` gives ``a.b`` (a submodule or a name inside ``a``)."""
    package = module.split(".")[:-1]  # "daemon.client.sync" and "daemon.__init__" live in "daemon"
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = str(node.module).split(".")
            else:
                # Relative: `from . import x` in daemon/ is daemon.x; `from .. import x` is plain x.
                base = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            names.update(".".join([*base, alias.name]) for alias in node.names)
    return names


def imported_modules(source: str, module: str) -> set[str]:
    """Top-level names of every module that ``source`` (the module ``module``) imports."""
    return {name.split(".")[0] for name in imported_names(source, module)}


def cli_offences(source: str, path: str, allowed_anywhere: Iterable[str] = CLI_MAY_IMPORT) -> list[str]:
    """What the module at ``path`` imports of `store` and `daemon` beyond ``allowed_anywhere``
    (the CLI's rule unless told) and CLI_MAY_IMPORT_IN."""
    allowed = set(allowed_anywhere) | CLI_MAY_IMPORT_IN.get(path, set())
    module = path.removesuffix(".py").replace("/", ".")
    return [
        f"{path} imports {name}"
        for name in sorted(imported_names(source, module))
        if name.split(".")[0] in ("store", "daemon")
        and not any(name == ok or name.startswith(ok + ".") for ok in allowed)
    ]


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


def test_the_cli_reaches_below_only_through_the_client_and_the_contracts() -> None:
    offences = []
    for path in _sources("toka_cli"):
        relative = path.relative_to(ROOT).as_posix()
        offences += cli_offences(path.read_text(encoding="utf-8"), relative)
    assert offences == []


def test_the_client_imports_nothing_of_the_server_side() -> None:
    offences = []
    for path in sorted((ROOT / "daemon" / "client").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        offences += cli_offences(path.read_text(encoding="utf-8"), relative, CLIENT_MAY_IMPORT)
    assert offences == []
    forbidden = "from daemon.rpc.registry import Call\nfrom daemon.agents.model import Agent\nimport store.sqlite\n"
    assert cli_offences(forbidden, "daemon/client/example.py", CLIENT_MAY_IMPORT) == [
        "daemon/client/example.py imports daemon.agents.model.Agent",
        "daemon/client/example.py imports daemon.rpc.registry.Call",
        "daemon/client/example.py imports store.sqlite",
    ]


def test_the_contract_imports_nothing_of_the_daemon_above_it() -> None:
    offences = []
    for path in sorted((ROOT / "daemon" / "contract").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        offences += cli_offences(path.read_text(encoding="utf-8"), relative, CONTRACT_MAY_IMPORT)
    assert offences == []
    assert cli_offences("from daemon.paths import Paths\n", "daemon/contract/example.py", CONTRACT_MAY_IMPORT) == [
        "daemon/contract/example.py imports daemon.paths.Paths"
    ]


def test_the_cli_rule_catches_what_it_forbids() -> None:
    source = (
        "from store.errors import TokaError\n"
        "from daemon.client.sync import Client\n"
        "from daemon import paths, protocol\n"
        "import daemon.config\n"
        "from store.search import MARK_START\n"
        "import store.sqlite.store\n"
        "from store.sqlite import schema\n"
        "from daemon.server.process import run_foreground\n"
        "def later():\n"
        "    from daemon.server.ops import OPS\n"
        "    from daemon import agents\n"
        "    import daemon\n"
        "    from daemon.ingest.parser import Parser\n"
    )
    assert cli_offences(source, "toka_cli/commands/example.py") == [
        "toka_cli/commands/example.py imports daemon",
        "toka_cli/commands/example.py imports daemon.agents",
        "toka_cli/commands/example.py imports daemon.ingest.parser.Parser",
        "toka_cli/commands/example.py imports daemon.protocol",
        "toka_cli/commands/example.py imports daemon.server.ops.OPS",
        "toka_cli/commands/example.py imports daemon.server.process.run_foreground",
        "toka_cli/commands/example.py imports store.search.MARK_START",
        "toka_cli/commands/example.py imports store.sqlite.schema",
        "toka_cli/commands/example.py imports store.sqlite.store",
    ]
    # The exception holds where it is named, and there only.
    assert cli_offences("from daemon.server.main import run_foreground\n", "toka_cli/commands/daemon.py") == []
    assert "sqlite3" in imported_modules("def check():\n    import sqlite3\n", "toka_cli.doctor")
