"""A real daemon whose OTLP receiver listens on a free loopback port."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from daemons import Spawner
from otel_support import OtelDaemon, receiver_of, token_of


@pytest.fixture
def start_otel(spawn: Spawner) -> Callable[..., OtelDaemon]:
    def start(**env: str) -> OtelDaemon:
        daemon = spawn(env={"TOKA_OTEL_LISTEN": "127.0.0.1:0", **env})
        return OtelDaemon(daemon, receiver_of(daemon.status(), token_of(daemon, env)))

    return start


@pytest.fixture
def otel_daemon(start_otel: Callable[..., OtelDaemon]) -> OtelDaemon:
    return start_otel()
