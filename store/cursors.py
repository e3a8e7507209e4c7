"""Cursors: where a reader of the log that must survive restarts stands.

A cursor is a name and a value the reader writes as it likes (the OTLP forwarder's is JSON: the
last seq it delivered and the tool calls it holds open, daemon/export/forwarder.py). It lives in
the log's own database, so that a copy, a restore or a move of the database carries the reader's
position with the events it counts, and a reader never resumes against another log. Writing a
cursor is a statement of its own, not an event: the log records what happened, not how far a
consumer has read it.

The SQLite functions are plain functions of a ``sqlite3`` connection, run on the store's reader
or writer thread (store/sqlite/store.py); PostgreSQL's run the same SQL (store/postgres/store.py).
"""

from __future__ import annotations

import sqlite3

from store.events import now_us

READ = "SELECT value FROM cursors WHERE name = ?"
SAVE = (
    "INSERT INTO cursors (name, value, updated_us) VALUES (?, ?, ?)"
    " ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_us = excluded.updated_us"
)


def read_cursor(db: sqlite3.Connection, name: str) -> str | None:
    row = db.execute(READ, (name,)).fetchone()
    return None if row is None else str(row[0])


def save_cursor(db: sqlite3.Connection, name: str, value: str) -> None:
    db.execute(SAVE, (name, value, now_us()))  # the writer connection autocommits: one statement, one transaction
