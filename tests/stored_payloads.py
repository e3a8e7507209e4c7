"""An event's payload where a SQLite database keeps it, for the tests that read or change the file
by hand: in the event's row (``events.payload``, small payloads) or in ``blobs`` (large ones, and
every payload written before m015)."""

from __future__ import annotations

import sqlite3

from store.rows import CODEC_RAW


def stored_payload(db: sqlite3.Connection, seq: int) -> tuple[str, int, bytes]:
    """(where, codec, stored bytes) of the payload of the event at ``seq``; where is "inline" or
    "blobs"."""
    digest, inline = db.execute("SELECT digest, payload FROM events WHERE seq = ?", (seq,)).fetchone()
    if inline is not None:
        return "inline", CODEC_RAW, inline
    codec, data = db.execute("SELECT codec, data FROM blobs WHERE digest = ?", (digest,)).fetchone()
    return "blobs", codec, data


def overwrite_payload(db: sqlite3.Connection, seq: int, data: bytes) -> None:
    """Replace the stored bytes of the payload of the event at ``seq`` where they are kept."""
    where, _, _ = stored_payload(db, seq)
    if where == "inline":
        db.execute("UPDATE events SET payload = ? WHERE seq = ?", (data, seq))
    else:
        db.execute("UPDATE blobs SET data = ? WHERE digest = (SELECT digest FROM events WHERE seq = ?)", (data, seq))


def move_to_blobs(db: sqlite3.Connection, seq: int) -> None:
    """Keep the payload of the event at ``seq`` in ``blobs``, raw, as a toka before m015 wrote it."""
    digest, inline = db.execute("SELECT digest, payload FROM events WHERE seq = ?", (seq,)).fetchone()
    if inline is None:
        return
    db.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", (digest, len(inline), CODEC_RAW, inline))
    db.execute("UPDATE events SET payload = NULL WHERE seq = ?", (seq,))
