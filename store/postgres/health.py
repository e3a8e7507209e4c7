"""What `toka doctor` needs to know about a PostgreSQL database, and what `toka admin copy` checks
before it writes to one: whether the server answers, its version, the schema steps applied, and
which rights the connecting role lacks.

Read on a connection of its own, in one read-only transaction, from the catalogs and the
privilege functions (``has_table_privilege``), so that it works the same in the daemon (which
answers ``doctor.database`` with it, in a thread) and in the client when no daemon runs: a daemon
that cannot start on its database is the case that needs a diagnosis most. Synchronous psycopg,
imported when called. Only facts come back, the password hidden wherever the URL shows; what
they mean is the doctor's to say (toka_cli/doctor_postgres.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from store.events import format_ts
from store.postgres.schema import STEPS
from store.url import redacted, scrubbed

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5

# The rights the daemon's work takes on each of toka's tables, beyond USAGE on the schema: the
# least a daemon's role may hold (docs/postgres.md grants a little more). The log itself is
# append-only for it: appends are ordered by an advisory lock, not a table lock.
TABLE_RIGHTS: dict[str, tuple[str, ...]] = {
    "events": ("SELECT", "INSERT"),
    "blobs": ("SELECT", "INSERT"),
    "search_text": ("SELECT", "INSERT"),
    # UPDATE: appends fold into the session and usage tables with INSERT ... ON CONFLICT DO UPDATE.
    "sessions": ("SELECT", "INSERT", "UPDATE"),
    "session_agents": ("SELECT", "INSERT", "UPDATE"),
    "session_kinds": ("SELECT", "INSERT", "UPDATE"),
    "usage_buckets": ("SELECT", "INSERT", "UPDATE"),
    # Which source reported each request first (store/usage.py): claimed, never changed.
    "usage_requests": ("SELECT", "INSERT"),
    # Where the OTLP forwarder stands (store/cursors.py): saved with INSERT ... ON CONFLICT DO UPDATE.
    "cursors": ("SELECT", "INSERT", "UPDATE"),
    # The last seq handed out, written by every append with INSERT ... ON CONFLICT DO UPDATE.
    "log_end": ("SELECT", "INSERT", "UPDATE"),
    # The last seq applied to the derived tables (store/postgres/projector.py), moved by UPDATE.
    "projected": ("SELECT", "UPDATE"),
    # DELETE: the idempotency records of appends a day old are dropped.
    "append_batches": ("SELECT", "INSERT", "DELETE"),
    "toka_migrations": ("SELECT",),
    # Semantic recall's (store/postgres/vectors.py): made on its first use, not by a step, so a
    # database may lack it; when there, DELETE empties it for a new model.
    "vectors": ("SELECT", "INSERT", "DELETE"),
}
# What applying the schema steps takes besides: making tables in the schema, recording each step.
MIGRATION_SCHEMA_RIGHTS = ("CREATE",)
MIGRATION_TABLE_RIGHTS = ("INSERT",)


@dataclass(frozen=True)
class MissingRights:
    """Rights the role lacks on one object, and the statement that grants them."""

    type: str  # "table" or "schema"
    name: str
    privileges: tuple[str, ...]
    grant: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "privileges": list(self.privileges)}


@dataclass(frozen=True)
class PostgresHealth:
    location: str
    """The URL with its password hidden (store/url.py)."""
    reachable: bool = False
    error: str | None = None
    """Why the database could not be looked at: not reached, refused, or not read. When set,
    the fields below it were not read."""
    server_version: str | None = None
    server_version_num: int | None = None
    database: str | None = None
    user: str | None = None
    schema: str | None = None
    """The schema toka's tables are in (``current_schema()``); None when the search path names none."""
    toka_database: bool = False
    """Whether toka has set the database up (it records its schema steps in ``toka_migrations``)."""
    other_tables: tuple[str, ...] = ()
    """Tables in the schema that are not toka's, all of them when toka has not set it up (the first
    20, by name)."""
    schema_applied: tuple[str, ...] | None = ()
    """The steps the database records; None when the role may not read them."""
    schema_steps: tuple[str, ...] = tuple(name for name, _ in STEPS)
    """This toka's schema steps."""
    missing: tuple[MissingRights, ...] = field(default=())
    newest_ts: int | None = None
    """The time of the newest event, in UTC microseconds; None without events (or without the
    right to read them)."""

    @property
    def schema_unknown(self) -> list[str] | None:
        """Steps the database records that this toka does not know: a newer toka wrote it."""
        if self.schema_applied is None:
            return None
        return [name for name in self.schema_applied if name not in self.schema_steps]

    @property
    def schema_pending(self) -> list[str] | None:
        """This toka's steps the database does not record yet: applied when a daemon opens it."""
        if self.schema_applied is None:
            return None
        return [name for name in self.schema_steps if name not in self.schema_applied]

    def to_json(self) -> dict[str, Any]:
        document = asdict(self)
        for name in ("other_tables", "schema_applied", "schema_steps"):
            document[name] = None if document[name] is None else list(document[name])
        document["missing"] = [item.to_json() for item in self.missing]
        document["schema_unknown"] = self.schema_unknown
        document["schema_pending"] = self.schema_pending
        document["newest"] = None if self.newest_ts is None else format_ts(self.newest_ts)
        return {"backend": "postgres", **document}


