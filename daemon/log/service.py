"""What the log's ops are handed: the core, the subscription hub, and a way to wait until the
lifecycle has taken in what an append brought."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from daemon.core import Core
from daemon.server.hub import Hub
from store.base import EventStore
from store.errors import NotFound


@dataclass(frozen=True, slots=True)
class EventLog:
    core: Core
    hub: Hub
    evaluated: Callable[[int], Awaitable[None]]  # Lifecycle.evaluated

    async def session_name(self, name: str, may_be_new: bool = False) -> str:
        return await session_name(self.core.store, name, may_be_new)


async def session_name(store: EventStore, name: str, may_be_new: bool = False) -> str:
    """The full session name for a name or unique prefix (NotFound / Ambiguous otherwise).

    ``may_be_new``: a name that matches nothing is taken as it is (following a session that has
    not started yet).
    """
    try:
        return (await store.session(name)).session
    except NotFound:
        if may_be_new and name:
            return name
        raise
