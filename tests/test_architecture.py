"""The shape of the source tree: no import cycle between modules, the daemon's packages in layers
that import only downwards, and modules kept short (over 400 lines, a warning unless the reason
is written down here).

The checks read the source of store/, daemon/ and toka_cli/ with ast and import nothing. An
import counts wherever it stands: at module level, inside a function, under TYPE_CHECKING. A
cycle that only a lazy import or the type checker sees still ties two modules together, so that
neither can be read, tested or moved without the other.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from import_graph import PACKAGES, ROOT, import_graph, modules, package_graph, package_of, picture

# Past this a module usually holds more than one thing: split it along its seams, each part named
# for what it holds, or say below why it is one thing. A warning, not a failure: a line count must
# not decide where code goes. Past HARD_MAX_LINES it fails.
MAX_LINES = 400
HARD_MAX_LINES = 800
LONG_MODULES: dict[str, str] = {
    "daemon/contract/results.py": "the result shapes of the ops, one TypedDict each, as docs/json.md lists them;"
    " the larger families (status, cost, otel) are modules of their own already",
    "daemon/handoff/build.py": "one fold over a session's events, a handler per kind sharing the builder's"
    " state; split, the handlers would reach into each other's state",
    "store/base.py": "the store's interface, which both backends implement, with the values its methods take and"
    " return; a reader of one method needs the others beside it",
}

# The daemon's packages in layers, lowest first: a package may import its own modules and those of
# lower layers only, never one of its own layer or above (docs/architecture.md draws them). At the
# bottom the contract; then what needs nothing else of the daemon: the request plumbing and the
# helpers on transcript text; then the root modules (daemon/*.py: the core, the component
# protocol, settings, paths, ownership).
DAEMON_LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"daemon.contract"}),  # what the daemon, the client, the CLI and the MCP server agree on
    frozenset({"daemon.rpc", "daemon.transcript"}),  # the request plumbing, helpers on transcript text
    frozenset({"daemon"}),  # the root modules
    frozenset(  # components on the log alone
        {
            "daemon.redact",
            "daemon.agents",
            "daemon.memory",
            "daemon.states",
            "daemon.deps",
            "daemon.heads",
            "daemon.ingest",
            "daemon.transfer",
            "daemon.recall",
        }
    ),
    frozenset({"daemon.cost", "daemon.handoff", "daemon.search", "daemon.otel"}),  # reading agents, redacting
    frozenset({"daemon.compress", "daemon.log", "daemon.alerts", "daemon.export", "daemon.client"}),
    frozenset({"daemon.lifecycle", "daemon.retention"}),  # acting through compression and handoffs
    frozenset({"daemon.inject"}),  # what hooks give the agent: handoffs, notices of the lifecycle's states
    frozenset({"daemon.sections"}),  # every component's [section] of config.toml: the daemon and `toka config` read it
    frozenset({"daemon.server"}),  # the running process: the only package that knows every component
)


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


def test_long_modules_warn_and_none_is_past_the_hard_limit() -> None:
    found = long_modules()
    unexplained = {path: count for path, count in found.items() if path not in LONG_MODULES}
    if unexplained:
        listed = ", ".join(f"{path} ({count})" for path, count in unexplained.items())
        warnings.warn(f"modules over {MAX_LINES} lines, with no reason in LONG_MODULES: {listed}", stacklevel=1)
    too_long = {path: count for path, count in found.items() if count > HARD_MAX_LINES}
    assert not too_long, f"modules over {HARD_MAX_LINES} lines: {too_long}"
    stale = set(LONG_MODULES) - set(found)
    assert not stale, f"LONG_MODULES names modules that are no longer long: {sorted(stale)}"


def upward_imports(graph: Mapping[str, Iterable[str]], layers: tuple[frozenset[str], ...]) -> list[str]:
    """Each import of ``graph`` from a daemon package into one of its own layer or above."""
    rank = {package: level for level, packages in enumerate(layers) for package in packages}
    found = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        if source is None:
            continue
        for target in sorted(targets):
            into = package_of(target)
            if into is None or into == source:
                continue
            if rank.get(into, len(layers)) >= rank.get(source, -1):
                found.append(f"{module} ({source}) imports {target} ({into})")
    return found


def test_every_daemon_package_has_a_layer() -> None:
    packages = {package_of(module) for module in modules(ROOT, ["daemon"])} - {None}
    placed = set().union(*DAEMON_LAYERS)
    assert packages - placed == set(), "place these in DAEMON_LAYERS"
    assert placed - packages == set(), "DAEMON_LAYERS names packages that are gone"


def test_daemon_packages_import_only_downwards() -> None:
    found = upward_imports(import_graph(), DAEMON_LAYERS)
    assert not found, "imports into the same layer or above:\n" + "\n".join(found)


def test_the_layer_rule_catches_an_upward_import() -> None:
    graph = {
        "daemon.agents.model": {"daemon.lifecycle.service", "daemon.core", "daemon.agents.usage"},
        "daemon.memory.service": {"daemon.states.table"},
        "daemon.server.process": {"daemon.memory.service"},
    }
    assert upward_imports(graph, DAEMON_LAYERS) == [
        "daemon.agents.model (daemon.agents) imports daemon.lifecycle.service (daemon.lifecycle)",
        "daemon.memory.service (daemon.memory) imports daemon.states.table (daemon.states)",
    ]


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


def test_the_picture_in_the_architecture_doc_is_the_import_graph() -> None:
    drawn = picture(package_graph(import_graph()))
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"```\n{drawn}```" in doc, (
        f"docs/architecture.md's picture is out of date; `python docs/gen/import_graph.py` draws:\n{drawn}"
    )
