"""Schema migrations for the PostgreSQL backend.

As on SQLite (store/sqlite/schema.py): an ordered list of small named steps, each applied in its
own transaction and recorded in ``toka_migrations``; a shipped step is never edited. A database
that records a step this toka does not know was written by a newer toka and is refused before
anything is written to it.

Several daemons may start at once on an empty database, so the steps run under a session-level
advisory lock: the first daemon migrates, the others wait for it, then find nothing to do.

The tables are SQLite's, with PostgreSQL's types: ids, digests and session names are ``text``
with the "C" collation, so that a prefix is a range scan on their index whatever the database's
own collation; payloads are ``bytea``. Three tables are PostgreSQL's own: ``append_batches``
remembers each append's idempotency key and what it produced, so that a daemon retrying an
append whose acknowledgement was lost gets the first answer back instead of writing twice;
``log_end`` holds the last seq handed out (store/postgres/verify.py); and the search text
carries its ``tsvector`` (store/postgres/search.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from psycopg import AsyncConnection

from store.errors import SchemaTooNew, StoreError


def grant_to_appenders(rights: str) -> str:
    """A statement granting ``rights`` (``"SELECT ON t"``) to every role that may append (insert into
    events), so that an upgrade adding a table its daemons write does not stop them."""
    return f"""DO $$
            DECLARE appender text;
            BEGIN
                FOR appender IN
                    SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END
                    FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
                    LEFT JOIN pg_roles r ON r.oid = a.grantee
                    WHERE c.oid = 'events'::regclass AND a.privilege_type = 'INSERT' AND a.grantee <> c.relowner
                LOOP
                    EXECUTE 'GRANT {rights} TO ' || appender;
                END LOOP;
            END $$"""


# pg_advisory_lock's key for migrations: any constant that no other application on the same
# database uses; this one is "toka" in ASCII.
MIGRATION_LOCK = 0x746F6B61
# The transaction-level advisory lock every append takes (store/postgres/append.py).
APPEND_LOCK = MIGRATION_LOCK + 1

Step = tuple[str, tuple[str, ...]]

STEPS: list[Step] = [
    (
        "p001_events",
        (
            """CREATE TABLE blobs (
                digest text COLLATE "C" PRIMARY KEY,
                size bigint NOT NULL,
                codec smallint NOT NULL,
                data bytea NOT NULL
            )""",
            # parents: the comma-joined parent ids, in header order, as on SQLite.
            """CREATE TABLE events (
                seq bigint PRIMARY KEY,
                id text COLLATE "C" NOT NULL UNIQUE,
                session text COLLATE "C" NOT NULL,
                agent text,
                kind text NOT NULL,
                ts bigint NOT NULL,
                parents text NOT NULL,
                digest text COLLATE "C" NOT NULL,
                key text
            )""",
            "CREATE INDEX events_session_seq ON events (session, seq)",
            "CREATE UNIQUE INDEX events_session_key ON events (session, key) WHERE key IS NOT NULL",
        ),
    ),
    (
        "p002_session_projections",
        (
            """CREATE TABLE sessions (
                session text COLLATE "C" PRIMARY KEY,
                events bigint NOT NULL,
                first_seq bigint NOT NULL,
                last_seq bigint NOT NULL,
                first_ts bigint NOT NULL,
                last_ts bigint NOT NULL,
                head text NOT NULL
            )""",
            "CREATE INDEX sessions_last_seq ON sessions (last_seq)",
            """CREATE TABLE session_agents (
                session text COLLATE "C" NOT NULL, agent text NOT NULL, events bigint NOT NULL,
                PRIMARY KEY (session, agent)
            )""",
            """CREATE TABLE session_kinds (
                session text COLLATE "C" NOT NULL, kind text NOT NULL, events bigint NOT NULL,
                PRIMARY KEY (session, kind)
            )""",
        ),
    ),
    (
        "p003_search",
        (
            """CREATE TABLE search_text (
                seq bigint PRIMARY KEY,
                text text NOT NULL,
                words tsvector NOT NULL
            )""",
            "CREATE INDEX search_text_words ON search_text USING gin (words)",
        ),
    ),
    (
        "p004_append_batches",
        (
            # ids[i] is the event the batch's i-th event became (or already was); created[i] says which.
            """CREATE TABLE append_batches (
                token text PRIMARY KEY,
                ids text[] NOT NULL,
                created boolean[] NOT NULL,
                at timestamptz NOT NULL DEFAULT now()
            )""",
            "CREATE INDEX append_batches_at ON append_batches (at)",
        ),
    ),
    (
        # The usage projection (store/usage.py, store/postgres/usage.py), as SQLite's m006. A
        # database that held events before this step has it filled when it opens.
        "p005_usage_buckets",
        (
            """CREATE TABLE usage_buckets (
                bucket bigint NOT NULL,
                session text COLLATE "C" NOT NULL,
                agent text NOT NULL,
                model text NOT NULL,
                prompt_class integer NOT NULL,
                calls bigint NOT NULL,
                input_tokens bigint NOT NULL,
                output_tokens bigint NOT NULL,
                cache_creation_tokens bigint NOT NULL,
                cache_creation_1h_tokens bigint NOT NULL,
                cache_read_tokens bigint NOT NULL,
                first_ts bigint NOT NULL,
                last_ts bigint NOT NULL,
                PRIMARY KEY (bucket, session, agent, model, prompt_class)
            )""",
            "CREATE INDEX usage_buckets_session ON usage_buckets (session)",
        ),
    ),
    (
        # A request reported by transcript and telemetry both counts once (store/usage.py), as
        # SQLite's m008; filled when an upgraded database opens.
        "p006_usage_requests",
        (
            "ALTER TABLE usage_buckets ADD COLUMN telemetry_calls bigint NOT NULL DEFAULT 0",
            """CREATE TABLE usage_requests (
                session text COLLATE "C" NOT NULL,
                request text NOT NULL,
                origin text NOT NULL,
                PRIMARY KEY (session, request)
            )""",
        ),
    ),
    (
        # Where a reader of the log that must survive restarts stands (store/cursors.py), as SQLite's m009.
        "p007_cursors",
        (
            """CREATE TABLE cursors (
                name text COLLATE "C" PRIMARY KEY,
                value text NOT NULL,
                updated_us bigint NOT NULL
            )""",
        ),
    ),
    (
        # Requests matched by model and prompt size too, as SQLite's m010: the claims are made
        # again by the rebuild an upgrade ends with.
        "p008_usage_claims_by_size",
        ("DELETE FROM usage_requests",),
    ),
    (
        # The last seq handed out and its event, written by each append (store/postgres/append.py):
        # a seq is never handed out twice, and verify finds events cut from the end of the log
        # (store/postgres/verify.py). The roles that may append get the rights it needs, so an
        # upgrade does not stop their daemons.
        "p009_log_end",
        (
            """CREATE TABLE log_end (
                one boolean PRIMARY KEY DEFAULT true CHECK (one),
                seq bigint NOT NULL,
                id text COLLATE "C" NOT NULL
            )""",
            "INSERT INTO log_end (seq, id) SELECT seq, id FROM events ORDER BY seq DESC LIMIT 1",
            grant_to_appenders("SELECT, INSERT, UPDATE ON log_end"),
        ),
    ),
    (
        # A session's last_ts is its last active time, as SQLite's m012: recomputed by the rebuild
        # an upgrade ends with.
        "p010_last_active",
        (),
    ),
    (
        # The derived tables follow the log behind its commits (store/postgres/projector.py): the
        # last seq applied to them, as SQLite's m013. Every event so far was applied by its append.
        # The roles that may append get the rights moving it takes, so an upgrade does not stop
        # their daemons.
        "p011_projected",
        (
            "CREATE TABLE projected (name text PRIMARY KEY, seq bigint NOT NULL)",
            "INSERT INTO projected SELECT 'tables', coalesce(max(seq), 0) FROM events",
            grant_to_appenders("SELECT, UPDATE ON projected"),
        ),
    ),
    (
        # An append in one statement (store/postgres/append.py): under the append lock, it writes
        # a batch sealed on what the daemon expects the log's end to be (the next seq, each
        # session's head, no key held), or, if the log moved on, nothing, and says which. Each
        # statement of a PL/pgSQL function reads what committed before it ran, so the checks see
        # every append that committed before the lock was granted. The roles that may append get
        # the right to call it, so an upgrade does not stop their daemons.
        "p012_append_at_once",
        (
            f"""CREATE FUNCTION toka_append(
                first_seq bigint, sessions text[], heads text[], key_sessions text[], keys text[],
                blob_digests text[], blob_sizes bigint[], blob_codecs smallint[], blob_data bytea[],
                seqs bigint[], ids text[], event_sessions text[], agents text[], kinds text[], tss bigint[],
                parents text[], digests text[], event_keys text[], token text
            ) RETURNS boolean LANGUAGE plpgsql AS $$
            DECLARE
                n integer := cardinality(seqs);  -- the batch's last event is the n-th
            BEGIN
                PERFORM pg_advisory_xact_lock({APPEND_LOCK});
                IF first_seq <> coalesce(greatest((SELECT max(seq) FROM events), (SELECT seq FROM log_end)), 0) + 1
                THEN
                    RETURN false;
                END IF;
                IF EXISTS (
                    SELECT FROM unnest(sessions, heads) AS h (session, head)
                    WHERE (SELECT id FROM events e WHERE e.session = h.session ORDER BY seq DESC LIMIT 1)
                        IS DISTINCT FROM h.head
                ) OR EXISTS (
                    SELECT FROM unnest(key_sessions, keys) AS k (session, key)
                    JOIN events e ON e.session = k.session AND e.key = k.key
                ) THEN
                    RETURN false;
                END IF;
                INSERT INTO blobs SELECT * FROM unnest(blob_digests, blob_sizes, blob_codecs, blob_data)
                    ON CONFLICT (digest) DO NOTHING;
                INSERT INTO events
                    SELECT * FROM unnest(seqs, ids, event_sessions, agents, kinds, tss, parents, digests, event_keys);
                INSERT INTO log_end (seq, id) VALUES (seqs[n], ids[n])
                    ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, id = excluded.id;
                INSERT INTO append_batches (token, ids, created) VALUES (token, ids, array_fill(true, ARRAY[n]));
                PERFORM pg_notify('toka_events', seqs[n]::text);
                RETURN true;
            END $$""",
            grant_to_appenders(
                "EXECUTE ON FUNCTION toka_append(bigint, text[], text[], text[], text[], text[], bigint[], smallint[],"
                " bytea[], bigint[], text[], text[], text[], text[], bigint[], text[], text[], text[], text)"
            ),
        ),
    ),
]

MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS toka_migrations (
    seq integer PRIMARY KEY, name text NOT NULL UNIQUE, applied_at timestamptz NOT NULL DEFAULT now()
)"""


