"""`toka doctor` on the PostgreSQL backend: the connection, the server's version, the schema steps and
the role's rights, read by the daemon (``doctor.database``) or, when none runs, by the client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cli_support import invoke
from daemons import Spawner, wait_for
from postgres_support import ALL_RIGHTS, PASSWORD, as_user, database_of, execute, role, set_up_schema
from test_results import mismatches

from daemon.client.doctor import database_health
from daemon.client.sync import Client
from daemon.contract import results
from daemon.paths import resolve_paths
from store.postgres.schema import STEPS

NAMES = [
    "daemon",
    "socket",
    "files",
    "database",
    "server",
    "schema",
    "privileges",
    "clock",
    "disk",
    "config",
    "watch",
    "hooks",
    "mcp",
    "codex_notify",
    "daemon_clock",
    "export",
    "recall",
    "prices",
    "heads",
    "tables",
    "otel",
    "agents",
]


@pytest.fixture(autouse=True)
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real ~/.claude or the checkout's .claude."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)


def on_postgres(toka_home: Path, url: str) -> None:
    """This home's daemon, and doctor, use the PostgreSQL database at ``url``."""
    (toka_home / "config.toml").write_text(f'[store]\nbackend = "postgres"\nurl = "{url}"\n', encoding="utf-8")


def doctor() -> tuple[int, dict[str, dict[str, Any]], str]:
    """Exit code, the checks by name, and everything printed."""
    result = invoke("doctor", "--json")
    document = json.loads(result.stdout)
    assert [check["name"] for check in document["checks"]] == NAMES
    assert document["ok"] is (result.exit_code == 0)
    return result.exit_code, {check["name"]: check for check in document["checks"]}, result.stdout + result.stderr


def started(client: Client) -> dict[str, Any] | None:
    status: dict[str, Any] = client.call("recall.status")
    return status if status["problem"] or status["embedded"] is not None else None


