"""The PostgreSQL backend's connections to its server, and whether the server answers.

A :class:`Link` is one named connection, opened when first needed and again after it breaks;
while the server cannot be reached, a call fails at once with
:class:`~store.errors.StoreUnavailable` and the next try waits a backoff that doubles up to
:data:`MAX_BACKOFF_S`. :class:`Reachability` is what status and doctor show of it; all the links
of one store share one, and back off together: once one gets through, the others try at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from typing import Any

import psycopg
from psycopg import pq

from store.errors import ConfigError, StoreUnavailable
from store.url import redacted, scrubbed

log = logging.getLogger("toka.store")

CONNECT_TIMEOUT_S = 3
FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 5.0

_QUOTED = re.compile(r'"[^"]*"')


class Reachability:
    """Whether the server answered the last attempt, and since when: for status and doctor."""

    def __init__(self, url: str) -> None:
        self._url = url
        self.location = redacted(url)
        self.reachable = True
        self.error: str | None = None
        self.since = time.time()
        self.outages = 0
        self.links: list[Link] = []  # the connections to the server, all backing off together

    def failed(self, exc: BaseException) -> None:
        error = scrubbed(first_line(exc), self._url)  # libpq may quote the URL, password and all
        if self.reachable:
            self.reachable, self.since = False, time.time()
            self.outages += 1
            log.warning("database %s unreachable: %s", self.location, error)
        self.error = error

    def reached(self) -> None:
        if not self.reachable:
            log.info("database %s reachable again", self.location)
            self.reachable, self.since = True, time.time()
            for link in self.links:
                link.retry_now()

    def unavailable(self) -> StoreUnavailable:
        return StoreUnavailable(
            f"the database {self.location} cannot be reached ({self.error})",
            "hooks keep spooling and the daemon reconnects on its own; check the server (toka doctor)",
        )

    def to_json(self) -> dict[str, Any]:
        return {"reachable": self.reachable, "error": self.error, "since": self.since, "outages": self.outages}


class Link:
    """One named connection to the server, opened when first needed and again after it breaks."""

    def __init__(self, url: str, role: str, reach: Reachability, options: str = "") -> None:
        self.url = url
        self.role = role
        self._options = options  # server settings for this connection, as libpq's "options"
        self._reach = reach
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._failures = 0
        self.retry_at = 0.0
        # Calls that find no connection at once wait for one to be opened, instead of each
        # opening its own (all but the last would be left open, unused).
        self._connecting = asyncio.Lock()
        reach.links.append(self)

    def retry_now(self) -> None:
        """Another connection reached the server: the next call tries at once, not after the backoff."""
        self._failures = 0
        self.retry_at = 0.0

    def _usable(self) -> psycopg.AsyncConnection[Any] | None:
        """The connection, unless it is gone or was left where no statement can follow (a
        pipeline a terminated backend left unfinished): then it is closed, to be replaced."""
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            return None
        if conn.pgconn.status != pq.ConnStatus.OK or conn.pgconn.pipeline_status != pq.PipelineStatus.OFF:
            self._conn = None
            with contextlib.suppress(Exception):  # what is left of it may fail in any way
                conn.pgconn.finish()
            return None
        return conn

    async def get(self) -> psycopg.AsyncConnection[Any]:
        conn = self._usable()
        if conn is not None:
            return conn
        async with self._connecting:
            return await self._connect()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        conn = self._usable()
        if conn is not None:  # opened by the call this one waited for
            return conn
        if time.monotonic() < self.retry_at:
            raise self._reach.unavailable()
        try:
            self._conn = await psycopg.AsyncConnection.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name=f"toka {self.role}",  # how the server's views name it
                options=self._options or None,  # libpq drops a parameter given as None
            )
        except psycopg.ProgrammingError as exc:
            # libpq could not read the URL: no server will fix that. Its message quotes the part it
            # stumbled on, which may be the password: every quoted part is hidden.
            detail = _QUOTED.sub('"***"', first_line(exc))
            raise ConfigError(
                f"store.url is not a connection string libpq can read ({detail})",
                "write it as postgresql://USER@HOST/DB or host=HOST dbname=DB (toka config set store.url ...)",
            ) from None
        except psycopg.Error as exc:
            self._failures += 1
            self.retry_at = time.monotonic() + min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2**self._failures)
            self._reach.failed(exc)
            raise self._reach.unavailable() from None
        self._failures = 0
        self._reach.reached()
        return self._conn

    def backend_pid(self) -> int | None:
        """The server process of the open connection (None: none open): it names the notices
        this connection's commits send."""
        conn = self._conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    def lost(self, exc: BaseException) -> None:
        """The connection broke: the next call opens a new one (at once, the first time)."""
        self._reach.failed(exc)
        self._conn = None

    async def cancel(self) -> None:
        """Have the server cancel the statement running on the connection, if one is (a search
        that would hold up a shutdown); the call that runs it then fails."""
        conn = self._conn
        if conn is not None and not conn.closed and conn.pgconn.transaction_status == pq.TransactionStatus.ACTIVE:
            with contextlib.suppress(psycopg.Error):
                await conn.cancel_safe(timeout=CONNECT_TIMEOUT_S)

    async def close(self) -> None:
        if self in self._reach.links:
            self._reach.links.remove(self)
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


def reusable(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether a connection that raised can take the next statement: after an ordinary error it
    is idle and out of pipeline mode. A backend that ends in the middle of a pipeline
    (pg_terminate_backend, a server shutting down) can leave it neither broken nor closed, since
    libpq has read the error but not yet the end of the socket, yet stuck in the aborted pipeline:
    every later statement would fail with "cannot exit pipeline mode while busy"."""
    return (
        not conn.broken
        and not conn.closed
        and conn.pgconn.status == pq.ConnStatus.OK
        and conn.info.transaction_status == pq.TransactionStatus.IDLE
        and conn.pgconn.pipeline_status == pq.PipelineStatus.OFF
    )


def server_cause(exc: BaseException) -> BaseException:
    """The error the server sent (AdminShutdown, say), under what psycopg raised while cleaning up."""
    while isinstance(exc.__context__, psycopg.Error):
        exc = exc.__context__
    return exc


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
