"""Semantic recall through a real daemon on a real socket, with the model toka ships: the events
worth recalling are embedded after they commit, search and recall find what a question means,
each hit says what matched, and doctor, rebuild and a change of model do what docs/recall.md says."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import postgres_server
import pytest
from daemons import Spawned, Spawner, wait_for
from typer.testing import CliRunner, Result

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from toka_cli.main import app

DECISION = "persist the job queue in Redis streams rather than RabbitMQ"
LOGIN = (
    "I changed the login page so that the session cookie is renewed on every request and the timeout is now"
    " thirty minutes"
)
LAYOUT = (
    "The CSS of the settings screen now uses a grid layout with two columns, and the buttons are aligned to the"
    " right edge"
)
EVENTS: list[dict[str, Any]] = [
    {"session": "queue", "kind": "note.decision", "payload": {"text": DECISION}},
    {"session": "queue", "kind": "message", "agent": "main", "payload": {"text": LOGIN}},
    {"session": "queue", "kind": "message", "agent": "main", "payload": {"text": LAYOUT}},
    {"session": "queue", "kind": "note.todo", "payload": {"text": "write the release notes for version two"}},
    {"session": "queue", "kind": "tool.result", "payload": {"output": "the job queue test passed"}},
    {"session": "queue", "kind": "message", "payload": {"text": "checking the job queue now"}},  # 5 words
]
QUESTION = "which message broker did we settle on"  # no word of the decision


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def doctor_check(name: str) -> dict[str, Any]:
    checks = json.loads(invoke("doctor", "--json").stdout)["checks"]
    found: dict[str, Any] = next(check for check in checks if check["name"] == name)
    return found


def embedded(client: Client, count: int) -> dict[str, Any]:
    """recall.status once the embedder has read the whole log and stored ``count`` vectors."""
    return wait_for(
        lambda: (status := client.call("recall.status"))["behind"] == 0 and status["embedded"] == count and status,
        f"{count} events are embedded",
    )


def seeded(daemon: Spawned) -> Client:
    client = daemon.client()
    client.append(EVENTS)
    embedded(client, 4)  # the two notes and the two long messages: not the tool output, not 5 words
    return client


def hits(client: Client, query: str, **args: Any) -> list[tuple[int, str, str | None]]:
    found = client.call("search", query=query, **args)["hits"]
    return [(hit["seq"], hit["kind"], hit["matched"]) for hit in found]


def similarities(client: Client) -> dict[int, float]:
    found = client.call("search", query=QUESTION, semantic=True)["hits"]
    return {hit["seq"]: hit["similarity"] for hit in found}


def test_a_question_finds_the_decision_it_means_without_a_word_in_common(daemon: Spawned) -> None:
    with seeded(daemon) as client:
        assert hits(client, QUESTION, semantic=True)[0] == (1, "note.decision", "meaning")
        assert hits(client, QUESTION)[0] == (1, "note.decision", "meaning")  # the default: hybrid
        assert hits(client, QUESTION, fts=True) == []  # the words alone find nothing


def test_each_hit_says_whether_the_words_the_meaning_or_both_matched(daemon: Spawned) -> None:
    with seeded(daemon) as client:
        found = hits(client, "job queue")
        assert found[0] == (1, "note.decision", "both")
        assert (5, "tool.result", "words") in found and (6, "message", "words") in found  # not embedded
        assert {matched for _, _, matched in found} == {"both", "words", "meaning"}
        first = client.call("search", query="job queue")["hits"][0]
        assert first["similarity"] > 0.5 and first["snippet"].startswith("persist the «job queue»")
        exact = client.call("search", query="job queue", fts=True)["hits"]
        assert {hit["matched"] for hit in exact} == {"words"} and {hit["similarity"] for hit in exact} == {None}


def test_recall_ranks_its_matches_the_same_way(daemon: Spawned) -> None:
    with seeded(daemon) as client:
        items = client.call("recall", query=QUESTION, session="queue", limit=8)["items"]
        matches = [(item["seq"], item["matched"]) for item in items if item["why"] == "match"]
        assert matches[0] == (1, "meaning")
        recent = [item for item in items if item["why"] == "recent"]
        assert recent and all(item["matched"] in (None, "meaning") for item in recent)


def test_the_cli_shows_what_matched_and_refuses_fts_with_semantic(daemon: Spawned) -> None:
    seeded(daemon).close()
    result = invoke("search", QUESTION, "--semantic", "--limit", "1")
    assert result.exit_code == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split()[-2:] == ["matched", "snippet"]
    assert row.split()[:1] == ["1"] and " meaning " in row and DECISION[:30] in row
    both = invoke("search", QUESTION, "--semantic", "--fts")
    assert both.exit_code == 2 and "fts and semantic exclude each other" in both.stderr


def test_doctor_shows_the_model_and_the_lag_and_rebuild_embeds_again(daemon: Spawned) -> None:
    with seeded(daemon) as client:
        check = doctor_check("recall")
        assert check["status"] == "ok"
        assert check["detail"] == (
            "on: wordllama/l2_supercat-256, 4 events embedded, searched with "
            f"{client.call('recall.status')['method']}; 0 events behind the log"
        )
        rebuilt = client.call("admin.rebuild")
        assert rebuilt["embed_events"] == 5  # the embedded kinds: notes and messages, of which 4 are long enough
        status = embedded(client, 4)
        assert status["through_seq"] == 6


def test_a_new_model_embeds_the_log_again(spawn: Spawner, monkeypatch: pytest.MonkeyPatch) -> None:
    first = spawn()
    with seeded(first) as client:
        before = similarities(client)
    assert first.stop() == 0
    monkeypatch.delenv("TOKA_RECALL_EMBEDDING_MODEL")  # the tests' model (tests/warm_start.py): the file's from here on
    resolve_paths().config_file.write_text('[recall]\nembedding_model = "wordllama/l2_supercat-128"\n')
    second = spawn()
    with second.client() as client:
        status = embedded(client, 4)
        assert status["model"] == "wordllama/l2_supercat-128"
        after = similarities(client)
    assert sorted(after) == sorted(before) == [1, 2, 3, 4]  # the same events, embedded anew
    assert all(after[seq] != before[seq] for seq in before)


def test_with_semantic_recall_off_search_finds_words_and_semantic_says_why(spawn: Spawner) -> None:
    resolve_paths().config_file.write_text("[recall]\nsemantic = false\n")
    daemon = spawn()
    with daemon.client() as client:
        client.append(EVENTS)
        assert {matched for _, _, matched in hits(client, "job queue")} == {"words"}
        assert hits(client, QUESTION) == []
        status = client.call("recall.status")
        assert (status["semantic"], status["embedded"], status["method"]) == (False, None, None)
    refused = invoke("search", QUESTION, "--semantic")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        "error: semantic recall is off (recall.semantic = false)",
        "hint: toka config set recall.semantic true, or search by words (leave out --semantic)",
    ]


@pytest.mark.parametrize("model", ["bert-base", "wordllama/no_such_config-256"])
def test_a_model_that_cannot_load_is_a_problem_doctor_names(
    spawn: Spawner, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOKA_RECALL_EMBEDDING_MODEL")  # the tests' model (tests/warm_start.py), not the file's
    resolve_paths().config_file.write_text(f'[recall]\nembedding_model = "{model}"\n')
    daemon = spawn()
    with daemon.client() as client:
        status = wait_for(lambda: (found := client.call("recall.status"))["problem"] and found, "the model fails")
        assert status["problem"].startswith(f"recall.embedding_model '{model}'") and status["problem_in"] == "model"
        assert hits(client, "job queue") == []  # words still work, on an empty log
    check = doctor_check("recall")
    assert check["status"] == "problem" and check["detail"].startswith("semantic recall cannot run: ")


def test_on_postgresql_with_pgvector_a_question_is_answered_as_on_sqlite(
    spawn: Spawner, postgres_database: str
) -> None:
    if not postgres_server.offers_pgvector(postgres_database):
        pytest.skip("the run's PostgreSQL server has no pgvector")
    on_sqlite = spawn()
    with seeded(on_sqlite) as client:
        expected = client.call("search", query=QUESTION, semantic=True)["hits"]
    assert on_sqlite.stop() == 0
    daemon = spawn(env={"TOKA_BACKEND": "postgres", "TOKA_STORE_URL": postgres_database})
    with seeded(daemon) as client:
        assert client.call("recall.status")["method"] == "pgvector"
        found = client.call("search", query=QUESTION, semantic=True)["hits"]
        assert [(hit["seq"], hit["kind"], hit["matched"]) for hit in found] == [
            (hit["seq"], hit["kind"], hit["matched"]) for hit in expected
        ]
        assert [hit["similarity"] for hit in found] == pytest.approx([hit["similarity"] for hit in expected], abs=1e-5)
        assert hits(client, QUESTION)[0] == (1, "note.decision", "meaning")  # hybrid
        assert hits(client, "job queue")[0] == (1, "note.decision", "both")
    result = invoke("search", QUESTION, "--semantic", "--limit", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1].split()[:1] == ["1"] and " meaning " in result.stdout


@pytest.fixture
def database_without_pgvector(postgres_url: str) -> Iterator[str]:
    """A database on a server without pgvector: the run's when it has none, else a server of this
    test's own from an installed one that has none (Debian's, when the run's is pgserver's)."""
    if not postgres_server.offers_pgvector(postgres_url):
        with postgres_server.database(postgres_url) as url:
            yield url
        return
    bindir = postgres_server.bindir_without_pgvector()
    if bindir is None:
        pytest.skip("every PostgreSQL server installed here has pgvector")
    try:
        server = postgres_server.start(bindir=bindir)
    except postgres_server.Unavailable as error:
        pytest.fail(f"the server of {bindir}, which has no pgvector, does not start: {error}", pytrace=False)
    try:
        with postgres_server.database(server.url) as url:
            yield url
    finally:
        postgres_server.stop(server)


def test_on_postgresql_without_pgvector_semantic_recall_says_what_to_install(
    spawn: Spawner, database_without_pgvector: str
) -> None:
    daemon = spawn(env={"TOKA_BACKEND": "postgres", "TOKA_STORE_URL": database_without_pgvector})
    with daemon.client() as client:

        def answered() -> dict[str, Any] | None:
            found: dict[str, Any] = client.call("recall.status")
            return found if found["problem"] or found["embedded"] is not None else None

        status = wait_for(answered, "the index answers")
        assert status["problem"] == "the PostgreSQL server has no pgvector extension, which semantic recall needs"
        assert status["hint"].startswith("install pgvector on the PostgreSQL server (Debian, Ubuntu: apt install")
        assert status["problem_in"] == "index"
        client.append(EVENTS)
        assert {matched for _, _, matched in hits(client, "job queue")} == {"words"}  # words still found
    refused = invoke("search", QUESTION, "--semantic")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "error: semantic recall cannot run: the PostgreSQL server has no pgvector extension"
    )
    assert doctor_check("recall")["status"] == "warning"  # the log works, and search finds words


PATHS: list[dict[str, Any]] = [
    {
        "session": "paths",
        "kind": "message",
        "payload": {
            "text": "I moved the retry of the login request into src/auth/login.py and left the session code alone"
        },
    },
    {
        "session": "paths",
        "kind": "message",
        "payload": {
            "text": "The login request now retries three times with a jittered backoff before it gives up on the server"
        },
    },
    {
        "session": "paths",
        "kind": "note.decision",
        "payload": {"text": "keep the authentication code in one module so that the login retries are easy to find"},
    },
]


def test_a_path_is_found_as_written_and_not_by_what_its_pieces_mean(daemon: Spawned) -> None:
    with daemon.client() as client:
        client.append(PATHS)
        embedded(client, 3)
        # The other two are near in meaning to the path's pieces (auth, login): they are not it.
        assert hits(client, "src/auth/login.py", semantic=True)[1:]  # the meaning alone finds them
        assert hits(client, "src/auth/login.py") == [(1, "message", "words")]
        assert hits(client, "login retries")[0][2] == "both"  # words with spaces: fused as before
        assert hits(client, "src/billing/invoice.py")[:1] != []  # no word match: the meaning answers
