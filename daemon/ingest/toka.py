"""Toka's own JSON-lines format, as `toka export` writes it.

A line that carries an ``id`` must hash to it (the header is recomputed from the line), so an
edited export is reported, not silently stored under a new id; lines without ``id``/``parents``
are plain new events chained onto their session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from daemon.ingest.lines import BadLine, ParseStats
from daemon.ingest.parser import State, parse_whole
from store.errors import InvalidEvent, UsageError
from store.events import canonical_json, digest, header_id, parse_new_event

FIELDS = ("session", "agent", "kind", "ts", "parents", "key", "payload")


def check_line(data: dict[str, Any]) -> dict[str, Any]:
    """Validate one exported event; raises InvalidEvent when it is not one, or was edited."""
    new = parse_new_event(data)
    if "id" in data:
        if new.ts is None or new.parents is None:
            raise InvalidEvent("an event with an id must also carry its ts and parents")
        payload_digest = digest(canonical_json(new.payload))
        expected = header_id(new.session, new.agent, new.kind, new.ts, new.parents, payload_digest, new.key)
        if expected != data["id"]:
            raise InvalidEvent("the event does not hash to its id: it was changed after export")
    return {name: data[name] for name in FIELDS if name in data}


def parse_toka(path: Path, stats: ParseStats) -> Iterator[dict[str, Any]]:
    return parse_whole(TokaParser, path, stats)


class TokaParser:
    """Each line is an event of its own (see daemon.ingest.parser): no state at all."""

    def __init__(self, path: Path, stats: ParseStats, state: State | None = None) -> None:
        self.path = path
        self.stats = stats

    def feed(self, number: int, raw: bytes, record: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            event = check_line(record)
        except UsageError as exc:
            self.stats.bad_lines.append(BadLine(str(self.path), number, exc.message))
            return []
        self.stats.events += 1
        return [event]

    def flush(self, end: bool = True) -> list[dict[str, Any]]:
        return []

    def snapshot(self) -> State:
        return {}
