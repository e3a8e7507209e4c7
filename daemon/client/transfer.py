"""Importing files into the log: toka's own export format, Claude Code transcripts, Codex rollouts.

Each file is read by its importer (named, or detected from its first records; see
``daemon.ingest``), streamed line by line and appended in requests cut to the daemon's line
limit (daemon/client/appends.py). Every imported event carries an idempotency key or its own id,
so the store skips what it holds already: importing a file twice, or a file that has grown,
adds only what is new. Bad lines are skipped and reported as file:line with the reason; nothing
of a bad line is stored, and a request is atomic. A record too large for any request is stored
truncated and reported the same way, as file:line naming its key.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.client.appends import Appends, Prepared
from daemon.client.sync import Client
from daemon.contract.kinds import Kind
from daemon.ingest.formats import FOLLOWERS, detect, expand
from daemon.ingest.lines import BadLine, ParseStats, unknown_type
from daemon.ingest.parser import parse_numbered

if TYPE_CHECKING:
    from daemon.contract.results import ImportReport


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

    def count(self, events: list[Prepared], results: list[dict[str, Any]]) -> None:
        """Count the answer to one request."""
        self.events += len(results)
        self.created += sum(1 for r in results if r["created"])
        self.existing += sum(1 for r in results if not r["created"])
        for prepared, result in zip(events, results, strict=True):
            if result["created"] and prepared.event["kind"] == Kind.RAW:
                self.unknown_created[unknown_type(prepared.event["payload"].get("record"))] += 1
        self.sessions.update(p.event["session"] for p in events)


def import_files(
    client: Client,
    paths: Iterable[Path],
    fmt: str = "auto",
    progress: Callable[[int, int, str], None] | None = None,
    wait: bool = False,
) -> ImportSummary:
    """Import every file (folders expanded) through ``client``.

    It returns once the daemon has acknowledged every event, that is once the log holds them; the
    daemon applies them to its search index and session tables behind that, within moments (a
    search or a listing applies what is left first). With ``wait`` it returns once they are
    applied.

    ``progress(done, total, name)`` is called in bytes of the files, with the name of the file
    being read: after each request sent, so the bar moves within a large file too, and after each
    file; the last call has done == total.
    """
    files = expand(paths, fmt)
    sizes = [_size(p) for p in files]
    total = sum(sizes)
    summary = ImportSummary()
    appends = Appends(client, summary.count)
    done = 0  # bytes of the files finished

    def report_within(start: int, size: int) -> None:
        # The size was taken before reading: a file that grew meanwhile is counted as it was.
        if progress is not None:
            progress(done + min(summary.stats.bytes_read - start, size), total, path.name)

    for path, size in zip(files, sizes, strict=True):
        summary.files += 1
        chosen = fmt if fmt != "auto" else detect(path)
        if _json_array(path):
            summary.bad_lines.append(BadLine(str(path), 0, JSON_ARRAY))
        elif chosen is None:
            if size:
                summary.bad_lines.append(BadLine(str(path), 0, "not a format toka knows (name one with --format)"))
        else:
            summary.formats[chosen] += 1
            start = summary.stats.bytes_read
            appends.source = str(path)
            try:
                for line, event in parse_numbered(FOLLOWERS[chosen], path, summary.stats):
                    sent = appends.requests
                    truncation = appends.add(event).truncation
                    if truncation is not None:
                        summary.bad_lines.append(BadLine(str(path), line, truncation.reason()))
                    if appends.requests != sent:
                        report_within(start, size)
            except OSError as exc:  # the file vanished or became unreadable mid-way
                summary.bad_lines.append(BadLine(str(path), 0, f"cannot read: {exc.strerror}"))
            appends.flush()  # a request holds one file's events, so that its errors name the file
        done += size
        if progress is not None:
            progress(done, total, path.name)
    appends.settle()
    if wait:
        client.call("log.applied")
    return summary


# A JSON document holding an array (hook payloads logged by a hook script, Gemini CLI's logs.json):
# toka imports JSON lines, one record a line, and a hook payload has no time of its own to keep.
JSON_ARRAY = (
    "a JSON array, not JSON lines: toka imports exports, Claude Code transcripts and Codex rollouts;"
    " hook payloads are recorded as they happen by `toka hook claude-code` (toka integrate claude-code)"
)


# The largest file read whole to tell a JSON array from JSON lines that start with one.
_ARRAY_BYTES = 64 * 1024 * 1024


def _json_array(path: Path) -> bool:
    """Whether the file is one JSON document, an array (not JSON lines whose first is a list)."""
    try:
        with path.open("rb") as handle:
            if not handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
                return False
        if path.stat().st_size > _ARRAY_BYTES:
            return True
        return isinstance(json.loads(path.read_bytes().decode("utf-8-sig")), list)
    except (OSError, ValueError, RecursionError):
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
