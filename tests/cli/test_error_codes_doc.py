"""docs/json.md's table of errors names every error code toka has, with the exit code the CLI gives it."""

from __future__ import annotations

import re

from cli_support import ROOT

from store.errors import ERRORS_BY_CODE


def documented() -> dict[str, int]:
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    table = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and cells[1].isdigit():
            for code in re.findall(r"`([a-z_]+)`", cells[0]):
                found[code] = int(cells[1])
    return found


def test_every_error_code_is_documented_with_its_exit_code() -> None:
    assert documented() == {code: cls.exit_code for code, cls in ERRORS_BY_CODE.items()}
