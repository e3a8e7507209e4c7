"""The ``search``, ``recall`` and ``search.rebuild`` operations of a real daemon on a real socket, by
words: the daemons here embed nothing (the ranking by meaning has its own tests, test_recall_*.py),
since a summary of three words is embedded, and its hit would join theirs whenever the embedder
had caught up before the search."""

from __future__ import annotations

from typing import Any

import pytest
from daemons import Spawned

from daemon.client.sync import Client
from store.errors import NotFound, UsageError
from store.search import MARK_END, MARK_START

HIT_KEYS = {"seq", "id", "session", "agent", "kind", "ts", "digest", "score", "snippet", "matched", "similarity"}


@pytest.fixture(autouse=True)
def words_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKA_RECALL_SEMANTIC", "false")


def seed(client: Client) -> None:
    client.append(
        [
            {"session": "auth-1", "kind": "message", "agent": "main", "payload": {"text": "the login times out"}},
            {"session": "auth-1", "kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "make test"}}},
            {"session": "auth-1", "kind": "tool.result", "payload": {"output": "login test failed: timeout"}},
            {"session": "auth-1", "kind": "compression", "payload": {"summary": "tried login retries; no luck"}},
            {"session": "auth-1", "kind": "usage", "payload": {"input_tokens": 10}},
            {"session": "auth-1", "kind": "message", "payload": {"text": "now looking at the pool"}},
            {"session": "deploy", "kind": "message", "agent": "ops", "payload": {"text": "login works on staging"}},
            # The same payload as auth-1's tool result: recall shows it once.
            {"session": "deploy", "kind": "tool.result", "payload": {"output": "login test failed: timeout"}},
        ]
    )


def test_search_answers_hits_in_the_documented_shape(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)
        hits = client.call("search", query="timeout")["hits"]
    assert [hit["seq"] for hit in hits][:1] in ([3], [8])
    assert sorted(hit["seq"] for hit in hits) == [3, 8]
    for hit in hits:
        assert set(hit) == HIT_KEYS
        assert hit["ts"].endswith("Z") and isinstance(hit["score"], float)
        assert f"{MARK_START}timeout{MARK_END}" in hit["snippet"]


def test_search_filters(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)

        def seqs(**args: Any) -> list[int]:
            return sorted(hit["seq"] for hit in client.call("search", query="login", **args)["hits"])

        assert seqs() == [1, 3, 4, 7, 8]
        assert seqs(session="auth") == [1, 3, 4]  # a unique prefix of the session
        assert seqs(agent="ops") == [7]
        assert seqs(kinds=["tool.*"]) == [3, 8]
        assert seqs(since="2000-01-01T00:00:00Z", limit=2) != []
        assert len(client.call("search", query="login", limit=2)["hits"]) == 2
        assert seqs(until="2000-01-01T00:00:00Z") == []


@pytest.mark.parametrize(
    "args",
    [
        {"query": '"open', "fts": True},
        {"query": "login AND", "fts": True},
        {"query": "--"},
        {},
        {"query": 5},
        {"query": "login", "limit": 0},
        {"query": "login", "fts": "yes"},
    ],
    ids=["quote", "dangling", "no word", "missing", "not text", "limit", "fts not a flag"],
)
def test_bad_searches_are_usage_errors(module_daemon: Spawned, args: dict[str, Any]) -> None:
    with module_daemon.client() as client:
        seed(client)
        with pytest.raises(UsageError):
            client.call("search", **args)


def test_a_malformed_query_names_the_fix(daemon: Spawned) -> None:
    with daemon.client() as client, pytest.raises(UsageError) as caught:
        client.call("search", query="login-timeout", fts=True)
    assert caught.value.hint is not None and "double quotes" in caught.value.hint
    assert "without FTS syntax" in caught.value.hint


def test_queries_are_searched_as_written_unless_fts_is_asked_for(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)
        client.record("auth-1", "tool.call", {"tool": "Bash", "input": {"command": "bash hooks/tmux-waiting.sh"}})
        as_written = client.call("search", query="hooks/tmux-waiting.sh")["hits"]
        assert [hit["kind"] for hit in as_written] == ["tool.call"]
        assert f"{MARK_START}hooks/tmux-waiting.sh{MARK_END}" in as_written[0]["snippet"]
        assert client.call("search", query="login OR pool")["hits"] == []  # OR is a word
        assert len(client.call("search", query="login OR pool", fts=True)["hits"]) == 6
        assert client.call("recall", query="tmux-waiting.sh", session="auth-1")["items"]


def test_recall_gathers_recent_events_matches_and_summaries(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)
        result = client.call("recall", query="login", session="auth-1")
    assert (result["query"], result["session"]) == ("login", "auth-1")
    items = result["items"]
    why = [(item["why"], item["seq"]) for item in items]
    # The latest events with text (a quarter of 10), the session's summary, then the matches not
    # shown yet: in the session first, then elsewhere; seq 8 holds the same payload as seq 3.
    assert why == [("recent", 6), ("recent", 3), ("summary", 4), ("match", 1), ("match", 7)]
    for item in items:
        assert set(item) == HIT_KEYS | {"why"}
    latest, matched_recent, summary = items[:3]
    assert latest["score"] is None and latest["snippet"] == "now looking at the pool"
    assert matched_recent["score"] is not None and MARK_START in matched_recent["snippet"]
    assert summary["score"] is not None and MARK_START in summary["snippet"]  # it matched too
    assert len({item["id"] for item in items}) == len({item["digest"] for item in items}) == len(items)


def test_recall_is_capped(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)
        items = client.call("recall", query="login", session="auth-1", limit=2)["items"]
        assert [item["why"] for item in items] == ["recent", "summary"]
        with pytest.raises(UsageError):
            client.call("recall", query="login")
        with pytest.raises(NotFound):
            client.call("recall", query="login", session="nope")


def test_search_rebuild_reindexes_every_event_with_text(daemon: Spawned) -> None:
    with daemon.client() as client:
        seed(client)
        before = client.call("search", query="login OR pool")
        assert client.call("search.rebuild") == {"events": 7}
        assert client.call("search", query="login OR pool") == before