def inspect_postgres(url: str) -> PostgresHealth:
    """The facts about the database at ``url``; never creates, migrates or writes anything."""
    location = redacted(url)
    if not url:  # libpq would take it for its defaults (PGHOST...), which the daemon does not
        return PostgresHealth(location, error="no database URL: store.url is empty")
    try:
        import psycopg
    except ImportError:
        return PostgresHealth(location, error="psycopg is not installed (pip install 'toka[postgres]')")
    try:
        conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, application_name="toka doctor")
    except psycopg.Error as exc:
        return PostgresHealth(location, error=scrubbed(first_line(exc), url))
    try:
        with conn:
            conn.read_only = True
            return _read(conn, location)
    except psycopg.Error as exc:
        return PostgresHealth(location, reachable=True, error=f"connected, but cannot read it: {first_line(exc)}")


def url_problem(url: str) -> str | None:
    """Why psycopg cannot read ``url`` as a connection string (None when it can); ImportError
    without psycopg."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)
    except psycopg.Error as exc:
        return scrubbed(first_line(exc), url)
    return None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _one(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def _read(conn: psycopg.Connection[Any], location: str) -> PostgresHealth:
    version = _one(conn, "SHOW server_version")
    row = conn.execute("SELECT current_database(), current_user, current_schema()").fetchone()
    database, user, schema = row if row is not None else (None, None, None)
    tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    toka = "toka_migrations" in tables
    applied: tuple[str, ...] | None = ()
    if toka:
        applied = None  # unknown: the role may not read the record
        if _one(conn, "SELECT has_table_privilege('toka_migrations', 'SELECT')"):
            applied = tuple(r[0] for r in conn.execute("SELECT name FROM toka_migrations ORDER BY seq"))
    # Steps to apply take the right to make tables; unknown (None) when the record cannot be read.
    pending = not toka or (applied is not None and len(applied) < len(STEPS))
    missing = _missing(conn, str(user), schema, tables, pending)
    newest = None
    if "events" in tables and _one(conn, "SELECT has_table_privilege('events', 'SELECT')"):
        newest = _one(conn, "SELECT max(ts) FROM events")
    return PostgresHealth(
        location,
        reachable=True,
        server_version=str(version),
        server_version_num=conn.info.server_version,
        database=database,
        user=user,
        schema=schema,
        toka_database=toka,
        other_tables=tuple(sorted(tables - set(TABLE_RIGHTS) if toka else tables)[:20]),
        schema_applied=applied,
        missing=tuple(missing),
        newest_ts=None if newest is None else int(newest),
    )


def _missing(
    conn: psycopg.Connection[Any], user: str, schema: str | None, tables: set[str], pending: bool
) -> list[MissingRights]:
    """The rights the role lacks: on the schema (USAGE; CREATE while steps are pending) and on
    each of toka's tables that exists (TABLE_RIGHTS; INSERT on toka_migrations while pending)."""
    missing = []
    if schema is not None:
        wanted = ("USAGE", *(MIGRATION_SCHEMA_RIGHTS if pending else ()))
        lacking = tuple(p for p in wanted if not _one(conn, "SELECT has_schema_privilege(%s, %s)", (schema, p)))
        if lacking:
            missing.append(MissingRights("schema", schema, lacking, _grant(lacking, f"SCHEMA {_ident(schema)}", user)))
    for table, rights in TABLE_RIGHTS.items():
        if table not in tables:
            continue
        wanted = rights + (MIGRATION_TABLE_RIGHTS if pending and table == "toka_migrations" else ())
        lacking = tuple(p for p in wanted if not _one(conn, "SELECT has_table_privilege(%s, %s)", (table, p)))
        if lacking:
            missing.append(MissingRights("table", table, lacking, _grant(lacking, _ident(table), user)))
    return missing


def _grant(privileges: tuple[str, ...], target: str, user: str) -> str:
    return f"GRANT {', '.join(privileges)} ON {target} TO {_ident(user)}"


def _ident(name: str) -> str:
    """``name`` as SQL writes it: as it is when it needs no quotes."""
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'
