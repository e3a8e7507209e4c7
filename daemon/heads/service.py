"""The daemon's signed tree heads: after commits, the log's Merkle root signed and kept.

A commit wakes the signer; it signs the tree as it stands once ``head_interval_ms`` has passed
since the head before (so a burst of commits costs one signature, and no commit waits for one),
appends the head to ``heads.jsonl`` beside the database, and hands it to the witness. A proof
that needs a head covering a newer event signs one at once, and so does a clean stop, so that a
log left by a stopped daemon is covered to its last event.

On a log other daemons append to (PostgreSQL) no heads are signed: see docs/tamper-evidence.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from daemon.core import Core
from daemon.heads.keys import HeadKey, load_key
from daemon.heads.record import SignedHead, append_head, last_head, signed_bytes
from daemon.heads.witness import Witness
from store.errors import NotFound, UsageError
from store.events import format_ts
from store.merkle import Frontier

log = logging.getLogger("toka.daemon")


class Heads:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings.store
        self.witness = Witness(self.settings)
        self._file = str(core.paths.heads_file)  # status shows it on every call
        self.key: HeadKey | None = None
        self.last: SignedHead | None = None
        self.active = False
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Load (or make) the key and sign the log as it is, when it is kept and grew unsigned."""
        store = self.core.store
        if not self.settings.signed_heads or store.shared or await store.tree() is None:
            return
        self.key = load_key(self.core.paths.heads_key)
        self.last = last_head(self.core.paths.heads_file)
        self.active = True
        await self.sign()
        self._task = asyncio.create_task(self._run(), name="heads")

    def status(self) -> dict[str, object] | None:
        """What `status` shows: the latest signed head and the witness's failures; None when no
        heads are signed (turned off, or a log in memory or shared)."""
        if not self.active:
            return None
        head = self.last
        return {
            "size": None if head is None else head.size,
            "signed_at": None if head is None else head.time,
            "file": self._file,
            "witness_failures": self.witness.failures,
        }

    def committed(self) -> None:
        if self.active:
            self._wake.set()

    async def _run(self) -> None:
        interval = self.settings.head_interval_ms / 1000
        loop = asyncio.get_running_loop()
        signed_at = loop.time()
        while True:
            await self._wake.wait()
            wait = signed_at + interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)  # commits meanwhile join this head
            self._wake.clear()
            await self.sign_or_log()
            signed_at = loop.time()

    async def sign_or_log(self) -> None:
        """:meth:`sign`, a failure logged rather than raised (a full disk, say): the next commit
        or verify tries again, and the heads signed before still stand."""
        try:
            await self.sign()
        except Exception:
            log.exception("heads: signing failed")

    async def sign(self) -> SignedHead | None:
        """Sign the tree as it is now, unless the last head covers it already; the last head."""
        if not self.active or self.key is None:
            return self.last
        async with self._lock:
            frontier = await self.core.store.tree()
            if frontier is None or frontier.size == 0 or (self.last is not None and self.last.size >= frontier.size):
                return self.last
            head = self._signed(frontier, self.key)
            append_head(self.core.paths.heads_file, head, sync=self.core.settings.store.durability == "full")
            self.last = head
            self.witness.send(head)
            return head

    def _signed(self, frontier: Frontier, key: HeadKey) -> SignedHead:
        root = frontier.root().hex()
        time = format_ts(int(self.core.clock() * 1_000_000))
        signature = key.sign(signed_bytes(frontier.size, root, time))
        return SignedHead(frontier.size, root, time, key.public.hex(), signature.hex())

    async def covering(self, size: int) -> SignedHead:
        """The latest signed head, signed now when the log grew since; it covers ``size`` events."""
        if not self.active:
            raise UsageError(
                "this daemon signs no tree heads",
                "set store.signed_heads = true (it is off, or the log is in memory or shared)",
            )
        head = await self.sign()
        if head is None or head.size < size:
            raise NotFound(f"no signed head covers {size} events yet", "retry once the event is committed")
        return head

    async def stop(self, deadline: float) -> None:
        """Sign what the last commits added, then let the witness take it within ``deadline``."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.active:
            try:
                await self.sign()
            except Exception:
                log.exception("heads: the last head could not be signed")
        await self.witness.stop(deadline)
