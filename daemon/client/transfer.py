"""Importing files into the log: toka's own export format, Claude Code transcripts, Codex rollouts.

Each file is read by its importer (named, or detected from its first records; see
``daemon.ingest``), streamed line by line and appended in batches. Every imported event
carries an idempotency key or its own id, so the store skips what it holds already: importing a
file twice, or a file that has grown, adds only what is new. Bad lines are skipped and reported
as file:line with the reason; nothing of a bad line is stored, and a batch is atomic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.client.sync import Client
from daemon.ingest.formats import PARSERS, detect, expand
from daemon.ingest.lines import BadLine, ParseStats, unknown_type

if TYPE_CHECKING:
    from daemon.client.results import ImportReport

# Events per append request: large enough to amortise the round trip and the commit.
IMPORT_BATCH = 1000


@dataclass
class ImportSummary:
    files: int = 0
    events: int = 0
    created: int = 0
    existing: int = 0
    sessions: set[str] = field(default_factory=set)
    formats: Counter[str] = field(default_factory=Counter)
    stats: ParseStats = field(default_factory=ParseStats)
    unknown_created: Counter[str] = field(default_factory=Counter)  # raw events new to the log, by type

    @property
    def bad_lines(self) -> list[BadLine]:
        return self.stats.bad_lines

    def to_json(self) -> ImportReport:
        return {
            "files": self.files,
            "formats": dict(self.formats),
            "events": self.events,
            "created": self.created,
            "existing": self.existing,
            "sessions": sorted(self.sessions),
            "unknown_types": dict(self.stats.unknown_types),
            "unknown_types_created": dict(self.unknown_created),
            "bad_lines": [{"path": b.path, "line": b.line, "reason": b.reason} for b in self.bad_lines],
        }


def import_files(
    client: Client,
    paths: Iterable[Path],
    fmt: str = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> ImportSummary:
    """Import every file (folders expanded) through ``client``.

    ``progress(done, total)`` is called in bytes of the files: after each batch sent, so the
    bar moves within a large file too, and after each file; the last call has done == total.
    """
    files = expand(paths, fmt)
    sizes = [_size(p) for p in files]
    total = sum(sizes)
    summary = ImportSummary()
    sender = _Sender(client, summary)
    done = 0  # bytes of the files finished

    def report_within(start: int, size: int) -> None:
        # The size was taken before reading: a file that grew meanwhile is counted as it was.
        if progress is not None:
            progress(done + min(summary.stats.bytes_read - start, size), total)

    for path, size in zip(files, sizes, strict=True):
        summary.files += 1
        chosen = fmt if fmt != "auto" else detect(path)
        if chosen is None:
            if size:
                summary.bad_lines.append(BadLine(str(path), 0, "not a format toka knows (name one with --format)"))
        else:
            summary.formats[chosen] += 1
            start = summary.stats.bytes_read
            batch: list[dict[str, Any]] = []
            try:
                for event in PARSERS[chosen](path, summary.stats):
                    batch.append(event)
                    if len(batch) >= IMPORT_BATCH:
                        sender.send(batch)
                        batch = []
                        report_within(start, size)
            except OSError as exc:  # the file vanished or became unreadable mid-way
                summary.bad_lines.append(BadLine(str(path), 0, f"cannot read: {exc.strerror}"))
            sender.send(batch)
        done += size
        if progress is not None:
            progress(done, total)
    sender.settle()
    return summary


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _Sender:
    """Appends batches with one request in flight: the daemon commits a batch while the next is
    parsed, instead of the two waiting on each other."""

    def __init__(self, client: Client, summary: ImportSummary) -> None:
        self._client = client
        self._summary = summary
        self._in_flight: tuple[int, list[dict[str, Any]]] | None = None

    def send(self, batch: list[dict[str, Any]]) -> None:
        if not batch:
            return
        request_id = self._client.submit("events.append", events=batch)
        self.settle()
        self._in_flight = (request_id, batch)

    def settle(self) -> None:
        """Count the answer of the request in flight, if any (raising its error, if it failed)."""
        if self._in_flight is None:
            return
        request_id, batch = self._in_flight
        self._in_flight = None
        results = self._client.result(request_id)["events"]
        summary = self._summary
        summary.events += len(results)
        summary.created += sum(1 for r in results if r["created"])
        summary.existing += sum(1 for r in results if not r["created"])
        for event, result in zip(batch, results, strict=True):
            if result["created"] and event["kind"] == "raw":
                summary.unknown_created[unknown_type(event["payload"].get("record"))] += 1
        summary.sessions.update(e["session"] for e in batch)
