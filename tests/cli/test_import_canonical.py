"""`toka import` sends each payload as its canonical JSON text with its blake3 digest
(docs/protocol.md, "An event to append"): the log it makes is byte for byte the log of the same
import sent as payload objects; a digest that does not match its bytes, or bytes that are not
canonical, are refused with their request and nothing of it is stored; `--wait` returns once
the search index holds what was imported.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3
from cli_support import EXAMPLE, toka
from daemons import Spawned, spawn_daemon, stop_spawned
from transcripts import shared_or_skip

from daemon.client.transfer import import_files
from daemon.paths import resolve_paths
from store.errors import InvalidEvent, NotFound
from store.rows import decode_blob

CLAUDE = ("fixtures", "transcripts", "claude", "jazzyalex__stage0_claude_small.jsonl")
CODEX_FOLDER = ("fixtures", "transcripts", "codex")


def _canonical(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _wire(session: str, key: str, text: str, digest: str | None = None) -> dict[str, Any]:
    """An event in the canonical form, its digest that of ``text`` unless given."""
    sent = digest if digest is not None else blake3(text.encode()).hexdigest()
    return {"session": session, "kind": "message", "key": key, "canonical": text, "digest": sent}


def _log(home: Path) -> tuple[list[tuple[Any, ...]], dict[str, bytes]]:
    """The events rows in seq order and every blob's payload bytes by digest, read from the file."""
    with closing(sqlite3.connect(f"file:{home}/toka.db?mode=ro", uri=True)) as db:
        events = db.execute("SELECT * FROM events ORDER BY seq").fetchall()
        blobs = {row[0]: decode_blob(row[1], row[2]) for row in db.execute("SELECT digest, codec, data FROM blobs")}
    return events, blobs


def _verify(home: Path) -> dict[str, Any]:
    done = toka("verify", "--json", env={"TOKA_HOME": str(home)}, timeout=120)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture
def second_daemon(other_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Spawned]:
    """A daemon of its own in ``other_home``."""
    with monkeypatch.context() as patch:
        patch.setenv("TOKA_HOME", str(other_home))
        paths = resolve_paths()
    running = spawn_daemon(paths, tmp_path / "second.log", env={"TOKA_HOME": str(other_home)})
    yield running
    stop_spawned(running)


def test_the_canonical_form_stores_the_same_blobs_and_chain_as_payload_objects(
    daemon: Spawned, second_daemon: Spawned, toka_home: Path, other_home: Path
) -> None:
    files = [shared_or_skip(*CLAUDE), EXAMPLE, *sorted(shared_or_skip(*CODEX_FOLDER).glob("*.jsonl"))[:1]]
    with daemon.client() as client:
        assert client.canonical_payloads
        sent = import_files(client, files)
    with second_daemon.client() as client:
        client.server["canonical_payloads"] = False  # as a daemon that does not take the form says
        objects = import_files(client, files)
    assert (sent.events, sent.created, sent.existing) == (objects.events, objects.created, objects.existing)
    assert sent.created > 400
    assert sent.bad_lines == objects.bad_lines == []
    events, blobs = _log(toka_home)
    events_objects, blobs_objects = _log(other_home)
    assert events == events_objects  # seq, id, session, agent, kind, ts, parents, digest, key
    assert blobs == blobs_objects
    assert all(blake3(data).hexdigest() == name for name, data in blobs.items())
    verified, verified_objects = _verify(toka_home), _verify(other_home)
    assert verified["ok"] and verified_objects["ok"]
    assert verified["events"] == verified_objects["events"] == len(events)
    # Both logs signed at their whole length: the same Merkle root, each head checked.
    heads, heads_objects = verified["heads"], verified_objects["heads"]
    assert heads["covered"] == heads_objects["covered"] == len(events)
    assert heads["valid"] == heads["heads"] and heads_objects["valid"] == heads_objects["heads"]
    assert heads["latest"]["root"] == heads_objects["latest"]["root"]


