"""Where the shared transcript fixtures live, and a skip with the reason when they are absent.

A module of its own: with a conftest.py in several test folders, ``import conftest`` names
whichever was loaded last.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRANSCRIPTS = SHARED / "fixtures" / "transcripts"


def shared_or_skip(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared fixtures are not checked out beside the project")
    return path


def raw_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a transcript's lines, read directly (not through toka's importers),
    for tests that check toka's results against the raw data; other lines are skipped."""
    records = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records
