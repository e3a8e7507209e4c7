"""Where the shared transcript fixtures live, and a skip with the reason when they are absent.

A module of its own: with a conftest.py in several test folders, ``import conftest`` names
whichever was loaded last.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRANSCRIPTS = SHARED / "fixtures" / "transcripts"


def shared_or_skip(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared fixtures are not checked out beside the project")
    return path
