"""Toka's own JSON-lines format: export a session, import it again with identical ids.

Each line is one event in the shape of docs/json.md. On import, a line that carries an ``id``
must hash to it (the header is recomputed from the line), so an edited export is reported, not
silently stored under a new id; lines without ``id``/``parents`` are plain new events chained
onto their session. Lines are read as bytes and decoded one by one, so a binary or truncated file
costs its bad lines only. Appends go in batches, and an event already in the log is skipped by
the store (same id, or same idempotency key): importing a file twice adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.client import Client
from store.errors import InvalidEvent, NotFound, UsageError
from store.events import canonical_json, digest, header_id, parse_new_event

# Events per append request: large enough to amortise the round trip and the commit.
IMPORT_BATCH = 1000


@dataclass(frozen=True)
class BadLine:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class ImportSummary:
    files: int = 0
    events: int = 0
    created: int = 0
    existing: int = 0
    sessions: set[str] = field(default_factory=set)
    bad_lines: list[BadLine] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "events": self.events,
            "created": self.created,
            "existing": self.existing,
            "sessions": sorted(self.sessions),
            "bad_lines": [{"path": b.path, "line": b.line, "reason": b.reason} for b in self.bad_lines],
        }


def check_line(data: Any) -> dict[str, Any]:
    """Validate one exported event; raises InvalidEvent when it is not one, or was edited."""
    new = parse_new_event(data)
    if "id" in data:
        if new.ts is None or new.parents is None:
            raise InvalidEvent("an event with an id must also carry its ts and parents")
        payload_digest = digest(canonical_json(new.payload))
        expected = header_id(new.session, new.agent, new.kind, new.ts, new.parents, payload_digest, new.key)
        if expected != data["id"]:
            raise InvalidEvent("the event does not hash to its id: it was changed after export")
    return {k: data[k] for k in ("session", "agent", "kind", "ts", "parents", "key", "payload") if k in data}


def read_lines(path: Path) -> Iterator[tuple[int, int, dict[str, Any] | BadLine]]:
    """(line number, bytes read so far, event or BadLine) for each non-blank line."""
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                data = json.loads(raw.decode("utf-8"))
                if not raw.endswith(b"\n") and not isinstance(data, dict):
                    raise ValueError("truncated last line")
                yield number, offset, check_line(data)
            except UnicodeDecodeError:
                yield number, offset, BadLine(str(path), number, "not UTF-8 text")
            except ValueError as exc:
                yield number, offset, BadLine(str(path), number, f"not JSON ({exc})")
            except UsageError as exc:
                yield number, offset, BadLine(str(path), number, exc.message)


def expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given, and the *.jsonl files under folders; NotFound for a path that is missing."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.exists():
            files.append(path)
        else:
            raise NotFound(f"no file at {path}", "check the path")
    return files


def import_files(
    client: Client, paths: Iterable[Path], progress: Callable[[int, int], None] | None = None
) -> ImportSummary:
    files = expand(paths)
    total = sum(p.stat().st_size for p in files)
    summary = ImportSummary()
    done_before = 0
    for path in files:
        summary.files += 1
        batch: list[dict[str, Any]] = []
        read = 0
        try:
            for _, read, item in read_lines(path):
                if isinstance(item, BadLine):
                    summary.bad_lines.append(item)
                    continue
                batch.append(item)
                if len(batch) >= IMPORT_BATCH:
                    _send(client, batch, summary)
                    if progress is not None:
                        progress(done_before + read, total)
        except OSError as exc:  # the file vanished or became unreadable mid-way
            summary.bad_lines.append(BadLine(str(path), 0, f"cannot read: {exc.strerror}"))
        _send(client, batch, summary)
        done_before += path.stat().st_size if path.exists() else read
        if progress is not None:
            progress(done_before, total)
    return summary


def _send(client: Client, batch: list[dict[str, Any]], summary: ImportSummary) -> None:
    if not batch:
        return
    results = client.append(batch)
    summary.events += len(results)
    summary.created += sum(1 for r in results if r["created"])
    summary.existing += sum(1 for r in results if not r["created"])
    summary.sessions.update(e["session"] for e in batch)
    batch.clear()
