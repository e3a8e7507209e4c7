"""What the SQL backends' modules share: the columns they select, events built from them, how
payloads are stored, and (SQLite's) transactions. Used by the SQLite backend
(store/sqlite/), its migrations among them, and the PostgreSQL backend (store/postgres/).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from store.base import resolve_prefix
from store.chain import StoredRow
from store.errors import IntegrityError, StoreError
from store.events import Event, digest, event_json_text

CODEC_RAW, CODEC_ZLIB = 0, 1
# Payloads at least this large are zlib-compressed when that makes them smaller: below it the
# saving is a few bytes and the cost a few microseconds per event.
COMPRESS_FROM = 1024

# Payloads shorter than this are stored in their event's row (SQLite's ``events.payload``), raw,
# rather than as a row of ``blobs``: a one-event commit then writes one b-tree instead of two
# (3.85 WAL frames and 47 us of CPU per commit instead of 6.40 and 68 us). They are not worth
# deduplicating or compressing; larger ones are, and go to ``blobs`` as before. A payload a
# compression summary cites (over 2 KiB, daemon/compress/model.py) is always in ``blobs``, where
# `toka gc` keeps it after its event is pruned.
INLINE_BELOW = COMPRESS_FROM


def row_payload(data: bytes) -> bytes | None:
    """The payload as its event's row keeps it (SQLite): its bytes when small, None when it goes
    to ``blobs``."""
    return data if len(data) < INLINE_BELOW else None


# The header columns, then the payload's codec and stored bytes (columns 9 and 10; data NULL:
# the payload is missing). SELECT reads every payload from ``blobs`` (PostgreSQL's layout);
# SELECT_INLINE reads SQLite's, where a payload is in its event's row or else in ``blobs``.
SELECT = (
    "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.parents, e.digest, e.key,"
    " b.codec, b.data FROM events e LEFT JOIN blobs b ON b.digest = e.digest"
)
# SQLite's payload of an event ``e`` (its codec, its stored bytes), from its row or else from
# ``blobs b``, which INLINE_JOIN joins only for the events whose payload is not in their row.
INLINE_PAYLOAD = "coalesce(b.codec, 0), coalesce(e.payload, b.data)"
INLINE_JOIN = "LEFT JOIN blobs b ON e.payload IS NULL AND b.digest = e.digest"
SELECT_INLINE = (
    "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.parents, e.digest, e.key, "
    + INLINE_PAYLOAD
    + " FROM events e "
    + INLINE_JOIN
)

# The values of a JSON array bound as one parameter: an IN list of any length in one statement.
JSON_LIST = "(SELECT value FROM json_each(?))"


def parents_of(text: str) -> tuple[str, ...]:
    return tuple(text.split(",")) if text else ()


def decode_blob(codec: int | None, data: bytes | None) -> bytes:
    if data is None:
        raise ValueError("blob missing")
    if codec == CODEC_ZLIB:
        return zlib.decompress(data)
    if codec == CODEC_RAW:
        return bytes(data)
    raise ValueError(f"unknown blob codec {codec}")


def packed(data: bytes) -> tuple[int, bytes]:
    """(codec, stored bytes) of a payload: compressed when it is large and that makes it smaller."""
    if len(data) >= COMPRESS_FROM:
        compressed = zlib.compress(data, 6)
        if len(compressed) < len(data):
            return CODEC_ZLIB, compressed
    return CODEC_RAW, data


def event_of(row: Sequence[Any]) -> Event:
    try:
        payload = json.loads(decode_blob(row[9], row[10]))
    except (ValueError, zlib.error) as exc:
        raise StoreError(
            f"event {row[1][:12]} (seq {row[0]}) has an unreadable payload: {exc}",
            "run `toka verify` to see what else is damaged",
        ) from None
    return Event(row[0], row[1], row[2], row[3], row[4], row[5], parents_of(row[6]), row[7], row[8], payload)


def event_text(row: Sequence[Any]) -> str:
    """The event as JSON text, its payload spliced in unparsed once it matches its digest."""
    try:
        payload = decode_blob(row[9], row[10])
    except (ValueError, zlib.error) as exc:
        raise StoreError(
            f"event {row[1][:12]} (seq {row[0]}) has an unreadable payload: {exc}",
            "run `toka verify` to see what else is damaged",
        ) from None
    if digest(payload) != row[7]:
        raise IntegrityError(
            f"the payload of event {row[1][:12]} (seq {row[0]}) does not match its digest",
            "run `toka verify` to see what else was changed",
        )
    return event_json_text(
        row[0], row[1], row[2], row[3], row[4], row[5], parents_of(row[6]), row[7], row[8], payload.decode()
    )


def hex_range(prefix: str) -> tuple[str, str] | None:
    """Ids and digests are lowercase hex, so those starting with ``prefix`` sort between it and
    ``prefix`` followed by "g": a range scan on their index. None when ``prefix`` is not hex."""
    return (prefix, prefix + "g") if prefix and all(c in "0123456789abcdef" for c in prefix) else None


def one_event(event_id: str, rows: Sequence[Sequence[Any]]) -> Event:
    """The event of the row whose id is ``event_id`` or the only one it prefixes."""
    by_id = {row[1]: row for row in rows}
    return event_of(by_id[resolve_prefix(event_id, list(by_id), "event")])


def one_payload(digest: str, rows: Sequence[Sequence[Any]]) -> tuple[str, dict[str, Any]]:
    """(digest, payload) of the (digest, codec, data) row whose digest is ``digest`` or the only
    one it prefixes."""
    by_digest = {row[0]: row for row in rows}
    found = by_digest[resolve_prefix(digest, list(by_digest), "payload")]
    try:
        return found[0], json.loads(decode_blob(found[1], found[2]))
    except (ValueError, zlib.error) as exc:
        raise StoreError(f"payload {found[0][:12]} is unreadable: {exc}", "run `toka verify`") from None


def stored_row(row: Sequence[Any]) -> StoredRow:
    try:
        payload: bytes | None = decode_blob(row[9], row[10])
        error = None
    except (ValueError, zlib.error) as exc:
        payload, error = None, str(exc)
    return StoredRow(row[0], row[1], row[2], row[3], row[4], row[5], parents_of(row[6]), row[7], row[8], payload, error)


@contextmanager
def transaction(db: sqlite3.Connection, write: bool = True) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back when it raises. A write
    transaction takes the write lock at once (BEGIN IMMEDIATE), so that it cannot fail half-way
    on a lock another connection holds."""
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
