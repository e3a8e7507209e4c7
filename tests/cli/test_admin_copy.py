"""`toka admin copy --to URL`: a SQLite log copied into a real PostgreSQL database with the same ids,
verified on both sides, resumed after an interruption, and never showing the URL's password."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest
from cli_support import assert_error, invoke, toka
from daemons import PATIENCE, Spawned
from postgres_support import ALL_RIGHTS, PASSWORD, append, as_user, execute, role, rows, set_up_schema, verify
from test_results import mismatches

from daemon.client.sync import Client
from daemon.contract import results
from store.events import NewEvent

LARGE = "a large output that compresses well " * 2000  # about 70 kB: stored zlib-compressed
# More than three pages of the copy (daemon/transfer/service.py PAGE), and not a whole number of them.
BULK = 3300
REPORT_KEYS = {"target", "events", "copied", "present", "mismatched", "sessions", "seconds", "verify", "verify_seconds"}


def build_log(client: Client, bulk: int = BULK) -> dict[str, Any]:
    """A log of several sessions: a branch and a merge (explicit parents), idempotency keys, large
    payloads and plain chains; what the tests look for in the copy."""
    root = client.record("dag", "message", {"text": "root"}, key="root")
    left = client.record("dag", "message", {"text": "left"}, parents=[root["id"]])
    right = client.record("dag", "tool.call", {"tool": "Bash", "input": "ls"}, parents=[root["id"]], agent="sub")
    merge = client.record("dag", "message", {"text": "merge"}, parents=[left["id"], right["id"]])
    large = client.record("big", "tool.result", {"output": LARGE}, key="large")
    for start in range(0, bulk, 1000):
        client.append(
            [
                {"session": f"bulk-{i % 3}", "kind": "message", "payload": {"text": f"event {i}"}, "key": f"k{i}"}
                for i in range(start, min(bulk, start + 1000))
            ]
        )
    return {"merge": merge, "left": left, "right": right, "large": large}


def source_ids(client: Client) -> list[str]:
    return [event["id"] for event in client.iter_events()]


def target_ids(url: str) -> list[str]:
    return [row[0] for row in rows(url, "SELECT id FROM events ORDER BY seq")]


def copy_json(url: str, exit_code: int = 0) -> dict[str, Any]:
    result = invoke("admin", "copy", "--to", url, "--json")
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_a_copy_keeps_every_id_count_and_link_and_verifies_on_both_sides(
    daemon: Spawned, postgres_database: str
) -> None:
    with daemon.client() as client:
        built = build_log(client)
        ids = source_ids(client)
        sessions = {s["session"]: s["events"] for s in client.call("sessions.list")["sessions"]}
        assert client.call("verify")["ok"]
    report = copy_json(postgres_database)
    assert report["copied"] == report["events"] == len(ids) == BULK + 5
    assert (report["present"], report["mismatched"], report["sessions"]) == (0, 0, len(sessions))
    assert report["verify"] == {
        "ok": True,
        "session": None,
        "events": len(ids),
        "problem_count": 0,
        "problems": [],
        "database": None,  # PostgreSQL looks after its own files
    }
    assert target_ids(postgres_database) == ids
    assert dict(rows(postgres_database, "SELECT session, events FROM sessions")) == sessions
    merge = built["merge"]["id"]
    [(parents,)] = rows(postgres_database, "SELECT parents FROM events WHERE id = %s", (merge,))
    assert parents.split(",") == [built["left"]["id"], built["right"]["id"]]
    keyed = rows(postgres_database, "SELECT key FROM events WHERE session = 'bulk-0' ORDER BY seq LIMIT 2")
    assert keyed == [("k0",), ("k3",)]
    [(codec, size, stored)] = rows(
        postgres_database,
        "SELECT b.codec, b.size, octet_length(b.data) FROM events e JOIN blobs b ON b.digest = e.digest"
        " WHERE e.id = %s",
        (built["large"]["id"],),
    )
    assert codec == 1 and stored < size / 10  # compressed there too
    assert verify(postgres_database) == {"ok": True, "events": len(ids), "problems": []}


def test_the_report_has_the_documented_shape(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        client.record("s", "message", {"text": "one"})
    report = copy_json(postgres_database)
    assert set(report) == REPORT_KEYS
    assert mismatches(report, results.CopyReport, "CopyReport") == []
    assert report["target"] == postgres_database  # no password in it to hide


def test_copying_again_writes_nothing_and_reports_every_event_present(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        build_log(client)
        ids = source_ids(client)
    first = copy_json(postgres_database)
    again = copy_json(postgres_database)
    assert first["copied"] == len(ids)
    assert (again["copied"], again["present"], again["mismatched"]) == (0, len(ids), 0)
    assert again["verify"]["ok"] and again["verify"]["events"] == len(ids)
    assert target_ids(postgres_database) == ids


def test_a_copy_stopped_half_way_resumes_where_it_stopped(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        build_log(client)
        ids = source_ids(client)
    set_up_schema(postgres_database)
    # The target fails the third page: the two before it are committed, each in its own transaction.
    execute(
        postgres_database,
        "CREATE FUNCTION stop_copy() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'the test stops the copy here'; END $$",
        "CREATE TRIGGER stop_copy BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.seq > 2000)"
        " EXECUTE FUNCTION stop_copy()",
    )
    stopped = invoke("admin", "copy", "--to", postgres_database)
    assert stopped.exit_code == 1
    assert_error(stopped.stderr, contains="the test stops the copy here", hint=False)
    assert target_ids(postgres_database) == ids[:2000]
    execute(postgres_database, "DROP TRIGGER stop_copy ON events")
    resumed = copy_json(postgres_database)
    assert (resumed["present"], resumed["copied"]) == (2000, len(ids) - 2000)
    assert resumed["verify"]["ok"] and target_ids(postgres_database) == ids


def test_a_log_that_grew_is_brought_up_to_date(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        first = client.record("grows", "message", {"text": "before"})
        copy_json(postgres_database)
        client.append([{"session": "grows", "kind": "message", "payload": {"text": f"after {i}"}} for i in range(3)])
        ids = source_ids(client)
    report = copy_json(postgres_database)
    assert (report["present"], report["copied"]) == (1, 3)
    assert target_ids(postgres_database) == ids and ids[0] == first["id"]
    [(head,)] = rows(postgres_database, "SELECT head FROM sessions WHERE session = 'grows'")
    assert head == ids[-1]


def test_progress_counts_the_copy_then_the_verify(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        build_log(client)
        total = len(source_ids(client))
    seen: list[tuple[int, int]] = []
    with Client(daemon.paths, autostart=False) as client:
        client.call("admin.copy", progress=lambda done, of: seen.append((done, of)), to=postgres_database)
    assert seen[-1] == (2 * total, 2 * total)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert {of for _, of in seen} == {2 * total}
    assert any(done == total for done, _ in seen)  # the copy's end, before the verify's steps


def test_the_password_is_in_no_output_error_or_log(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        client.record("s", "message", {"text": "secret-free"})
    with_password = as_user(postgres_database, "postgres")
    copied = toka("admin", "copy", "--to", with_password)
    listed = toka("admin", "copy", "--to", with_password, "--json")
    unreachable = toka("admin", "copy", "--to", f"postgresql://toka:{PASSWORD}@/toka?host=/nonexistent")
    malformed = toka("admin", "copy", "--to", f"postgresql://toka:{PASSWORD}%zz@[::1/toka")
    assert (copied.returncode, listed.returncode, unreachable.returncode, malformed.returncode) == (0, 0, 4, 2)
    assert "postgres:***@" in copied.stdout and json.loads(listed.stdout)["target"].startswith(
        "postgresql://postgres:***@"
    )
    assert copied.stderr == ""  # no progress bar in a pipe
    for run in (copied, listed, unreachable, malformed):
        assert PASSWORD not in run.stdout + run.stderr
    assert PASSWORD not in daemon.log()


def test_a_target_that_does_not_verify_exits_5_with_the_report(daemon: Spawned, postgres_database: str) -> None:
    with daemon.client() as client:
        first = client.record("s", "message", {"text": "as it was"})
        client.record("s", "message", {"text": "after it"})
    copy_json(postgres_database)
    execute(
        postgres_database,
        "UPDATE blobs SET codec = 0, data = convert_to('{\"text\":\"changed\"}', 'UTF8')"
        f" WHERE digest = (SELECT digest FROM events WHERE id = '{first['id']}')",
    )
    result = invoke("admin", "copy", "--to", postgres_database, "--json")
    assert result.exit_code == 5
    report = json.loads(result.stdout)
    assert (report["present"], report["copied"], report["verify"]["ok"]) == (2, 0, False)
    assert report["verify"]["problems"][0]["id"] == first["id"] and report["verify"]["problems"][0]["what"] == "digest"
    assert_error(result.stderr, contains="does not match the log: verify found 1 problems there")


def test_an_event_whose_key_the_target_gave_another_is_mismatched(daemon: Spawned, postgres_database: str) -> None:
    append(postgres_database, NewEvent("s", "message", {"text": "another machine's"}, key="shared-key"))
    with daemon.client() as client:
        keyed = client.record("s", "message", {"text": "this machine's"}, key="shared-key")
        client.record("s", "message", {"text": "its child"})
    result = invoke("admin", "copy", "--to", postgres_database, "--json")
    assert result.exit_code == 5
    report = json.loads(result.stdout)
    assert (report["mismatched"], report["copied"], report["present"]) == (1, 1, 0)
    assert keyed["id"] not in target_ids(postgres_database)
    problem = report["verify"]["problems"][0]
    assert problem["what"] == "chain" and keyed["id"][:12] in problem["detail"]  # the child's parent is not there
    assert_error(result.stderr, contains="1 events got other ids there, and verify found 1 problems there")


def test_an_unreachable_target_is_one_line_with_a_hint_and_exit_4(daemon: Spawned) -> None:
    result = toka("admin", "copy", "--to", "postgresql://toka@/toka?host=/nonexistent")
    assert result.returncode == 4
    error = assert_error(result.stderr, contains="cannot be reached")
    assert "postgresql://toka@/toka?host=/nonexistent" in error
    assert "check that the server runs" in result.stderr


def test_a_target_that_is_not_a_url_is_a_usage_error(daemon: Spawned) -> None:
    result = invoke("admin", "copy", "--to", "/tmp/toka.db")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="not a PostgreSQL URL")


def test_a_database_of_other_tables_is_refused_and_left_alone(daemon: Spawned, postgres_database: str) -> None:
    execute(postgres_database, "CREATE TABLE invoices (id integer)")
    result = invoke("admin", "copy", "--to", postgres_database)
    assert result.exit_code == 1
    assert_error(result.stderr, contains="is not a toka database: it holds other tables (invoices)")
    tables = rows(postgres_database, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    assert tables == [("invoices",)]


def test_a_database_of_a_newer_toka_is_refused(daemon: Spawned, postgres_database: str) -> None:
    set_up_schema(postgres_database)
    execute(postgres_database, "INSERT INTO toka_migrations (seq, name) VALUES (999, 'p999_future')")
    result = invoke("admin", "copy", "--to", postgres_database)
    assert result.exit_code == 2
    assert_error(result.stderr, contains="was written by a newer toka (schema step p999_future)")


@pytest.mark.parametrize("lacking", ["INSERT ON blobs", "UPDATE ON sessions"])
def test_a_role_without_the_rights_is_told_what_to_grant(daemon: Spawned, postgres_database: str, lacking: str) -> None:
    set_up_schema(postgres_database)
    right, table = lacking.split(" ON ")
    with role(postgres_database, *ALL_RIGHTS, f"REVOKE {lacking} FROM {{role}}") as name:
        result = invoke("admin", "copy", "--to", as_user(postgres_database, name))
    assert result.exit_code == 1
    error = assert_error(result.stderr, contains=f"the role {name} lacks rights")
    assert f"{right} on table {table}" in error
    assert f"GRANT {right} ON {table} TO {name}" in result.stderr


def test_a_client_that_hangs_up_stops_the_copy_after_its_page(daemon: Spawned, postgres_database: str) -> None:
    events = 20_000  # twenty pages: the daemon notices the hang-up long before the last
    with daemon.client() as client:
        for start in range(0, events, 5000):
            client.append(
                [{"session": f"s{i % 4}", "kind": "message", "payload": {"n": i}} for i in range(start, start + 5000)]
            )
    request = {"id": 1, "op": "admin.copy", "args": {"to": postgres_database, "progress": True}}
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(PATIENCE)
        sock.connect(str(daemon.paths.socket))
        sock.sendall(json.dumps(request).encode() + b"\n")
        first = json.loads(sock.makefile("rb").readline())
    assert first["progress"]["done"] > 0  # it was copying when the client left
    deadline = time.monotonic() + PATIENCE
    while daemon.status()["clients"] > 1 and time.monotonic() < deadline:  # the copy's connection is gone
        time.sleep(0.01)
    held = len(target_ids(postgres_database))
    assert 0 < held < events and held % 1000 == 0  # whole pages, and not all of them
    assert "Traceback" not in daemon.log() and "never retrieved" not in daemon.log()
    resumed = copy_json(postgres_database)
    assert (resumed["present"], resumed["copied"]) == (held, events - held)