def has_pgvector(url: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None


def test_a_healthy_postgres_daemon_is_ok(toka_home: Path, spawn: Spawner, postgres_database: str) -> None:
    on_postgres(toka_home, as_user(postgres_database, "postgres"))
    daemon = spawn()
    with daemon.client() as client:
        client.record("s", "message", {"text": "hello"})
        answered = client.call("doctor.database")
        recall = wait_for(lambda: started(client), "semantic recall has started or said why it cannot")
    code, checks, printed = doctor()
    assert code == 0
    # Semantic recall needs the server's pgvector: without it, a warning naming the install.
    without_pgvector = recall["problem_in"] == "index"
    assert without_pgvector == (not has_pgvector(postgres_database))
    expected = dict.fromkeys(NAMES, "ok") | ({"recall": "warning"} if without_pgvector else {})
    assert {name: check["status"] for name, check in checks.items()} == expected
    database = database_of(postgres_database)
    assert f"connected as postgres to database {database}" in checks["database"]["detail"]
    assert checks["server"]["detail"].startswith("PostgreSQL 1")
    assert checks["schema"]["detail"] == f"{len(STEPS)} schema steps applied, this toka's"
    assert checks["privileges"]["detail"] == "the role postgres has the rights toka needs"
    assert "is not in the future" in checks["clock"]["detail"]
    assert PASSWORD not in printed and "postgres:***@" in checks["database"]["detail"]
    assert mismatches(answered, results.PostgresHealth, "PostgresHealth") == []
    assert answered["backend"] == "postgres" and answered["reachable"] and answered["missing"] == []
    assert answered["server_version_num"] >= 130000 and answered["schema_pending"] == []


def test_without_a_daemon_the_client_reads_the_same_facts(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    daemon = spawn()
    with daemon.client() as client:
        answered = client.call("doctor.database")
    assert daemon.stop() == 0
    read_here = database_health(resolve_paths())
    assert not daemon.paths.socket.exists()
    assert read_here == answered


def test_a_role_without_the_rights_is_told_what_to_grant(toka_home: Path, postgres_database: str) -> None:
    set_up_schema(postgres_database)
    grants = ("GRANT CONNECT ON DATABASE {database} TO {{role}}", "GRANT SELECT ON events, blobs TO {{role}}")
    database = database_of(postgres_database)
    with role(postgres_database, *(grant.format(database=database) for grant in grants)) as name:
        on_postgres(toka_home, as_user(postgres_database, name))
        code, checks, printed = doctor()  # no daemon: none would start as this role
    assert code == 1
    privileges = checks["privileges"]
    assert privileges["status"] == "problem"
    assert privileges["detail"].startswith(
        f"the role {name} lacks INSERT on table events; INSERT on table blobs; SELECT, INSERT on table search_text;"
    )
    assert privileges["detail"].endswith("; SELECT on table toka_migrations")
    assert privileges["fix"].startswith(f"as the database's owner: GRANT INSERT ON events TO {name}; ")
    assert f"GRANT SELECT, INSERT, UPDATE ON sessions TO {name}" in privileges["fix"]
    assert f"GRANT SELECT, INSERT, DELETE ON append_batches TO {name}" in privileges["fix"]
    assert checks["database"]["status"] == "ok" and checks["schema"]["status"] == "warning"
    assert PASSWORD not in printed


def test_a_running_daemon_works_as_the_least_role_and_reports_a_right_it_lacks(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    set_up_schema(postgres_database)
    with role(postgres_database, *ALL_RIGHTS, "REVOKE DELETE ON append_batches FROM {role}") as name:
        on_postgres(toka_home, as_user(postgres_database, name))
        daemon = spawn()  # it starts: it appends and reads all the same
        with daemon.client() as client:
            client.record("s", "message", {"text": "appended as the role"})
            usage = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 5, "request_id": "req_1"}
            client.record("s", "usage", usage)  # claims its request (usage_requests)
        code, checks, _ = doctor()
        daemon.stop()
    assert code == 1
    assert checks["daemon"]["status"] == "ok"
    assert checks["privileges"]["detail"] == f"the role {name} lacks DELETE on table append_batches"
    assert checks["privileges"]["fix"] == f"as the database's owner: GRANT DELETE ON append_batches TO {name}"


def test_a_schema_of_a_newer_toka_is_a_problem(toka_home: Path, postgres_database: str) -> None:
    set_up_schema(postgres_database)
    execute(postgres_database, "INSERT INTO toka_migrations (seq, name) VALUES (999, 'p999_future')")
    on_postgres(toka_home, postgres_database)
    code, checks, _ = doctor()
    assert code == 1
    schema = checks["schema"]
    assert schema["status"] == "problem" and "(p999_future)" in schema["detail"]
    assert schema["fix"] == "pip install -U 'toka[postgres]'"


def test_an_empty_database_waits_for_the_daemon_to_set_it_up(toka_home: Path, postgres_database: str) -> None:
    on_postgres(toka_home, postgres_database)
    code, checks, _ = doctor()
    assert code == 0
    assert checks["schema"] == {
        "name": "schema",
        "status": "ok",
        "detail": "no toka schema yet; the daemon sets it up when it starts",
        "fix": None,
    }
    assert checks["clock"]["detail"] == "no events yet"


def test_an_unreachable_database_is_a_problem_without_its_password(toka_home: Path) -> None:
    on_postgres(toka_home, f"postgresql://toka:{PASSWORD}@/toka?host=/nonexistent")
    code, checks, printed = doctor()
    assert code == 1
    database = checks["database"]
    assert database["status"] == "problem"
    assert database["detail"].startswith("postgresql://toka:***@/toka?host=/nonexistent cannot be reached: ")
    assert database["fix"] == "check that the server runs, and store.url (toka config get store.url)"
    assert {checks[name]["detail"] for name in ("server", "schema", "privileges", "clock")} == {
        "not checked: the database cannot be reached"
    }
    assert PASSWORD not in printed
