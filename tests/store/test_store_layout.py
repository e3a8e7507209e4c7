"""The shape of store/: each backend a package whose parts are named as the other's, what both
share outside them, and the methods both SQL backends run their parts through written once.

Read with ast, nothing imported. That store/ imports nothing of daemon/ or toka_cli/ is
tests/cli/test_layers.py's check (it reads every module under store/, the backends' included).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

STORE = Path(__file__).resolve().parent.parent.parent / "store"
BACKENDS = ("sqlite", "postgres")
# The parts both SQL backends have, each under the same module name in both packages.
SHARED_PARTS = {
    "store": "the store class",
    "connect": "opening a connection, and what it sets and checks",
    "schema": "the migrations",
    "append": "the append path",
    "reads": "rows by statement, an event or payload by prefix, the figures",
    "projections": "the session tables, and every projection refilled",
    "usage": "the usage projection",
    "search": "the search index and its statements",
    "vectors": "the vectors of semantic recall and their nearest neighbours",
    "verify": "the chain checked",
    "tree": "the log's Merkle tree as the backend keeps it",
    "health": "the read-only facts doctor reads",
    "projector": "the derived tables applied behind the log's commits, with their tracking record",
}
# The parts only a database file needs, which the PostgreSQL server looks after itself.
SQLITE_ONLY = {
    "hop": "each operation run on a connection's thread",
    "integrity": "what the store knows of its file's soundness",
    "retention": "prune and garbage collection",
    "recover": "`toka admin recover`",
    "salvage": "a damaged file's rows read into a new one",
    "searcher": "searches on a connection of their own",
    "vector_cache": "every vector in memory, for a search by meaning of the whole log",
    "wal": "what the WAL holds, and its checkpoints",
}
OWN_PARTS = {"sqlite": set(SQLITE_ONLY), "postgres": set()}
# The store class of each backend, in its package's store.py.
STORE_CLASSES = {"sqlite": "SqliteStore", "postgres": "PostgresStore"}


def parts(backend: str) -> set[str]:
    return {path.stem for path in (STORE / backend).glob("*.py") if path.stem != "__init__"}


def classes(path: Path) -> dict[str, ast.ClassDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def methods(node: ast.ClassDef, written: bool = False) -> set[str]:
    """The methods the class defines; ``written``: those with a body, not abstract."""
    return {
        item.name
        for item in node.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
        and not (written and any(ast.unparse(d).endswith("abstractmethod") for d in item.decorator_list))
    }


def store_imports(path: Path) -> set[str]:
    """The modules of store/ that the module at ``path`` imports, as dotted names."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "store"}


def test_the_backends_name_the_parts_they_share_alike() -> None:
    sqlite, postgres = parts("sqlite"), parts("postgres")
    assert sqlite & postgres == set(SHARED_PARTS)
    assert sqlite - postgres == OWN_PARTS["sqlite"]
    assert postgres - sqlite == OWN_PARTS["postgres"]


def test_no_module_carries_a_backend_prefix() -> None:
    # A backend's part lives in its package (store/sqlite/connect.py), never as store/sqlite_connect.py.
    prefixed = [path.relative_to(STORE).as_posix() for path in STORE.rglob("*.py") if path.stem.startswith(BACKENDS)]
    assert prefixed == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_backend_holds_its_store_class_in_store_py(backend: str) -> None:
    assert (STORE / backend / "__init__.py").is_file()
    found = classes(STORE / backend / "store.py")[STORE_CLASSES[backend]]
    assert [ast.unparse(base) for base in found.bases] == ["SqlStore"]


def test_the_shared_methods_are_written_once() -> None:
    # A method SqlStore writes (a part run on a connection) is not written again by a backend.
    shared = methods(classes(STORE / "sql.py")["SqlStore"], written=True)
    assert {"get", "query", "sessions", "usage_rows", "rebuild_projections"} <= shared
    for backend, name in STORE_CLASSES.items():
        assert methods(classes(STORE / backend / "store.py")[name]) & shared == set(), backend
    # Replay is the base class's, a chunked scan; only the memory backend, with no statement to
    # page, reads its list directly.
    assert "replay" in methods(classes(STORE / "base.py")["EventStore"])


def test_the_shared_modules_and_each_backend_import_no_other_backend() -> None:
    offences = []
    for path in sorted(STORE.rglob("*.py")):
        relative = path.relative_to(STORE)
        own = relative.parts[0] if len(relative.parts) > 1 else None
        for name in sorted(store_imports(path)):
            backend = name.split(".")[1]
            if backend in BACKENDS and backend != own:
                offences.append(f"store/{relative.as_posix()} imports {name}")
    assert offences == []
