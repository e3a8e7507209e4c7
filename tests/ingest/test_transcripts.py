"""Listing the transcripts under a folder: each session before its subagents, every file once."""

from __future__ import annotations

import pytest
from transcripts import TRANSCRIPTS

from daemon.ingest.transcripts import find_transcripts

CLAUDE = TRANSCRIPTS / "claude"


def test_find_transcripts_lists_each_session_before_its_subagents() -> None:
    if not CLAUDE.is_dir():
        pytest.skip(f"{CLAUDE} is absent: the shared fixtures are not checked out beside the project")
    files = find_transcripts(CLAUDE)
    assert sorted(files) == sorted(CLAUDE.rglob("*.jsonl"))
    for index, path in enumerate(files):
        if path.parent.name == "subagents":
            main = path.parent.parent.with_suffix(".jsonl")
            assert files.index(main) < index
