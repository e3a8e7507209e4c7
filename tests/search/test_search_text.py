"""What text each kind of event adds to the search index: a pure function of kind and payload."""

from __future__ import annotations

import pytest

from store.search import MARK_END, MARK_START, MAX_INDEXED_CHARS, indexed_text, snippet, tokens


@pytest.mark.parametrize(
    ("kind", "payload", "expected"),
    [
        ("message", {"role": "user", "text": "fix the login timeout"}, "fix the login timeout"),
        ("thinking", {"text": "maybe the pool is exhausted"}, "maybe the pool is exhausted"),
        ("tool.call", {"tool": "Bash", "input": {"command": "pytest -x", "timeout": 5}}, "Bash\npytest -x"),
        ("tool.call", {"tool": "apply_patch", "input": "*** Begin Patch"}, "apply_patch\n*** Begin Patch"),
        ("tool.result", {"output": "3 passed", "is_error": False}, "3 passed"),
        ("note.decision", {"text": "use a pool", "reason": "fewer sockets"}, "use a pool\nfewer sockets"),
        ("memory.set", {"key": "db", "value": {"host": "localhost", "ports": ["5432"]}}, "db\nlocalhost\n5432"),
        ("compression", {"summary": "the agent fixed the timeout", "ratio": 0.4}, "the agent fixed the timeout"),
        ("compaction", {"summary": "earlier work on auth"}, "earlier work on auth"),
        ("handoff", {"markdown": "# Handoff\nnext: deploy", "prompt": "continue"}, "# Handoff\nnext: deploy"),
        ("handoff", {"prompt": "continue the deploy"}, "continue the deploy"),
        ("session.title", {"title": "Login bug"}, "Login bug"),
    ],
)
def test_each_kind_adds_its_words(kind: str, payload: dict, expected: str) -> None:
    assert indexed_text(kind, payload) == expected


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("usage", {"input_tokens": 12, "model": "claude"}),
        ("lifecycle", {"state": "ACTIVE"}),
        ("raw", {"record": {"text": "not indexed"}}),
        ("message", {"role": "user", "text": "   "}),
        ("tool.result", {"output": None}),
    ],
)
def test_events_without_words_add_nothing(kind: str, payload: dict) -> None:
    assert indexed_text(kind, payload) is None


def test_the_text_of_one_event_is_bounded() -> None:
    text = indexed_text("tool.result", {"output": "word " * 100_000})
    assert text is not None and len(text) == MAX_INDEXED_CHARS
    many = indexed_text("tool.call", {"tool": "x", "input": {str(i): "abc" for i in range(100_000)}})
    assert many is not None and len(many) <= MAX_INDEXED_CHARS


def test_tokens_are_cut_as_fts5_cuts_them() -> None:
    assert tokens("test_login.py Café-42") == ["test", "login", "py", "café", "42"]


def test_snippet_marks_neighbouring_matches_together() -> None:
    text = "the login timeout fails"
    assert snippet(text, {1, 2}) == f"the {MARK_START}login timeout{MARK_END} fails"
