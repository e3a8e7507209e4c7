"""The results of the log's upkeep, as declared types (the shapes of docs/json.md and
docs/protocol.md): verify, import, copy into PostgreSQL, and the database facts doctor reads.

Read through daemon/client/results.py, which gathers every result type; they live here so that
neither module grows past its size. tests/cli/test_results.py holds them to real answers. No
`from __future__ import annotations`: TypedDict reads NotRequired from the evaluated annotations.
"""

from typing import NotRequired, TypedDict

from daemon.client.results_heads import HeadsCheck


class VerifyProblem(TypedDict):
    seq: int
    id: str
    session: str
    what: str
    detail: str


class VerifyReport(TypedDict):
    ok: bool
    session: str | None
    events: int
    problem_count: int
    problems: list[VerifyProblem]
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


class MissingRights(TypedDict):
    type: str
    name: str
    privileges: list[str]
    grant: str


class PostgresHealth(TypedDict):
    """``doctor.database`` of a daemon on PostgreSQL: the server, the schema steps and the rights
    of the role (store/postgres_health.py)."""

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
