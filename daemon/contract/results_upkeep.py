"""The results of the log's upkeep, as declared types (the shapes of docs/json.md and
docs/protocol.md): verify, import, copy into PostgreSQL, and the database facts doctor reads.

Read through daemon/contract/results.py, which gathers every result type; they live here so that
neither module grows past its size. tests/cli/test_results.py holds them to real answers. No
`from __future__ import annotations`: TypedDict reads NotRequired from the evaluated annotations.
"""

from typing import NotRequired, TypedDict

from daemon.contract.results_heads import HeadsCheck


class VerifyProblem(TypedDict):
    seq: int
    id: str
    session: str
    what: str
    detail: str


class Damage(TypedDict):
    """Why the database was found damaged, and since when: it takes no writes from then on."""

    reason: str
    since: str


class Tip(TypedDict):
    """The last event committed, as recorded beside the database (``toka.db-tip``)."""

    seq: int
    id: str


class DatabaseCheck(TypedDict):
    """The database's own check (SQLite's quick_check or integrity_check) and its recorded tip."""

    check: str
    ok: bool
    found: list[str]
    tip: Tip | None
    damaged: Damage | None


class VerifyReport(TypedDict):
    ok: bool
    session: str | None
    events: int
    problem_count: int
    problems: list[VerifyProblem]
    database: DatabaseCheck | None  # null for a session's verify (without --deep) and off SQLite
    heads: NotRequired[HeadsCheck | None]  # `toka verify` of the whole log; not in admin copy's


class BadLine(TypedDict):
    path: str
    line: int
    reason: str


class ImportReport(TypedDict):
    """`toka import --json`: what the files held and what was new to the log."""

    files: int
    formats: dict[str, int]
    events: int
    created: int
    existing: int
    sessions: list[str]
    unknown_types: dict[str, int]
    unknown_types_created: dict[str, int]
    bad_lines: list[BadLine]


class CopyReport(TypedDict):
    """`toka admin copy --json` (``admin.copy``): the log copied into a PostgreSQL database."""

    target: str
    events: int
    copied: int
    present: int
    mismatched: int
    sessions: int
    seconds: float
    verify: VerifyReport
    verify_seconds: float


class DatabaseHealth(TypedDict):
    """``doctor.database`` of a daemon on SQLite: facts about the database file, for `toka doctor`."""

    backend: str
    path: str
    exists: bool
    unreadable: str | None
    quick_check: list[str]
    size_bytes: int
    schema_version: int | None
    schema_current: int
    events_table: bool
    newest_ts: int | None
    newest: str | None
    damaged: Damage | None
    tip: Tip | None
    tip_problem: str | None


class RecoverySaved(TypedDict):
    events: int
    payloads: int
    tombstones: int


class RecoveryLost(TypedDict):
    events: int
    seqs: list[list[int]]  # [first, last] of each run of lost seqs, at most 100 runs
    events_without_payload: int
    unreadable: int


class Recovery(TypedDict):
    """`toka admin recover --json`: what a damaged database's recovery saved and lost."""

    database: str
    kept_as: str
    methods: list[str]
    saved: RecoverySaved
    lost: RecoveryLost
    last_seq: int
    sessions: int
    integrity_check: list[str]  # SQLite's, of the new database
    notes: list[str]
    stopped: int | None


class MissingRights(TypedDict):
    type: str
    name: str
    privileges: list[str]
    grant: str


class PostgresHealth(TypedDict):
    """``doctor.database`` of a daemon on PostgreSQL: the server, the schema steps and the rights
    of the role (store/postgres/health.py)."""

    backend: str
    location: str
    reachable: bool
    error: str | None
    server_version: str | None
    server_version_num: int | None
    database: str | None
    user: str | None
    schema: str | None
    toka_database: bool
    other_tables: list[str]
    schema_applied: list[str] | None
    schema_steps: list[str]
    schema_unknown: list[str] | None
    schema_pending: list[str] | None
    missing: list[MissingRights]
    newest_ts: int | None
    newest: str | None