def test_a_digest_that_does_not_match_its_bytes_is_refused_and_the_other_batches_kept(daemon: Spawned) -> None:
    good = _canonical({"text": "kept before"})
    bad = _canonical({"text": "never stored"})
    with daemon.client() as client:
        first = client.call("events.append", events=[_wire("canon", "a", good)])
        with pytest.raises(InvalidEvent) as refused:
            client.call(
                "events.append",
                events=[_wire("canon", "b", good.replace("before", "alongside")), _wire("canon", "c", bad, "0" * 64)],
            )
        last = client.call("events.append", events=[_wire("canon", "d", _canonical({"text": "kept after"}))])
        stored = client.call("events.query", session="canon")["events"]
        with pytest.raises(NotFound):
            client.call("blobs.get", digest=blake3(bad.encode()).hexdigest())
    assert refused.value.message == (
        "the message event 'c' of session 'canon': the digest sent does not match its payload's bytes"
    )
    assert "\n" not in refused.value.message
    assert [e["key"] for e in stored] == ["a", "d"]
    assert [e["payload"] for e in stored] == [{"text": "kept before"}, {"text": "kept after"}]
    assert [e["seq"] for e in stored] == [first["events"][0]["seq"], last["events"][0]["seq"]]
    assert stored[1]["parents"] == [stored[0]["id"]]


@pytest.mark.parametrize(
    "text",
    [
        '{"b":1,"a":2}',  # keys out of order
        '{"a": 2}',  # whitespace
        '{"a":"\\u00e9"}',  # an escape canonical JSON writes as the character
        '{"a":1.50}',  # a number not as Python writes it
        '{"a":1,"a":1}',  # a key twice
        "[1]",  # not an object
        "{",  # not JSON
    ],
)
def test_bytes_that_are_not_canonical_are_refused_and_nothing_stored(daemon: Spawned, text: str) -> None:
    with daemon.client() as client:
        with pytest.raises(InvalidEvent) as refused:
            client.call("events.append", events=[_wire("canon", "k", text)])
        assert client.call("sessions.list")["sessions"] == []
    assert "\n" not in refused.value.message
    assert refused.value.message in (
        "the message event 'k' of session 'canon': its payload is not canonical JSON"
        " (sorted keys, no whitespace, UTF-8 unescaped)",
        "canonical is not the text of a JSON value",
        "payload must be a JSON object, not list",
    )


def test_a_payload_sent_both_ways_is_one_event(daemon: Spawned) -> None:
    payload = {"z": [1, 2.5, None], "a": {"é": "ü\n"}, "m": True}
    with daemon.client() as client:
        as_text = client.call("events.append", events=[_wire("both", "k", _canonical(payload))])["events"][0]
        as_object = client.call(
            "events.append", events=[{"session": "both", "kind": "message", "key": "k", "payload": payload}]
        )
        (stored,) = client.call("events.query", session="both")["events"]
    assert as_text["created"] and not as_object["events"][0]["created"]
    assert as_object["events"][0]["id"] == as_text["id"] == stored["id"]
    assert stored["digest"] == blake3(_canonical(payload).encode()).hexdigest()
    assert stored["payload"] == payload


def test_import_wait_returns_once_the_search_index_holds_the_text(toka_home: Path, tmp_path: Path) -> None:
    word = "zanzibarquokka"
    records = [
        {"type": "user", "uuid": f"u{n}", "sessionId": "5e0d9a3c-0b1e-4c55-9a43-0d6f2b1f9e12",
         "timestamp": f"2026-03-01T10:00:{n:02d}.000Z",
         "message": {"role": "user", "content": f"message {n} about the {word} {n}"}}
        for n in range(40)
    ]  # fmt: skip
    path = tmp_path / "wait.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = toka("import", str(path), "--wait", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] == 40
    # Read from the file itself, as no daemon read would (a search applies what is left first).
    with closing(sqlite3.connect(f"file:{toka_home}/toka.db?mode=ro", uri=True)) as db:
        hits = db.execute("SELECT count(*) FROM search_index WHERE search_index MATCH ?", (word,)).fetchone()[0]
    assert hits == 40
    found = toka("search", word, "--json", "--limit", "100")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)["hits"]) == 40
