"""Tables of plain text are written without Rich when they fit (toka_cli/render.py's ``Grid``,
toka_cli/output.py's ``print_view``), and the lines are the very ones Rich prints; anything else
goes through Rich as before."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from rich.console import Console
from rich.text import Text

from toka_cli.render import Grid, key_values, table

TABLES = {
    "sessions": (
        ("session", "source", "project", "model", "fill", "events", "last"),
        [
            ("8463c716-0c0c-47a2-b6ab-5f2e30ae5cbe", "claude-code", "~/src/toka", "claude-opus-4", "12%", "1894", "x"),
            ("fix-login-timeout", "-", "…/deep/folder", "-", "-", "3", "2026-01-31 12:00:00"),
        ],
    ),
    "no rows": (("key", "size", "age"), []),
    "short rows": (("seq", "time", "from", "to"), [("1", "now"), ("2", "", "a", "b")]),
    "empty cells": (("node", "needs"), [("", ""), ("a", "")]),
}


def rich_lines(grid: Grid, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, markup=False, soft_wrap=False).print(grid)
    return out.getvalue().splitlines()


def plain(grid: Grid, width: int = 200) -> list[str] | None:
    return grid.plain_lines(width, lambda text: text)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_table_that_fits_is_written_as_rich_writes_it(name: str) -> None:
    columns, rows = TABLES[name]
    grid = table(*columns)
    for row in rows:
        grid.add_row(*row)
    assert plain(grid) == rich_lines(grid, 200)


def test_names_and_values_are_written_as_rich_writes_them() -> None:
    grid = key_values([("daemon", "toka 0.1.0, pid 12"), ("database", "/tmp/x/toka.db"), ("events", 120)])
    assert plain(grid) == rich_lines(grid, 200)
    assert plain(grid) == [
        "daemon    toka 0.1.0, pid 12",
        "database  /tmp/x/toka.db    ",
        "events    120               ",
    ]


def test_bold_parts_are_the_headers_and_the_names() -> None:
    grid = table("agent", "state")
    grid.add_row("a/main", "ACTIVE")
    assert grid.plain_lines(80, lambda text: f"<{text}>") == ["<agent   ><state >", "a/main  ACTIVE"]
    pairs = key_values([("pid", 1)])
    assert pairs.plain_lines(80, lambda text: f"<{text}>") == ["<pid  >1"]


@pytest.mark.parametrize(
    "cell",
    [Text("styled"), "wide 漢字", "emoji 🙂", "a\tb", "line\nbreak", "x" * 300],
    ids=["rich text", "wide", "emoji", "tab", "newline", "too wide"],
)
def test_rich_lays_out_what_plain_lines_cannot(cell: object) -> None:
    grid = table("session", "gist")
    grid.add_row("s", cell)
    assert plain(grid) is None


def test_a_title_goes_to_rich() -> None:
    grid = table("block", title="5-hour blocks")
    grid.add_row("a")
    assert plain(grid) is None


PRINTED = """\
import sys
from toka_cli.output import print_view
from toka_cli.render import table
grid = table("session", "events")
grid.add_row(sys.argv[1], "3")
print_view(grid)
print(sorted(m for m in sys.modules if m.split(".")[0] == "rich"))
"""


def test_print_view_writes_a_fitting_table_without_loading_rich() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PRINTED, "fix-login-timeout"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["session            events", "fix-login-timeout  3"]  # not padded to the header
    assert json.loads(lines[2].replace("'", '"')) == []


def test_print_view_hands_rich_what_does_not_fit() -> None:
    result = subprocess.run([sys.executable, "-c", PRINTED, "漢字"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "漢字" in result.stdout
    assert "'rich.console'" in result.stdout.splitlines()[-1]
