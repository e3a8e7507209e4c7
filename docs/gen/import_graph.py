"""The project's imports, read from its source with ast (nothing is imported), and the daemon's
packages drawn in layers from them.

``python docs/gen/import_graph.py`` prints the picture of docs/architecture.md ("The daemon's
packages"): each package of daemon/ at the level of the longest chain of imports beneath it,
with the packages it imports. tests/test_architecture.py holds the rules the picture shows (no
cycle, every import downwards) and fails when docs/architecture.md's copy differs from it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("store", "daemon", "toka_cli")
ENTRY_POINTS = {"daemon.__main__"}  # `python -m daemon` starts the server: above every package
ROOT_MODULES = "daemon"  # the modules directly in daemon/ (core, component, config, paths, ...)
# Root modules that gather every component's part, above them all: drawn as packages of their own.
GATHERERS = {"daemon.sections"}  # every component's [section] of config.toml


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


def package_of(module: str, root: Path = ROOT) -> str | None:
    """The daemon package a module belongs to (``daemon`` for the root modules); None outside it."""
    parts = module.split(".")
    if parts[0] != "daemon" or module in ENTRY_POINTS:
        return None
    if module in GATHERERS:
        return module
    if len(parts) > 1 and (root / "daemon" / parts[1]).is_dir():
        return f"daemon.{parts[1]}"
    return ROOT_MODULES


def package_graph(graph: Mapping[str, Iterable[str]], root: Path = ROOT) -> dict[str, set[str]]:
    """The imports between the daemon's packages: each package, and the other packages it imports."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = package_of(module, root)
        if source is None:
            continue
        found = packages.setdefault(source, set())
        found.update(into for target in targets if (into := package_of(target, root)) not in (None, source))
    return packages


def levels(packages: Mapping[str, set[str]]) -> dict[str, int]:
    """Each package's level: 0 when it imports no other package, else one more than the highest it
    imports. Defined only for a graph without cycles (tests/test_architecture.py holds that)."""
    found: dict[str, int] = {}

    def level(package: str, seen: tuple[str, ...] = ()) -> int:
        if package not in found:
            assert package not in seen, f"import cycle through {package}"
            below = [level(target, (*seen, package)) for target in packages.get(package, ())]
            found[package] = 1 + max(below) if below else 0
        return found[package]

    for package in packages:
        level(package)
    return found


def _short(package: str) -> str:
    if package == ROOT_MODULES:
        return "(root modules)"
    return package.removeprefix("daemon.") + (".py" if package in GATHERERS else "/")


def picture(packages: Mapping[str, set[str]]) -> str:
    """The daemon's packages, highest level first, each with what it imports: every arrow points
    to a lower line."""
    at = levels(packages)
    width = max(len(_short(package)) for package in packages)
    lines = []
    for level in range(max(at.values()), -1, -1):
        for package in sorted(p for p, found in at.items() if found == level):
            targets = sorted(packages[package], key=lambda p: (-at[p], p))
            arrow = " -> " + ", ".join(_short(t).rstrip("/") for t in targets) if targets else ""
            lines.append(f"{level}  {_short(package).ljust(width)}{arrow}".rstrip())
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(picture(package_graph(import_graph())), end="")
