"""Running a function on one of the SQLite backend's connections: on the connection's own thread
(aiosqlite's, one hop per call), or on the caller's while nothing is queued on that thread; and
what SQLite's errors mean once raised there (store/sqlite/store.py says when each is used).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from store.damage import Damage, is_corruption, record_damage
from store.errors import TokaError
from store.events import now_us
from store.requester import RequestAbandoned
from store.sqlite.connect import describe
from store.sqlite.integrity import Integrity

T = TypeVar("T")


async def on_thread(
    conn: aiosqlite.Connection, path: Path, fn: Callable[..., T], *args: Any, seen: Integrity | None = None
) -> T:
    """Run ``fn(sqlite3_connection, *args)`` on the connection's thread: one hop per call.

    aiosqlite queues every public call the same way through ``_execute``; calling it with our own
    function is what lets a whole batch share one hop. Corruption reported by SQLite marks the
    database damaged (``seen``, else the record beside the file) whatever the statement was.
    """
    try:
        result: T = await conn._execute(fn, conn._conn, *args)  # type: ignore[no-untyped-call]
        return result
    except sqlite3.Error as exc:
        raise failure(path, exc, seen) from None


def here(conn: aiosqlite.Connection, path: Path, fn: Callable[..., T], *args: Any, seen: Integrity | None = None) -> T:
    """``fn(sqlite3_connection, *args)`` on this thread, as :func:`on_thread` would on the connection's:
    only while nothing is queued on that thread."""
    try:
        return fn(conn._conn, *args)
    except sqlite3.Error as exc:
        raise failure(path, exc, seen) from None


def failure(path: Path, exc: sqlite3.Error, seen: Integrity | None) -> TokaError:
    """What SQLite's error means: the database damaged (recorded in ``seen``, else beside the
    file) when SQLite reports corruption, else the error described for a person."""
    if not is_corruption(exc):
        return describe(path, exc)
    damage = Damage(f"SQLite reports: {exc}", now_us())
    if seen is not None:
        seen.mark(damage.reason)
    else:
        record_damage(path, damage)
    return damage.refusal(path)


def unless_gone(db: sqlite3.Connection, gone: Callable[[], bool], fn: Callable[..., T], *args: Any) -> T:
    """``fn(db, *args)`` on the reader's thread, unless its requester has gone by then."""
    if gone():
        raise RequestAbandoned()
    return fn(db, *args)
