"""The validity footer: the digest verifies, and any change to the events changes it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from daemon.handoff import Subject, build_handoff, document_digest, render_json
from store.base import EventQuery
from store.ephemeral import EphemeralStore
from store.events import Event, canonical_json, digest, parse_new_event

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
SUBJECT = Subject(agent="main", session="fix-login-timeout", state="ACTIVE")


def example_events() -> list[Event]:
    async def load() -> list[Event]:
        store = EphemeralStore()
        await store.append([parse_new_event(json.loads(line)) for line in EXAMPLE.read_text().splitlines()])
        return await store.query(EventQuery(session="fix-login-timeout"))

    return asyncio.run(load())


def test_footer_digest_is_the_digest_of_the_document_without_it() -> None:
    document = build_handoff(example_events(), SUBJECT)
    data = render_json(document)
    stored = json.loads(json.dumps(data))  # as a reader gets it back
    without = {**stored, "footer": {k: v for k, v in stored["footer"].items() if k != "digest"}}
    assert stored["footer"]["digest"] == digest(canonical_json(without)) == document_digest(stored)
    assert len(document.digest) == 64


def test_building_twice_gives_the_same_digest() -> None:
    events = example_events()
    assert build_handoff(events, SUBJECT).digest == build_handoff(events, SUBJECT).digest


def test_a_changed_event_changes_the_digest() -> None:
    events = example_events()
    before = build_handoff(events, SUBJECT)
    decision = next(i for i, e in enumerate(events) if e.kind == "note.decision")
    changed = list(events)
    changed[decision] = replace(events[decision], payload={**events[decision].payload, "text": "Retry 5 times"})
    after = build_handoff(changed, SUBJECT)
    assert after.digest != before.digest
    assert document_digest(render_json(after)) == after.digest


def test_a_tampered_document_no_longer_verifies() -> None:
    data = render_json(build_handoff(example_events(), SUBJECT))
    data["decisions"][0]["text"] = "Retry forever"
    assert document_digest(data) != data["footer"]["digest"]


def test_a_new_head_changes_the_footer_and_the_digest() -> None:
    events = example_events()
    assert build_handoff(events[:-1], SUBJECT).digest != build_handoff(events, SUBJECT).digest
