"""A daemon whose PostgreSQL server goes away: restarted under its appends, down for a while
as hooks fire, or down when the daemon starts. Each test has a server of its own to stop."""

from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any

import postgres_server
from daemon_support import wait_for
from postgres_daemons import PgDaemon, Team, Writers, assert_once, hook_payloads, log_rows

from daemon.client.spool import append_to_spool
from daemon.ingest.spool import claimed_path
from store.errors import DaemonUnavailable, StoreUnavailable
from toka_cli.hook import hook_event

# How long the server stays down while hooks fire (a minute, tried by hand, behaves the same).
OUTAGE_S = 3.0


class Watch:
    """Polls a daemon's status in a thread: every ``connection`` it reported, and the errors."""

    def __init__(self, daemon: PgDaemon) -> None:
        self.seen: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, args=(daemon,), daemon=True)
        self._thread.start()

    def _poll(self, daemon: PgDaemon) -> None:
        with daemon.client() as client:
            while not self._stop.is_set():
                try:
                    self.seen.append(client.call("status")["connection"])
                except StoreUnavailable as exc:
                    self.errors.append(exc.message)
                self._stop.wait(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def test_a_server_restart_under_appends_is_ridden_out(team: Team, private_server: postgres_server.Server) -> None:
    a = team(private_server.url, "a").start()
    writers = Writers([a], per_daemon=3)
    writers.wait_for(30)
    watch = Watch(a)
    postgres_server.control(private_server, "restart")
    wait_for(lambda: a.connection()["reachable"], "the daemon is connected again")
    writers.wait_for(30)  # the daemon reconnected on its own: appends go on
    watch.stop()
    writers.stop()
    assert watch.errors == []  # status answered all along
    down = [state for state in watch.seen if not state["reachable"]]
    # ...saying the database was away. A fast shutdown ends the daemon's connections one at a time:
    # a statement on one still open may succeed after another failed, so one restart may count as
    # two outages (seen once in a loaded run), never as none.
    assert down and down[0]["error"] and down[0]["outages"] >= 1
    assert watch.seen[-1]["reachable"] and watch.seen[-1]["outages"] >= 1
    # An append in flight waits for the server; one that arrives while it is known to be away
    # fails at once, as StoreUnavailable (a hook spools then).
    assert all("StoreUnavailable" in failure for failure in writers.failed), writers.failed
    assert assert_once(private_server.url, writers.acked) >= len(writers.acked)


def test_hooks_spool_while_the_server_is_down_and_land_once_after(
    team: Team, private_server: postgres_server.Server
) -> None:
    payloads = iter(hook_payloads())
    fired: list[bytes] = []
    a = team(private_server.url, "a").start()
    for raw in itertools.islice(payloads, 5):  # recorded at once
        fired.append(raw)
        assert (a.hook(raw).returncode, a.paths.spool.exists()) == (0, False)

    postgres_server.control(private_server, "stop")
    down = time.monotonic()
    wait_for(lambda: not a.connection()["reachable"], "status says the database is unreachable")
    status = a.toka("status")
    assert status.returncode == 0 and "UNREACHABLE since" in status.stdout, status
    assert (a.status()["events"], a.status()["sessions"]) == (5, 1)  # as the daemon counted them
    took = []
    while len(took) < 15 or time.monotonic() - down < OUTAGE_S:  # hooks fire all through the outage
        fired.append(next(payloads))
        start = time.monotonic()
        hooked = a.hook(fired[-1])
        took.append(time.monotonic() - start)
        assert (hooked.returncode, hooked.stdout) == (0, b"")
        assert hooked.stderr.startswith(b"toka hook: spooled: the database"), hooked.stderr
    # In the spool, or in the file a drain claimed and could not append (it tries during the outage).
    waiting = [path for path in (a.paths.spool, claimed_path(a.paths)) if path.exists()]
    assert sum(len(path.read_bytes().splitlines()) for path in waiting) == len(took)
    # None waits for the server but perhaps the first, whose append met the broken connection.
    assert sorted(took)[-2] < 1.0, took

    postgres_server.control(private_server, "start")
    late = list(itertools.islice(payloads, 10))  # fired while the daemon reconnects
    fired += late
    threads = [threading.Thread(target=a.hook, args=(raw,)) for raw in late]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    def all_in_log() -> bool:  # drained by the daemon on its own
        return len(log_rows(private_server.url)) == len(fired) and not a.paths.spool.exists()

    wait_for(all_in_log, "every hook event is in the log and the spool is drained")
    # A hook told "unreachable" just before the reconnect may write its line just after the drain
    # that the reconnect started: that line lands too, without another outage or a restart.
    fired.append(next(payloads))
    append_to_spool(a.paths.spool, json.dumps(hook_event(fired[-1])).encode())
    wait_for(all_in_log, "the line spooled after the drain is in the log")
    keys = [row.key for row in log_rows(private_server.url)]
    assert len(keys) == len(set(keys)) == len(fired)  # each once
    assert a.connection()["reachable"] and a.status()["events"] == len(fired)


def test_a_daemon_started_while_the_server_is_down_says_why(team: Team, private_server: postgres_server.Server) -> None:
    a = team(private_server.url, "a")
    postgres_server.control(private_server, "stop")
    status = a.toka("status")  # starts the daemon, which cannot open its database
    assert status.returncode == DaemonUnavailable.exit_code == StoreUnavailable.exit_code == 4
    error, hint = status.stderr.splitlines()
    assert error.startswith("error: the daemon exited at start-up: the database postgresql://") and (
        "cannot be reached" in error
    )
    assert hint.startswith("hint: start the database server, or correct store.url"), hint
    assert not a.paths.socket.exists()
    hooked = a.hook(hook_payloads()[0])  # a hook spools, and does not start a daemon
    assert (hooked.returncode, hooked.stdout, a.paths.spool.exists()) == (0, b"", True)

    postgres_server.control(private_server, "start")
    a.start()  # once it can reach the server, it starts and takes in the spool
    wait_for(lambda: len(log_rows(private_server.url)) == 1 and not a.paths.spool.exists(), "the spool is drained")
