"""What the log's ops are handed: the core (its hub has the subscriptions), the reader of session names,
a way to wait until the lifecycle has taken in what an append brought, and one to have what is
committed covered by a signed tree head."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from daemon.agents.refs import Refs
from daemon.component import Component
from daemon.core import Core
from daemon.rpc.hub import Hub


@dataclass(frozen=True, slots=True)
class EventLog(Component):
    core: Core
    refs: Refs  # daemon/agents/refs.py: a session's name or prefix, or an agent's (its session)
    evaluated: Callable[[int], Awaitable[None]]  # Lifecycle.evaluated
    # Heads.sign_or_log: a head over what is committed, when heads are kept; why signing is refused
    sign: Callable[[], Awaitable[str | None]]
    # Embeddings.rebuild: drops the vectors and embeds the log again in the background; the events
    # of the embedded kinds to read (0 when semantic recall is off)
    re_embed: Callable[[], Awaitable[int]]

    @property
    def hub(self) -> Hub:
        return self.core.hub

    async def session_name(self, name: str, may_be_new: bool = False) -> str:
        """The full name of the session ``name`` names (see :meth:`Refs.session`)."""
        return await self.refs.session(name, may_be_new)
