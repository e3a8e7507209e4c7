"""Retention in the SQLite backend: prune a session's old prefix, collect unreferenced payloads.

What a prune leaves is described in store/retention.py. Here: the tombstones live in ``pruned``
(migration m005), a prune is one write transaction per session (a dry run reads the same rows
and rolls back), and the search index loses the pruned events' text in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import replace
from typing import Any, NamedTuple

from store.events import canonical_json, digest, format_ts, header_id, parse_ts
from store.retention import CHECKPOINT, Collected, Pruned, replaced_digest
from store.rows import CODEC_RAW, JSON_LIST, SELECT_INLINE, event_of, row_payload, transaction
from store.sqlite.append import INSERT_EVENT
from store.sqlite.projections import project_sessions

# Rows of a session read per step while looking for the end of its prefix.
_PAGE = 1000


class _Row(NamedTuple):
    seq: int
    id: str
    kind: str
    ts: int
    key: str | None


def prune_session(db: sqlite3.Connection, session: str, before: int, dry_run: bool) -> Pruned | None:
    """Replace the events of ``session`` older than ``before`` (UTC microseconds) by a checkpoint;
    None when there is nothing to prune."""
    with transaction(db, write=not dry_run):
        return _prune(db, session, before, dry_run)


def _prune(db: sqlite3.Connection, session: str, before: int, dry_run: bool) -> Pruned | None:
    rows = _old_prefix(db, session, before)
    folded = bool(rows) and rows[0].kind == CHECKPOINT  # the session was pruned before
    earlier: dict[str, Any] = {}
    if folded:
        earlier = event_of(db.execute(SELECT_INLINE + " WHERE e.seq = ?", (rows[0].seq,)).fetchone()).payload
    new = rows[1:] if folded else rows
    if not new:
        return None
    last = new[-1]
    kinds = Counter(earlier.get("kinds", {})) + Counter(row.kind for row in new)
    times = [row.ts for row in new] + [parse_ts(earlier[n]) for n in ("first_ts", "last_ts") if n in earlier]
    pruned = Pruned(
        session,
        len(new),
        earlier.get("first_seq", rows[0].seq),
        last.seq,
        min(times),
        max(times),
        dict(sorted(kinds.items())),
    )
    if dry_run:
        return pruned
    if folded:
        db.execute("UPDATE pruned SET checkpoint = ? WHERE checkpoint = ?", (last.seq, rows[0].seq))
    db.executemany(
        "INSERT INTO pruned VALUES (?, ?, ?, ?, ?, ?)",
        [(r.id, session, r.seq, r.kind, r.key, last.seq) for r in rows],
    )
    ids = replaced_ids(db, last.seq)
    seqs = json.dumps([row.seq for row in rows])
    texts = db.execute("SELECT seq, text FROM search_text WHERE seq IN " + JSON_LIST, (seqs,)).fetchall()
    # The index has external content: FTS5 removes a row's terms only when told its old text.
    db.executemany("INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', ?, ?)", texts)
    db.execute("DELETE FROM search_text WHERE seq IN " + JSON_LIST, (seqs,))
    db.execute("DELETE FROM events WHERE seq IN " + JSON_LIST, (seqs,))
    payload = {
        "events": earlier.get("events", 0) + len(new),
        "first_seq": pruned.first_seq,
        "last_seq": pruned.last_seq,
        "first_ts": format_ts(pruned.first_ts),
        "last_ts": format_ts(pruned.last_ts),
        "kinds": pruned.kinds,
        "before": format_ts(before),
        "head": last.id,
        "replaces": replaced_digest(ids),
    }
    data = canonical_json(payload)
    payload_digest = digest(data)
    checkpoint = header_id(session, None, CHECKPOINT, last.ts, (), payload_digest, None)
    # Where an append keeps it: in the row when small, else in blobs.
    inline = row_payload(data)
    if inline is None:
        db.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", (payload_digest, len(data), CODEC_RAW, data))
    row = (last.seq, checkpoint, session, None, CHECKPOINT, last.ts, "", payload_digest, None, inline)
    db.execute(INSERT_EVENT, row)
    project_sessions(db, session)
    return replace(pruned, checkpoint=checkpoint)


def _old_prefix(db: sqlite3.Connection, session: str, before: int) -> list[_Row]:
    """The session's events, in seq order, up to the first one at or after ``before``."""
    rows: list[_Row] = []
    after = 0
    while True:
        page = db.execute(
            "SELECT seq, id, kind, ts, key FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session, after, _PAGE),
        ).fetchall()
        for row in page:
            if row[3] >= before:
                return rows
            rows.append(_Row(*row))
        if len(page) < _PAGE:
            return rows
        after = page[-1][0]


def replaced_ids(db: sqlite3.Connection, checkpoint_seq: int) -> list[str]:
    """The ids a checkpoint replaced, in seq order; an earlier checkpoint folded into it comes
    after the event whose seq it took."""
    rows = db.execute("SELECT id FROM pruned WHERE checkpoint = ? ORDER BY seq, kind = ?", (checkpoint_seq, CHECKPOINT))
    return [row[0] for row in rows]


def pruned_seq(db: sqlite3.Connection, event_id: str) -> int | None:
    """The seq a pruned event had, while the checkpoint that replaced it is there to vouch for it."""
    row = db.execute(
        "SELECT p.seq FROM pruned p JOIN events e ON e.seq = p.checkpoint AND e.kind = ? WHERE p.id = ?",
        (CHECKPOINT, event_id),
    ).fetchone()
    return row[0] if row else None


def collect_garbage(db: sqlite3.Connection, keep: list[str], dry_run: bool) -> Collected:
    """Delete the payloads that no event refers to, except the digests in ``keep``."""
    # NOT IN a subquery is materialised once; events has no index on digest to probe.
    unreferenced = " FROM blobs WHERE digest NOT IN (SELECT digest FROM events) AND digest NOT IN " + JSON_LIST
    with transaction(db, write=not dry_run):
        found = db.execute(
            "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0)" + unreferenced,
            (json.dumps(keep),),
        ).fetchone()
        if not dry_run:
            db.execute("DELETE" + unreferenced, (json.dumps(keep),))
    return Collected(*found)