async def applied(conn: AsyncConnection) -> list[str]:
    """Names of the steps recorded in the database; raises when it holds tables but not toka's."""
    cursor = await conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    tables = {row[0] for row in await cursor.fetchall()}
    if "toka_migrations" not in tables:
        if tables & {"events", "blobs", "sessions"}:
            raise StoreError(
                "the database holds tables named like toka's but is not a toka database",
                "point store.url at an empty database or one toka created",
            )
        return []
    cursor = await conn.execute("SELECT name FROM toka_migrations ORDER BY seq")
    return [row[0] for row in await cursor.fetchall()]


def check_not_newer(done: list[str]) -> None:
    known = [name for name, _ in STEPS]
    unknown = [name for name in done if name not in known]
    if unknown or len(done) > len(known):
        raise SchemaTooNew(
            f"the database was written by a newer toka (schema step {unknown[0] if unknown else len(done)})",
            "upgrade toka (pip install -U 'toka[postgres]'); the database was left untouched",
        )


async def migrate(
    conn: AsyncConnection,
    on_step: Callable[[str], None] | None = None,
    project: Callable[[AsyncConnection], Awaitable[object]] | None = None,
) -> list[str]:
    """Apply the missing steps under the migration lock; the names applied. ``conn`` must be in
    autocommit mode: each step is a transaction of its own.

    ``project`` refills the projections from the log, in the transaction of the last step, when
    the database had steps before (as on SQLite, store/sqlite/schema.py): an upgrade commits with
    its projections filled, or, stopped before its end, is done again at the next open."""
    await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        done = await applied(conn)
        check_not_newer(done)
        missing = [(number, step) for number, step in enumerate(STEPS, 1) if step[0] not in done]
        for number, (name, statements) in missing:
            async with conn.transaction():
                await conn.execute(MIGRATIONS_TABLE)
                for statement in statements:
                    await conn.execute(statement)
                await conn.execute("INSERT INTO toka_migrations (seq, name) VALUES (%s, %s)", (number, name))
                if project is not None and done and number == missing[-1][0]:
                    await project(conn)
            if on_step is not None:
                on_step(name)
        return [name for _, (name, _) in missing]
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
