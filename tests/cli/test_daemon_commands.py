"""`toka daemon start|status|stop|restart|logs`, each in a real process."""

from __future__ import annotations

import json

from cli_support import home, pid_alive, toka

from daemon.version import VERSION


def _pid() -> int:
    return int((home() / "run" / "toka.pid").read_text())


def test_status_when_stopped_exits_4_and_starts_nothing() -> None:
    result = toka("daemon", "status")
    assert result.returncode == 4
    assert result.stdout.split("\n")[0].split() == ["state", "unreachable"]
    assert "the toka daemon is not running" in result.stdout
    assert result.stderr.startswith("error: the toka daemon is not running\nhint: start it with `toka daemon start`")
    assert not (home() / "run" / "toka.sock").exists()


def test_start_status_stop() -> None:
    started = toka("daemon", "start")
    assert started.returncode == 0, started.stderr
    pid = _pid()
    assert started.stdout == f"running: toka {VERSION}, pid {pid}\n"
    assert pid_alive(pid)

    status = toka("daemon", "status", "--json")
    assert status.returncode == 0
    assert json.loads(status.stdout)["server"]["pid"] == pid

    again = toka("daemon", "start")  # nothing to do: the same daemon answers
    assert again.returncode == 0
    assert _pid() == pid

    stopped = toka("daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout == f"stopped the daemon (pid {pid})\n"
    assert not pid_alive(pid)  # stop waits until the process is gone
    assert not (home() / "run" / "toka.sock").exists()
    assert toka("daemon", "status").returncode == 4


def test_stop_when_not_running_says_so() -> None:
    result = toka("daemon", "stop")
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == "the daemon was not running\n"


def test_restart_gives_a_new_pid_and_keeps_the_log() -> None:
    assert toka("record", "s", "message", '{"text": "kept"}').returncode == 0
    old = _pid()
    result = toka("daemon", "restart", "--json")
    assert result.returncode == 0, result.stderr
    new = json.loads(result.stdout)["server"]["pid"]
    assert new != old
    assert new == _pid()
    assert not pid_alive(old)
    events = toka("events", "s", "--json")
    assert [json.loads(line)["payload"] for line in events.stdout.splitlines()] == [{"text": "kept"}]


def test_restart_when_stopped_starts_it() -> None:
    result = toka("daemon", "restart")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("running: toka ")
    assert toka("daemon", "status").returncode == 0


def test_logs_print_the_daemon_log() -> None:
    assert toka("daemon", "start").returncode == 0
    pid = _pid()
    assert toka("daemon", "stop").returncode == 0
    result = toka("daemon", "logs")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert any(f"listening on {home() / 'run' / 'toka.sock'} (pid {pid}" in line for line in lines)
    assert "stopping: shutdown requested by a client" in lines[-2]
    assert lines[-1].endswith("INFO stopped")
    tail = toka("daemon", "logs", "-n", "1")
    assert tail.stdout.splitlines() == lines[-1:]


def test_logs_before_any_daemon_ran() -> None:
    result = toka("daemon", "logs")
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == f"no log yet at {home() / 'logs' / 'daemon.log'}\n"
