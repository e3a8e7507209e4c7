"""Reading what can still be read of a damaged SQLite file, row by row, into a sound one.

SQLite answers a query that touches a damaged page with SQLITE_CORRUPT and stops: one bad page
costs the whole result. So the rows are read by ranges of their key; a range that fails is read
again in halves, down to single rows, and a row that cannot be read alone is counted as lost.
Its neighbours on sound pages are kept. What is read is what the log is made of, written as it
is (ids, seqs, bytes): the large payloads (``blobs``), the tombstones of pruned events
(``pruned``) and the events with the small payloads kept in their rows; everything else
(sessions, usage, search) is derived from them afterwards.

A row that reads but cannot be what toka wrote (a seq out of its range, an id that is no hex
digest) is counted as unreadable. An event whose payload was lost is not written: every read
of its session would fail on it; its seq is reported lost with the others.

Several sources may be read into one target, each adding what the others did not have: the
damaged file itself and, where it worked, what ``sqlite3``'s ``.recover`` made of it.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from store.rows import JSON_LIST

# Keys read per query where all is well; a damaged range is halved until its rows read alone.
SPAN = 2048
# Without max(rowid) to say where a table ends, reading goes on past the last row found until
# this many spans in a row read empty.
EMPTY_SPANS_AT_END = 16
# How many ranges of lost seqs a report lists (the count covers them all).
MAX_RANGES = 100

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Salvage:
    """What was read of the sources and written to the target."""

    events: int = 0
    payloads: int = 0
    tombstones: int = 0
    unreadable: int = 0  # rows or keys that could not be read, or read as something toka never wrote
    payload_lost: int = 0  # events read whose payload was not
    last_seq: int = 0  # the highest seq any source (or the recorded tip) knows of
    lost_seqs: int = 0
    lost_ranges: list[tuple[int, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": {"events": self.events, "payloads": self.payloads, "tombstones": self.tombstones},
            "lost": {
                "events": self.lost_seqs,
                "seqs": [list(span) for span in self.lost_ranges],
                "events_without_payload": self.payload_lost,
                "unreadable": self.unreadable,
            },
            "last_seq": self.last_seq,
        }


def _ranged(db: sqlite3.Connection, sql: str, lo: int, hi: int, salvage: Salvage) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` (bound to ``lo``, ``hi``: a key range, ``hi`` excluded), halving the
    range where it cannot be read."""
    try:
        rows = db.execute(sql, (lo, hi)).fetchall()
    except sqlite3.DatabaseError:
        if hi - lo <= 1:
            salvage.unreadable += 1
            return
        middle = (lo + hi) // 2
        yield from _ranged(db, sql, lo, middle, salvage)
        yield from _ranged(db, sql, middle, hi, salvage)
        return
    yield from rows


def _max_rowid(db: sqlite3.Connection, table: str) -> int | None:
    try:
        found = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
    except sqlite3.DatabaseError:
        return None
    return int(found) if isinstance(found, int) else 0


def _by_rowid(
    db: sqlite3.Connection, table: str, columns: str, salvage: Salvage, at_least: int = 0
) -> Iterator[tuple[Any, ...]]:
    """Every readable row of a rowid table, in rowid order, first column the rowid."""
    sql = f"SELECT rowid, {columns} FROM {table} WHERE rowid >= ? AND rowid < ? ORDER BY rowid"
    end = _max_rowid(db, table)
    last = max(end or 0, at_least)
    lo, empty = 1, 0
    while lo <= last or (end is None and empty < EMPTY_SPANS_AT_END):
        rows = [row for row in _ranged(db, sql, lo, lo + SPAN, salvage) if lo <= row[0] < lo + SPAN]
        empty = 0 if rows else empty + 1
        if rows:
            last = max(last, rows[-1][0])
        yield from rows
        lo += SPAN


def _by_text_key(db: sqlite3.Connection, sql: str, salvage: Salvage) -> Iterator[tuple[Any, ...]]:
    """Every readable row of a table keyed by hex text (``sql`` bound to a range of it): all at
    once, else by the first two hex digits, else by the first three; a range that still fails
    is counted unreadable."""
    for prefixes in ([""], [f"{n:02x}" for n in range(256)]):
        failed = []
        for prefix in prefixes:
            try:
                yield from db.execute(sql, (prefix, prefix + "g")).fetchall()
            except sqlite3.DatabaseError:
                failed.append(prefix)
        if not failed:
            return
        if prefixes != [""]:
            for prefix in failed:
                for longer in (prefix + f"{m:x}" for m in range(16)):
                    try:
                        yield from db.execute(sql, (longer, longer + "g")).fetchall()
                    except sqlite3.DatabaseError:
                        salvage.unreadable += 1


