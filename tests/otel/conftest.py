"""A real daemon whose OTLP receiver listens on a free loopback port."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from daemons import Spawned, Spawner
from otel_support import Receiver, receiver_of


@dataclass
class OtelDaemon:
    daemon: Spawned
    receiver: Receiver

    def call(self, op: str, **args: Any) -> Any:
        with self.daemon.client() as client:
            return client.call(op, **args)

    def report(self) -> dict[str, Any]:
        return self.call("report", kind="session", timezone="UTC")  # type: ignore[no-any-return]

    def compare(self) -> dict[str, Any]:
        return self.call("report.compare", against="telemetry", timezone="UTC")  # type: ignore[no-any-return]

    def events(self, session: str) -> list[dict[str, Any]]:
        return self.call("events.query", session=session)["events"]  # type: ignore[no-any-return]

    def otel(self) -> dict[str, Any]:
        return self.daemon.status()["otel"]  # type: ignore[no-any-return]


@pytest.fixture
def start_otel(spawn: Spawner) -> Callable[..., OtelDaemon]:
    def start(**env: str) -> OtelDaemon:
        daemon = spawn(env={"TOKA_OTEL_LISTEN": "127.0.0.1:0", **env})
        return OtelDaemon(daemon, receiver_of(daemon.status()))

    return start


@pytest.fixture
def otel_daemon(start_otel: Callable[..., OtelDaemon]) -> OtelDaemon:
    return start_otel()
