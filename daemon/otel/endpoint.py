"""The receiver as the daemon runs it: serving only when ``otel.listen`` is set, started once the
socket answers, stopped with the daemon. aiohttp and opentelemetry-proto (the ``otel`` extra)
are imported here at start, so a daemon without ``otel.listen`` never loads them. A receiver
that cannot start (the extra missing, the port taken) is logged and shown in ``status``; the
daemon serves on without it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from daemon.component import Component
from daemon.core import Core
from daemon.otel.extra import INSTALL, missing
from daemon.otel.settings import OtelSettings
from daemon.otel.token import receiver_token
from store.errors import TokaError

if TYPE_CHECKING:
    from daemon.otel.http import OtelServer
    from daemon.otel.receiver import Receiver

log = logging.getLogger("toka.daemon")


class Endpoint(Component):
    def __init__(self, core: Core) -> None:
        self.core = core
        self.server: OtelServer | None = None
        self.receiver: Receiver | None = None
        self.error: str | None = None

    async def start(self) -> None:
        settings = self.core.settings[OtelSettings]
        if not settings.listen:
            return
        try:
            from daemon.otel.http import OtelServer
            from daemon.otel.receiver import Receiver
        except ImportError as exc:
            self.error = f"otel.listen is set but needs {missing(exc)}: {INSTALL}"
            log.error("otel: %s", self.error)
            return
        try:
            token = receiver_token(self.core.settings, self.core.paths)
        except (TokaError, OSError) as exc:
            self.error = f"no token for the receiver: {exc}"
            log.error("otel: %s", self.error)
            return
        self.receiver = Receiver(self.core)
        server = OtelServer(self.receiver, settings, token, self.core.paths.otel_token)
        try:
            await server.start()
        except OSError as exc:
            self.error = f"cannot listen on {settings.listen}: {exc.strerror or exc}"
            log.error("otel: %s", self.error)
            await server.stop(0)
            return
        self.server = server

    async def stop(self, deadline: float) -> None:
        if self.server is not None:
            await self.server.stop(deadline)

    def status(self) -> dict[str, Any] | None:
        """The ``otel`` part of ``status``: None while otel.listen is empty."""
        if not self.core.settings[OtelSettings].listen:
            return None
        if self.server is None or self.receiver is None:
            return {"listen": None, "error": self.error}
        return self.receiver.status(self.server.listening) | {"error": None}
