"""The shape of the source tree: no import cycle between modules, no module over 400 lines.

Both checks read the source of store/, daemon/ and toka_cli/ with ast and import nothing. An
import counts wherever it stands: at module level, inside a function, under TYPE_CHECKING. A
cycle that only a lazy import or the type checker sees still ties two modules together, so that
neither can be read, tested or moved without the other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("store", "daemon", "toka_cli")
# Past this a module holds more than one thing: split it along its seams, each part named for what it holds.
MAX_LINES = 400


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name (a package by its own name)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str, known: Mapping[str, Path]) -> str | None:
    """The module ``name`` names, or the innermost known package holding it; None outside the tree."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports. ``from pkg import x``
    is an import of the module pkg.x when there is one, else of pkg."""
    found: set[str | None] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in known else _known(base, known))
    return {module for module in found if module is not None and module != name}


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imports(name, path, known) for name, path in known.items()}


def _components(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def cycles(graph: Mapping[str, Iterable[str]]) -> set[tuple[str, ...]]:
    """Every cycle of ``graph`` that passes through no node twice, each as its nodes from the
    least one on (the edge back to it is implied). Only nodes of one strongly connected component
    can share a cycle, which keeps the search to a few small components."""
    found: set[tuple[str, ...]] = set()
    for component in _components(graph):

        def walk(path: list[str], component: set[str] = component) -> None:
            for target in graph.get(path[-1], ()):
                if target == path[0]:
                    found.add(tuple(path))
                elif target in component and target > path[0] and target not in path:
                    walk([*path, target])

        for start in component:
            walk([start])
    return found


def _shown(cycle: tuple[str, ...]) -> str:
    return " -> ".join([*cycle, cycle[0]])


def long_modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, int]:
    """Modules over MAX_LINES, by path under ``root``, with their line counts."""
    counts = {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules(root, packages).values()
    }
    return {path: count for path, count in sorted(counts.items()) if count > MAX_LINES}


def test_no_import_cycle_between_modules() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(_shown(c) for c in sorted(found))


def test_no_module_over_the_line_limit() -> None:
    found = long_modules()
    assert not found, f"modules over {MAX_LINES} lines:\n" + "\n".join(f"{p}: {n}" for p, n in found.items())


def test_the_cycle_search_finds_every_cycle_of_a_small_graph() -> None:
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": {"b"}, "e": {"a"}, "f": {"f"}}
    assert cycles(graph) == {("a", "b", "c"), ("b", "d"), ("f",)}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == set()


def test_the_graph_sees_lazy_and_from_imports_of_submodules(tmp_path: Path) -> None:
    sources = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def later():\n    from pkg.c import thing\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
        "pkg/d.py": "import pkg\nfrom pkg import name_in_init\n",
    }
    for relative, text in sources.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.a"}, "pkg.d": {"pkg"}}
    assert cycles(graph) == {("pkg.a", "pkg.b", "pkg.c")}


def test_the_line_limit_lists_long_modules(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules(tmp_path, ["pkg"]) == {"pkg/long.py": MAX_LINES + 1}
