"""The receiver is off until otel.listen is set and costs nothing then; it starts and stops with
the daemon; a port it cannot take leaves the daemon serving and says why in status."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from daemons import Spawner
from otel_support import OtelDaemon, api_request, logs_request

from daemon.config_file import load_settings
from daemon.otel.address import listen_address
from daemon.otel.settings import OtelSettings
from daemon.sections import SECTIONS
from store.errors import ConfigError


def test_off_until_set_and_nothing_of_it_loaded(spawn: Spawner) -> None:
    daemon = spawn()
    assert daemon.status()["otel"] is None
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, daemon.server.process; print(sorted({'aiohttp', 'opentelemetry', "
         "'google.protobuf'} & set(sys.modules)))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert loaded.stdout.strip() == "[]"


def test_a_taken_port_leaves_the_daemon_serving_and_says_why(spawn: Spawner) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = spawn(env={"TOKA_OTEL_LISTEN": f"127.0.0.1:{port}"})
        status = daemon.status()["otel"]
    assert status["listen"] is None
    assert f"cannot listen on 127.0.0.1:{port}" in status["error"]


def test_the_receiver_stops_with_the_daemon(start_otel: Callable[..., OtelDaemon]) -> None:
    otel = start_otel()
    assert otel.receiver.send(logs_request([api_request("s", 1, "r", cost=0.1)])).status == 200
    host, port = otel.receiver.url.removeprefix("http://").split(":")

    assert otel.daemon.stop() == 0

    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port)), timeout=5):
        pass


@pytest.mark.parametrize("listen", ["nonsense", "127.0.0.1:99999", "::1:4318", "host:", ":4318x"])
def test_a_bad_listen_address_is_a_config_error(tmp_path, listen: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.toml").write_text(f'[otel]\nlisten = "{listen}"\n')
    with pytest.raises(ConfigError, match="otel.listen"):
        load_settings(SECTIONS, tmp_path / "config.toml")


@pytest.mark.parametrize(("listen", "port"), [("4318", 4318), ("[::1]:0", 0), ("localhost:4318", 4318)])
def test_listen_addresses_that_are_read(tmp_path, listen: str, port: int) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.toml").write_text(f'[otel]\nlisten = "{listen}"\n')
    read = load_settings(SECTIONS, tmp_path / "config.toml").settings[OtelSettings].listen
    assert read == listen
    assert listen_address(read) == ("127.0.0.1" if listen.isdigit() else listen.rsplit(":", 1)[0].strip("[]"), port)


def test_status_shows_where_it_receives_and_what(otel_daemon: OtelDaemon) -> None:
    assert otel_daemon.receiver.send(logs_request([api_request("s", 1, "r", cost=0.1)])).status == 200
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "toka"), "status"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert f"{otel_daemon.receiver.url}: 1 log records, 0 metric points, 0 requests refused" in shown
