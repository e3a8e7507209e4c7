"""The daemon's signed tree heads: after commits, the log's Merkle root signed and kept.

A commit wakes the signer; it signs the tree as it stands once ``head_interval_ms`` has passed
since the head before (so a burst of commits costs one signature, and no commit waits for one),
appends the head to ``heads.jsonl`` beside the database, and hands it to the witness. A proof
that needs a head covering a newer event signs one at once, and so does a clean stop, so that a
log left by a stopped daemon is covered to its last event.

On a log other daemons append to (PostgreSQL) each daemon signs, with its own key and into its
own heads file, the tree of the log as it has read it (store/postgres/tree.py): see
docs/tamper-evidence.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from daemon.component import Component
from daemon.config import StoreSettings
from daemon.core import Core
from daemon.heads.history import History, Reset, read_history, write_history
from daemon.heads.keys import HeadKey, load_key, signature_holds
from daemon.heads.record import SignedHead, append_head, end_line, last_good_head, signed_bytes
from daemon.heads.witness import Witness
from store.errors import IntegrityError, NotFound, StoreError, UsageError
from store.events import Event, format_ts
from store.merkle import Frontier, span_hash, span_nodes

log = logging.getLogger("toka.daemon")

RESET_HINT = (
    "`toka verify` says what changed; once you know why, `toka heads --reset --yes` moves the heads"
    " file aside and signs the log as it is"
)


def holds(head: SignedHead, public: bytes) -> bool:
    """Whether ``head`` is signed by the key whose public half is ``public``."""
    return head.key == public.hex() and signature_holds(public, bytes.fromhex(head.signature), head.message)


class Heads(Component):
    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings[StoreSettings]
        self.witness = Witness(self.settings)
        self._file = str(core.paths.heads_file)  # status shows it on every call
        self.key: HeadKey | None = None
        self.last: SignedHead | None = None  # the last head signed by this key, in the heads file
        self.untrusted = 0  # lines after it that are not heads signed by this key
        self.history: History | None = None
        self.refused: str | None = None  # why the log as it is may not be signed
        self.active = False
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Load (or make) the key, find the last head it signed, and sign the log as it is, when it
        is kept, grew unsigned, and still extends what the key signed before."""
        store = self.core.store
        if not self.settings.signed_heads or await store.tree() is None:
            return
        paths = self.core.paths
        made = not paths.heads_key.exists()
        self.key = load_key(paths.heads_key)
        assert self.key is not None
        public = self.key.public
        await asyncio.to_thread(end_line, paths.heads_file)
        self.last, self.untrusted = await asyncio.to_thread(
            last_good_head, paths.heads_file, lambda head: holds(head, public)
        )
        if self.untrusted:
            log.warning(
                "heads: %d lines at the end of %s are not heads signed by this key; `toka verify` names them",
                self.untrusted,
                paths.heads_file,
            )
        try:
            self.history = await asyncio.to_thread(read_history, paths.heads_signed)
            self.refused = await self._refusal(made)
        except StoreError as exc:  # torn or edited: not a fresh start either
            self.refused = exc.message
        if self.refused is not None:
            log.error("heads: signing refused: %s", self.refused)
        elif self.history is None or self.history.key != public.hex():  # a first start, or a toka from before the file
            self.history = History(public.hex(), *self._reach())
            await asyncio.to_thread(write_history, paths.heads_signed, self.history, self._sync)
        self.active = True
        await self.sign()
        self._task = asyncio.create_task(self._run(), name="heads")

    def _reach(self) -> tuple[int, str]:
        return (0, "") if self.last is None else (self.last.size, self.last.root)

    async def _refusal(self, made: bool) -> str | None:
        """Why the log may not be signed as it is, or None: the heads this key signed must still
        be there, and the tree stored with the log must still hash to the last of them."""
        assert self.key is not None
        if self.core.store.shared:  # other daemons append too: a new one joins with no heads of its own
            return None
        frontier = await self.core.store.tree()
        size = 0 if frontier is None else frontier.size
        history = self.history if self.history is not None and self.history.key == self.key.public.hex() else None
        reach = self.last.size if self.last is not None else 0
        if history is not None and history.size > reach:
            return (
                f"the last head heads.key signed covered {history.size} events ({self.core.paths.heads_signed}),"
                f" but the heads it signed in {self._file} end at {reach}: heads were deleted or cut"
            )
        if history is None and self.last is None and size > 0:
            if made:
                return f"heads.key was made now, but the log already holds {size} events that no head covers"
            return (
                f"heads.key signed no head that {self._file} holds, yet the log holds {size} events:"
                " heads were deleted (or the heads file was replaced)"
            )
        if self.last is None:
            return None
        if size < self.last.size:
            return f"the log ends at seq {size}, before the {self.last.size} events {self.last.name} covers"
        try:
            stored = await self.core.store.tree_nodes(span_nodes(0, self.last.size))
            root = span_hash(0, self.last.size, stored.__getitem__).hex()
        except LookupError:
            root = ""
        if root != self.last.root:
            return f"the tree stored with the log no longer hashes to {self.last.name}: the log was rewritten"
        return None

    @property
    def _sync(self) -> bool:
        return self.core.settings[StoreSettings].durability == "full"

    def status(self) -> dict[str, object] | None:
        """What `status` shows: the latest signed head, why signing is refused, the untrusted lines
        of the heads file and the witness's failures; None when no heads are signed (turned off,
        or a log in memory)."""
        if not self.active:
            return None
        head = self.last
        return {
            "size": None if head is None else head.size,
            "signed_at": None if head is None else head.time,
            "file": self._file,
            "witness_failures": self.witness.failures,
            "refused": self.refused,
            "untrusted": self.untrusted,
        }

    def committed(self, events: list[Event], own: bool) -> None:
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

    async def sign_or_log(self) -> str | None:
        """:meth:`sign`, a failure logged rather than raised (a full disk, say): the next commit
        or verify tries again, and the heads signed before still stand. Why signing is refused,
        when it is."""
        try:
            await self.sign()
        except Exception:
            log.exception("heads: signing failed")
        return self.refused

    async def sign(self) -> SignedHead | None:
        """Sign the tree as it is now, unless the last head covers it already; the last head."""
        if not self.active or self.key is None or self.refused is not None:
            return self.last
        async with self._lock:
            frontier = await self.core.store.tree()
            if frontier is None or frontier.size == 0 or (self.last is not None and self.last.size >= frontier.size):
                return self.last
            head = self._signed(frontier, self.key)
            append_head(self.core.paths.heads_file, head, sync=self._sync)
            self.history = History(head.key, head.size, head.root, self.history.resets if self.history else ())
            # A file made and renamed over the last: about a millisecond, off the event loop.
            await asyncio.to_thread(write_history, self.core.paths.heads_signed, self.history, self._sync)
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
                "set store.signed_heads = true (it is off, or the log is in memory)",
            )
        if self.refused is not None:
            raise IntegrityError(f"the daemon refuses to sign heads: {self.refused}", RESET_HINT)
        head = await self.sign()
        if head is None or head.size < size:
            raise NotFound(f"no signed head covers {size} events yet", "retry once the event is committed")
        return head

    async def reset(self) -> dict[str, object]:
        """Start the key's signed history afresh, as a person asked knowing why: the heads file
        moved aside (kept, named by the time), the reset recorded in heads.signed, and the log
        signed as it is now. The heads the witness holds are left as they are."""
        if not self.active or self.key is None:
            raise UsageError("this daemon signs no tree heads", "there is nothing to reset")
        paths, public = self.core.paths, self.key.public.hex()
        async with self._lock:
            now = format_ts(int(self.core.clock() * 1_000_000))
            kept: str | None = None
            if paths.heads_file.exists():
                target = paths.heads_file.with_name(f"heads.{now.replace(':', '')}.jsonl")
                await asyncio.to_thread(os.replace, paths.heads_file, target)
                kept = str(target)
            own = self.history if self.history is not None and self.history.key == public else None
            before = own.size if own is not None else self._reach()[0]
            reset = Reset(now, self.refused, before, kept)
            self.history = History(public, 0, "", (*(own.resets if own else ()), reset))
            await asyncio.to_thread(write_history, paths.heads_signed, self.history, self._sync)
            self.last, self.untrusted, self.refused = None, 0, None
        log.warning(
            "heads: the signed history was reset on request (it reached %d events; heads file kept as %s)", before, kept
        )
        head = await self.sign()
        return {**reset.to_json(), "head": None if head is None else head.to_json()}

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
