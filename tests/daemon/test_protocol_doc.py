"""docs/protocol.md is checked against the ops the daemon declares: every op has its row, and
every argument its request declares is named in it (or in the row of the page it points to)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from daemon.rpc.requests import NoArgs
from daemon.server.catalog import REGISTRY

DOCS = Path(__file__).resolve().parents[2] / "docs"
NONE = ("–", "—")


def rows(page: str) -> dict[str, str]:
    """Each op named in the first cell of a table of ``page``, with its arguments cell."""
    found = {}
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3:
            for name in re.findall(r"`([a-z][a-z._]*)`", cells[0]):
                found.setdefault(name, cells[1])
    return found


def arguments(name: str, protocol: dict[str, str]) -> str:
    """The arguments cell of op ``name``: its own, the row of the page it points to
    (``see [pool.md](pool.md)``), and the row it is described by (``as `events.query```)."""
    cell = protocol[name]
    if page := re.search(r"see \[[^]]+\]\(([a-z]+\.md)\)", cell):
        cell = rows(page.group(1)).get(name, "")
    if like := re.match(r"as `([a-z._]+)`", cell):
        cell += " " + protocol[like.group(1)]
    return cell


def test_every_op_and_argument_is_documented() -> None:
    protocol = rows("protocol.md")
    assert sorted(set(REGISTRY.ops) - set(protocol)) == [], "ops without a row in docs/protocol.md"
    undocumented = []
    for name, op in sorted(REGISTRY.ops.items()):
        cell = arguments(name, protocol)
        assert cell, f"{name}: the page its row points to has no row for it"
        fields = [f.name for f in dataclasses.fields(op.request)] + (["progress"] if op.progress else [])
        undocumented += [f"{name}: {field}" for field in fields if not re.search(rf"`{field}\??`", cell)]
        if op.request is NoArgs:
            assert cell in NONE, f"{name} takes no arguments, but its row lists {cell!r}"
    assert undocumented == [], "arguments the docs do not name:\n" + "\n".join(undocumented)


def test_the_check_reads_the_tables() -> None:
    protocol = rows("protocol.md")
    assert protocol["memory.get"] == "`scope`, `key`"
    assert arguments("pool.get", protocol) == "`key`"
    assert "`kinds`" in arguments("events.stream", protocol)
