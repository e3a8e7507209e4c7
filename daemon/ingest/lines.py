"""Reading JSON-lines files that other programs wrote: one record per line, nothing trusted.

Every importer reads through :func:`read_records`: lines are read as bytes and decoded one by
one, so a binary, truncated or half-written file costs its bad lines only, and a line of absurd
length is skipped without being held in memory. What was met is counted in :class:`ParseStats`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Longest line an importer reads: far above any real record (a pasted image is a few MiB).
MAX_LINE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class BadLine:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class ParseStats:
    """What one or more parses met: pass the same instance to several files to add them up."""

    records: int = 0
    """JSON objects read (blank and bad lines excluded)."""
    events: int = 0
    """Events yielded."""
    unknown_types: Counter[str] = field(default_factory=Counter)
    """Record types kept as ``raw`` events, by type."""
    bad_lines: list[BadLine] = field(default_factory=list)
    """Lines that are not a JSON object (not UTF-8, not JSON, truncated, too long)."""
    duplicates_skipped: int = 0
    """Records that repeat what was already counted (one response's usage written per block)."""
    empty_usage_skipped: int = 0
    """Usage records with nothing in them (Codex's null or all-zero token counts)."""
    borrowed_timestamps: int = 0
    """Records without a readable timestamp, given the one of the record before them."""
    bytes_read: int = 0
    """Bytes of the files read so far, bad and blank lines included: how far an import is."""


def unknown_type(record: Any) -> str:
    """The name a record of a type toka does not know is counted under (``ParseStats.unknown_types``)
    and told by, in the ``raw`` event that keeps it: its ``type``, or the older Codex format's
    ``record_type``."""
    if not isinstance(record, dict):
        return "None"
    if "type" in record or "record_type" not in record:
        return str(record.get("type"))
    return f"record_type/{record['record_type']}"


@dataclass
class Position:
    """Where reading a file stopped: the byte offset just past the last line read, and its number."""

    offset: int = 0
    line: int = 0


def read_records(
    path: Path, stats: ParseStats, position: Position | None = None, *, follow: bool = False
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(line number, line bytes, record) for each line that holds a JSON object; the other
    non-blank lines go to ``stats.bad_lines``.

    Reading starts at ``position`` (the file's start by default), which is moved past each line
    as it is read. With ``follow`` the file is being written: a last line without its newline
    is left unread, to be read whole once it is complete.
    """
    position = position if position is not None else Position()
    with path.open("rb") as handle:
        handle.seek(position.offset)
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            too_long = len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n")
            if follow and not too_long and not raw.endswith(b"\n"):
                break
            position.line += 1
            position.offset += len(raw)
            stats.bytes_read += len(raw)
            number = position.line
            if too_long:
                while rest := handle.readline(MAX_LINE_BYTES):
                    position.offset += len(rest)
                    stats.bytes_read += len(rest)
                    if rest.endswith(b"\n"):
                        break
                stats.bad_lines.append(BadLine(str(path), number, f"line longer than {MAX_LINE_BYTES} bytes"))
                continue
            if not raw.strip():
                continue
            decoded = _decode_line(raw, number)
            if isinstance(decoded, str):
                stats.bad_lines.append(BadLine(str(path), number, decoded))
                continue
            stats.records += 1
            yield number, raw, decoded


def _decode_line(raw: bytes, number: int) -> dict[str, Any] | str:
    """The record a line holds, or why it holds none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if number == 1:
        text = text.removeprefix("\ufeff")
    try:
        record = _DECODER.decode(text)
    except RecursionError:
        return "not JSON (nested too deeply)"
    except ValueError as exc:
        if not raw.endswith(b"\n"):
            return f"truncated last line ({exc})"
        return f"not JSON ({exc})"
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    return record


def _no_constant(name: str) -> Any:
    # NaN and Infinity have no canonical JSON form, so the store could not hash the payload.
    raise ValueError(f"{name} is not a JSON value")


# One decoder for every line: json.loads with an option builds a new one on each call (a fifth
# of decoding a short record).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)