def _spans(rows: Iterator[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    """``rows`` in lists of up to SPAN, to write with one statement each."""
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == SPAN:
            yield batch
            batch = []
    if batch:
        yield batch


def _written(target: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> int:
    before = target.total_changes
    target.executemany(sql, rows)
    return target.total_changes - before


def copy_payloads(source: sqlite3.Connection, target: sqlite3.Connection, salvage: Salvage) -> None:
    with target:
        for batch in _spans(_by_rowid(source, "blobs", "digest, size, codec, data", salvage)):
            rows = [row[1:] for row in batch if _payload_shaped(row)]
            salvage.unreadable += len(batch) - len(rows)
            salvage.payloads += _written(target, "INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", rows)


def _payload_shaped(row: tuple[Any, ...]) -> bool:
    _, digest, size, codec, data = row
    return isinstance(digest, str) and bool(_HEX64.match(digest)) and isinstance(data, bytes)


def copy_tombstones(source: sqlite3.Connection, target: sqlite3.Connection, salvage: Salvage) -> None:
    sql = "SELECT id, session, seq, kind, key, checkpoint FROM pruned WHERE id >= ? AND id < ? ORDER BY id"
    with target:
        for batch in _spans(_by_text_key(source, sql, salvage)):
            rows = [
                row for row in batch if isinstance(row[0], str) and _HEX64.match(row[0]) and isinstance(row[2], int)
            ]
            salvage.unreadable += len(batch) - len(rows)
            salvage.tombstones += _written(target, "INSERT OR IGNORE INTO pruned VALUES (?, ?, ?, ?, ?, ?)", rows)


def _tombstone_shaped(row: tuple[Any, ...]) -> bool:
    return isinstance(row[0], str) and bool(_HEX64.match(row[0])) and isinstance(row[2], int)


def copy_events(source: sqlite3.Connection, target: sqlite3.Connection, salvage: Salvage, tip_seq: int) -> None:
    """The events whose payload is in their row or the target's blobs, by seq; ``tip_seq`` (0:
    none recorded) says how far the log went when no max(seq) can be read."""
    # A database from before payloads were kept in events' rows has no such column.
    payload = "payload" if _has_payload_column(source) else "NULL"
    columns = f"id, session, agent, kind, ts, parents, digest, key, {payload}"
    with target:
        for batch in _spans(_by_rowid(source, "events", columns, salvage, at_least=tip_seq)):
            rows = [row for row in batch if _event_shaped(row)]
            salvage.unreadable += len(batch) - len(rows)
            if not rows:
                continue
            salvage.last_seq = max(salvage.last_seq, rows[-1][0])
            digests = json.dumps(sorted({row[7] for row in rows if row[9] is None}))
            held = {
                found[0]
                for found in target.execute("SELECT digest FROM blobs WHERE digest IN " + JSON_LIST, (digests,))
            }
            inline = [row for row in rows if row[9] is not None]
            in_blobs = [row for row in rows if row[9] is None and row[7] in held]
            salvage.payload_lost += len(rows) - len(inline) - len(in_blobs)
            insert = "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            written = _written(target, insert, inline)
            salvage.events += written + _written(target, insert, in_blobs)
            salvage.payloads += written  # each kept in its event's row


def _has_payload_column(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT payload FROM events LIMIT 0")
    except sqlite3.OperationalError as exc:
        return "no such column" not in str(exc)
    except sqlite3.DatabaseError:
        pass  # the schema did not read: the rows will say what they hold
    return True


def _event_shaped(row: tuple[Any, ...]) -> bool:
    seq, event_id, session, agent, kind, ts, parents, digest, key, payload = row
    return (
        isinstance(event_id, str)
        and bool(_HEX64.match(event_id))
        and isinstance(session, str)
        and (agent is None or isinstance(agent, str))
        and isinstance(kind, str)
        and isinstance(ts, int)
        and isinstance(parents, str)
        and isinstance(digest, str)
        and bool(_HEX64.match(digest))
        and (key is None or isinstance(key, str))
        and (payload is None or isinstance(payload, bytes))
    )


def count_lost(target: sqlite3.Connection, salvage: Salvage, tip_seq: int) -> None:
    """The seqs up to the last known one that are neither in the target's log nor pruned."""
    last = max(salvage.last_seq, tip_seq)
    salvage.last_seq = last
    held = target.execute("SELECT seq FROM events UNION SELECT seq FROM pruned ORDER BY 1")
    expected = 1
    for (seq,) in held:
        if seq > expected:
            _lost(salvage, expected, min(seq, last + 1) - 1)
        expected = max(expected, seq + 1)
    if expected <= last:
        _lost(salvage, expected, last)


def _lost(salvage: Salvage, first: int, last: int) -> None:
    if last < first:
        return
    salvage.lost_seqs += last - first + 1
    if len(salvage.lost_ranges) < MAX_RANGES:
        salvage.lost_ranges.append((first, last))
