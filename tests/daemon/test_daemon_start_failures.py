"""Every way a daemon's start-up can fail ends the process at once, with its reason.

Before the store opens, once it opened, and while the components load from it: ``python -m
daemon`` exits non-zero, its stderr ends with ``error: ...`` (and ``hint: ...`` when there is one), it leaves the
reason for the client that started it (daemon/client/autostart.py reads it), and it holds
neither the pidfile lock nor the socket. A daemon that hangs instead fails here on the timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from daemon_support import Spawner, run_daemon_to_exit, write_config
from damage import corrupt_table

from daemon.paths import Paths


def before_the_store_a_malformed_machine(paths: Paths, spawn: Spawner) -> str:
    write_config(paths, "[state.machines.x]\nstates = 3\n")
    return "machine x"


def at_open_a_file_that_is_no_database(paths: Paths, spawn: Spawner) -> str:
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    paths.database.write_bytes(b"\x01" * 8192)
    return "not a readable toka database"


def at_open_a_database_of_a_newer_toka(paths: Paths, spawn: Spawner) -> str:
    daemon = spawn()
    daemon.stop()
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(paths.database)) as db, db:
        db.execute("INSERT INTO toka_migrations VALUES (99, 'm099_future', '2030-01-01')")
    return "newer toka"


def after_the_store_a_directory_where_the_socket_goes(paths: Paths, spawn: Spawner) -> str:
    paths.socket.mkdir(parents=True)
    return str(paths.socket)


def while_loading_a_damaged_page_of_the_log(paths: Paths, spawn: Spawner) -> str:
    daemon = spawn()
    with daemon.client() as client:
        client.append([{"kind": "message", "payload": {"n": n}} for n in range(20)], session="s")
    daemon.stop()
    corrupt_table(paths.database, "events")
    return "malformed"


@pytest.mark.parametrize(
    "break_it",
    [
        before_the_store_a_malformed_machine,
        at_open_a_file_that_is_no_database,
        at_open_a_database_of_a_newer_toka,
        after_the_store_a_directory_where_the_socket_goes,
        while_loading_a_damaged_page_of_the_log,
    ],
)
def test_a_failed_start_exits_with_its_reason_and_holds_nothing(
    paths: Paths, spawn: Spawner, break_it: Callable[[Paths, Spawner], str]
) -> None:
    quoted = break_it(paths, spawn)

    result = run_daemon_to_exit()  # fails on its timeout if the process does not end

    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    [error] = [line for line in lines if line.startswith("error: ")]
    assert quoted in error, result.stderr
    assert lines[-1] == error or (lines[-1].startswith("hint: ") and lines[-2] == error), result.stderr
    left = json.loads(paths.start_failure.read_text())
    assert left["message"] == error.removeprefix("error: ")
    assert not paths.pidfile.exists()
    assert not paths.socket.is_socket()
