"""`toka verify` on the PostgreSQL backend: the chain check every backend shares
(store/chain.py), and, for the whole log, the seqs no event holds.

**Why a hole is evidence.** Every append takes the next seqs under the append lock, in the
transaction that writes the events (store/postgres/append.py): a transaction that rolls back
takes its seqs with it, so seqs are dense and a seq no event holds was deleted. The end of the
log is recorded too, in ``log_end``, by the same transaction: events cut from the end of the
log leave no hole after them, but the record still names the last seq handed out, and new
appends go on after it instead of handing out the deleted seqs again.

**Against whom.** This finds events deleted with SQL, whatever was rebuilt around them (the
session tables). The database's owner can also rewrite ``log_end``, or renumber and re-seal
the events after a deletion, and nothing inside the database can tell: only what is kept
outside it can (docs/tamper-evidence.md, "PostgreSQL").
"""

from __future__ import annotations

from psycopg import AsyncConnection

from store.base import CHUNK, MAX_PROBLEMS, Problem, ProgressCallback, VerifyReport
from store.chain import ChainVerifier
from store.postgres.reads import fetch_rows
from store.rows import SELECT, stored_row


async def verify_log(conn: AsyncConnection, session: str | None, progress: ProgressCallback | None) -> VerifyReport:
    """Every event of ``session`` (None: of the log) checked in seq order, CHUNK at a time, then
    each session's head; for the whole log, each seq up to its recorded end that no event holds.
    The parents a chunk names are looked up with one statement per chunk."""
    seqs: dict[str, int] = {}
    verifier = ChainVerifier(seqs.get)
    # The end is read first: appends committed while the events are read lie beyond it, and
    # seqs commit in order, so every seq up to it is in the log unless it was deleted.
    end = None if session is not None else await _log_end(conn)
    where, params = ("", []) if session is None else (" AND e.session = ?", [session])
    total = (await fetch_rows(conn, "SELECT count(*) FROM events e WHERE true" + where, params))[0][0]
    after = done = 0
    while True:
        sql = SELECT + " WHERE e.seq > ?" + where + " ORDER BY e.seq LIMIT ?"
        rows = await fetch_rows(conn, sql, [after, *params, CHUNK])
        parents = sorted({p for row in rows for p in (row[6].split(",") if row[6] else ())})
        seqs.clear()
        if parents:
            seqs.update(await fetch_rows(conn, "SELECT id, seq FROM events WHERE id = ANY(?)", (parents,)))
        for row in rows:
            if session is None and row[0] > after + 1:
                _missing(verifier, after + 1, row[0] - 1, "seqs are dense: it was deleted")
            verifier.check(stored_row(row))
            after = row[0]
        done += len(rows)
        if progress is not None and rows:
            progress(done, total)
        if len(rows) < CHUNK:
            break
    if session is None:
        await _check_end(conn, verifier, end, after)
    heads_sql = "SELECT session, head FROM sessions" + (" WHERE session = ?" if session is not None else "")
    verifier.check_heads(await fetch_rows(conn, heads_sql, params))
    if progress is not None:
        progress(total, total)
    return verifier.report(session)


async def _log_end(conn: AsyncConnection) -> tuple[int, str] | None:
    rows = await fetch_rows(conn, "SELECT seq, id FROM log_end", ())
    return None if not rows else (int(rows[0][0]), str(rows[0][1]))


async def _check_end(conn: AsyncConnection, verifier: ChainVerifier, end: tuple[int, str] | None, last: int) -> None:
    """The log against its recorded end: the seqs after ``last`` (the last one read) up to it are
    missing, and the event at it must be the one recorded."""
    if end is None:
        if last:
            detail = "the record of the log's end (log_end) is gone: whether events were cut from the end is unknown"
            _add(verifier, Problem(0, "", "", "database", detail))
        return
    end_seq, end_id = end
    if last < end_seq:
        _missing(verifier, last + 1, end_seq, f"the log's recorded end is seq {end_seq}: it was deleted")
        return
    held = await fetch_rows(conn, "SELECT id, session FROM events WHERE seq = ?", (end_seq,))
    if held and held[0][0] != end_id:
        detail = f"seq {end_seq} holds event {held[0][0][:12]}, but {end_id[:12]} was appended there (log_end)"
        _add(verifier, Problem(end_seq, held[0][0], held[0][1], "replaced", detail))


def _missing(verifier: ChainVerifier, first: int, last: int, why: str) -> None:
    """Seqs ``first`` to ``last`` reported missing, one problem each (listed up to the limit)."""
    listed = max(0, min(last - first + 1, MAX_PROBLEMS - len(verifier.problems)))
    for seq in range(first, first + listed):
        verifier.problems.append(Problem(seq, "", "", "missing", f"no event holds seq {seq} ({why})"))
    verifier.problem_count += last - first + 1


def _add(verifier: ChainVerifier, problem: Problem) -> None:
    verifier.problem_count += 1
    if len(verifier.problems) < MAX_PROBLEMS:
        verifier.problems.append(problem)
