"""Whether whoever asked for a read still waits for it.

A server sets :data:`requester_gone` in the context of each request it answers to a function
saying whether that request's client has hung up. A backend that queues reads (SQLite runs them
one after the other on its reader's thread) checks it when a read's turn comes and, the client
gone, raises :class:`RequestAbandoned` instead of running it: a thousand costly requests sent by
clients that did not wait for their answers then cost nothing, and do not hold up those who wait.
Writes are never skipped: what was asked to be written is written, waited for or not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar

# None outside a request, or where the server does not tell.
requester_gone: ContextVar[Callable[[], bool] | None] = ContextVar("requester_gone", default=None)


class RequestAbandoned(asyncio.CancelledError):
    """The read was not run: its requester has gone. Unwinds the request as a cancellation does,
    so that no handler mistakes it for a failure to report."""
