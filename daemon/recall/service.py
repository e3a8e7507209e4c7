"""The embedder: follows the log by its cursor and embeds, in batches, the events worth recalling,
off the write path (an append never waits for it), and embeds the queries of search and recall.

The server hands it each commit (:meth:`Embeddings.committed`), which only wakes its task. The task
loads the model on a thread at start (a fraction of a second), then, once the log has been quiet
for a moment (:data:`QUIET_S`; at most :data:`MAX_WAIT_S` under appends that never pause), reads
the events of the embedded kinds past its cursor, a page at a time, embeds their text on a thread
in batches of ``recall.embedding_batch``, and stores the page's vectors with the cursor's new place
in one transaction (store/vectors.py): a restart resumes after the last page stored. The cursor names the model; a
different ``recall.embedding_model`` empties the vectors and embeds the log again, as ``toka admin rebuild``
does.

On a log several daemons share (PostgreSQL) each daemon embeds what it reads; a vector stored twice
is stored once, and the cursor is the one every daemon reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from daemon.component import Component
from daemon.core import Core
from daemon.recall.model import Embedder, load_embedder
from daemon.recall.settings import RecallSettings
from daemon.tasks import finish_or_cancel
from store.base import EventQuery
from store.errors import StoreUnavailable, TokaError, UsageError
from store.events import Event
from store.kinds import kind_taken
from store.vectors import VectorIndex, VectorState, embedded_text

log = logging.getLogger("toka.daemon")

# Events read from the log per page (their payloads with them).
PAGE = 512
# Seconds before trying again after the store could not be reached.
RETRY_S = 2.0
# The embedder waits for the log to be quiet (no commit for QUIET_S) before it reads and embeds a
# page, and waits at most MAX_WAIT_S: a burst of appends (an import, a busy agent) is not slowed by
# the embedder's reads, CPU and writes, which come in the pauses between bursts, or a page every
# MAX_WAIT_S under a load that never pauses (benchmarks/bench_embeddings.py: embedding on each
# commit made a burst of appends take twice as long on two cores).
QUIET_S = 0.25
MAX_WAIT_S = 5.0
# How much lower than the daemon's other threads the thread that embeds the log runs (a nice
# value, as `nice` gives by default): it embeds while a core is free, and the commits, queries and
# the user's own work of a busy machine go first. A query is embedded on a thread of normal
# priority, and does not wait for the batch (daemon/recall/model.py).
BACKGROUND_NICE = 10


def lower_priority() -> None:
    """Run the calling thread BACKGROUND_NICE lower. Linux gives each thread a nice value of its
    own; elsewhere a thread's id is no process's, and the thread keeps its priority."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            thread = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICE)


class Embeddings(Component):
    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings[RecallSettings]
        self.index: VectorIndex | None = None
        self.embedder: Embedder | None = None
        self.problem: TokaError | None = None  # why semantic recall is off, when it is on but cannot run
        self.problem_in: str | None = None  # "model" (it does not load) or "index" (the backend keeps no vectors)
        self.embedded = 0  # vectors stored since start
        self._wake = asyncio.Event()  # events of the embedded kinds committed
        self._last_commit = 0.0  # the event loop's time of the last commit of anything
        self._loaded = asyncio.Event()
        # Held while a page is read, embedded and stored, and while a rebuild empties the index, so
        # that neither sees half of the other; the generation counts the rebuilds.
        self._paging = asyncio.Lock()
        self._generation = 0
        self._task: asyncio.Task[None] | None = None
        self._background: ThreadPoolExecutor | None = None  # the low-priority thread that embeds the log

    @property
    def on(self) -> bool:
        """Whether queries are embedded: semantic recall is on and its model and index are ready."""
        return self.embedder is not None and self.index is not None and self.problem is None

    async def start(self) -> None:
        if not self.settings.semantic:
            return
        try:
            self.index = self.core.store.vectors()
        except TokaError as exc:
            self.problem, self.problem_in = exc, "index"
            self._loaded.set()
            return
        self._task = asyncio.create_task(self._follow(), name="embeddings")

    def committed(self, events: list[Event], own: bool) -> None:
        # A time, not an event to wake on: every append passes here, and waking the embedder's
        # wait (a timer cancelled and made again) cost each append more than this.
        self._last_commit = asyncio.get_running_loop().time()
        if self._task is not None and any(kind_taken(event.kind, self.settings.embedded_kinds) for event in events):
            self._wake.set()

    async def stop(self, deadline: float) -> None:
        if self._task is not None:
            self._task.cancel()
            await finish_or_cancel([self._task], deadline)
        if self._background is not None:  # a batch under way ends on its own; the process waits for it
            self._background.shutdown(wait=False, cancel_futures=True)

    async def _follow(self) -> None:
        index = self.index
        assert index is not None  # started only with one
        try:
            self.problem_in = "model"
            self.embedder = await asyncio.to_thread(
                load_embedder, self.settings.embedding_model, self.settings.embedding_model_dir
            )
            self.problem_in = "index"
            # The model's modules (wordllama, numpy, pydantic, tokenizers) live as long as the daemon:
            # out of the collector's sight, a full collection does not walk their objects again.
            gc.freeze()
            # Queries are embedded only once the index holds this model's vectors alone.
            if (await index.state()).model != self.embedder.name:
                await index.clear(self.embedder.name)
        except StoreUnavailable:
            pass  # the loop below waits for the store
        except TokaError as exc:  # no model, or a backend that cannot keep vectors (no pgvector)
            self.problem = exc
            log.warning("semantic recall is off: %s", exc.message)
            return
        finally:
            self._loaded.set()
            if self.problem is None:
                self.problem_in = None
        while True:
            try:
                assert self.embedder is not None
                await self._catch_up(self.embedder)
            except StoreUnavailable:
                await asyncio.sleep(RETRY_S)
                continue
            except TokaError as exc:
                log.warning("embedding stopped: %s", exc.message)
                await asyncio.sleep(RETRY_S)
                continue
            await self._wake.wait()

    async def _quiet(self) -> None:
        """Return once no commit has come for QUIET_S, or after MAX_WAIT_S."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MAX_WAIT_S
        while (until := min(self._last_commit + QUIET_S, deadline)) > (now := loop.time()):
            await asyncio.sleep(until - now)

    async def _catch_up(self, embedder: Embedder) -> None:
        """Embed everything of the embedded kinds past the cursor, a page at a time."""
        index = self.index
        assert index is not None
        generation = self._generation  # before the state: a rebuild after it is seen below
        state = await index.state()
        if state.model != embedder.name:
            await index.clear(embedder.name)
            state = VectorState(embedder.name, 0, 0)
        while True:
            await self._quiet()
            async with self._paging:
                self._wake.clear()  # a commit from here on wakes the next round
                if generation != self._generation:  # emptied by a rebuild: from the start again
                    generation, state = self._generation, await index.state()
                page = await self.core.store.query(
                    EventQuery(kinds=self.settings.embedded_kinds, after_seq=state.seq, limit=PAGE, order="asc")
                )
                if not page:
                    return
                state = await self._embed_page(embedder, index, page, state)

    async def _embed_page(
        self, embedder: Embedder, index: VectorIndex, page: list[Event], state: VectorState
    ) -> VectorState:
        """Embed and store one page; the cursor after it."""
        kinds = self.settings.embedded_kinds
        least = embedder.min_message_words
        texts = [
            (event.seq, text) for event in page if (text := embedded_text(event.kind, event.payload, kinds, least))
        ]
        batch = min(self.settings.embedding_batch, embedder.most_per_batch or self.settings.embedding_batch)
        if self._background is None:
            self._background = ThreadPoolExecutor(1, "toka-embedder", initializer=lower_priority)
        loop = asyncio.get_running_loop()
        vectors: list[bytes] = []
        for start in range(0, len(texts), batch):  # a stop or a rebuild waits for one batch at most
            chunk = [text for _, text in texts[start : start + batch]]
            vectors += await loop.run_in_executor(self._background, embedder.embed, chunk)
        state = VectorState(embedder.name, page[-1].seq, state.count + len(texts))
        await index.add([(seq, vector) for (seq, _), vector in zip(texts, vectors, strict=True)], state)
        self.embedded += len(texts)
        return state

    async def embed_query(self, text: str) -> bytes:
        """The query's vector; UsageError saying why when semantic recall is off."""
        if not self.settings.semantic:
            raise UsageError(
                "semantic recall is off (recall.semantic = false)",
                "toka config set recall.semantic true, or search by words (leave out --semantic)",
            )
        await self._loaded.wait()
        if self.problem is not None:
            raise UsageError(f"semantic recall cannot run: {self.problem.message}", self.problem.hint)
        assert self.embedder is not None
        return (await asyncio.to_thread(self.embedder.embed, [text]))[0]

    async def embed_texts(self, texts: list[str]) -> list[bytes]:
        """Texts' vectors, for a ranking of a few texts that are not in the index (the notes given
        at session start); UsageError when semantic recall is off, as :meth:`embed_query`."""
        await self.embed_query("")  # the same checks, and the model loaded
        assert self.embedder is not None
        return await asyncio.to_thread(self.embedder.embed, texts)

    async def rebuild(self) -> int:
        """Drop the vectors and embed the log again (in the background); the events to embed."""
        if self._task is not None:
            await self._loaded.wait()  # until the model and the index are known usable, or not
        if self.index is None or self.embedder is None or self.problem is not None:
            return 0
        async with self._paging:
            await self.index.clear(self.embedder.name)
            self._generation += 1
        self._wake.set()
        if self._task is not None and self._task.done():
            self._task = asyncio.create_task(self._follow(), name="embeddings")
        return await self.core.store.count(EventQuery(kinds=self.settings.embedded_kinds))

    async def status(self) -> dict[str, Any]:
        """What doctor shows: on or off, the model, how the index searches, and the lag."""
        result: dict[str, Any] = {
            "semantic": self.settings.semantic,
            "model": self.settings.embedding_model,
            "method": None,
            "embedded": None,
            "through_seq": None,
            "behind": None,
            "problem": None if self.problem is None else self.problem.message,
            "problem_in": self.problem_in if self.problem is not None else None,
            "hint": None if self.problem is None else self.problem.hint,
        }
        if self.index is None or not self.settings.semantic or self.problem is not None:
            return result
        result["method"] = self.index.method
        if self.embedder is None or not self._loaded.is_set():
            return result  # the model is loading: how far the vectors reach is not known yet
        with contextlib.suppress(TokaError):
            state = await self.index.state()
            result["embedded"] = state.count
            result["through_seq"] = state.seq
            kinds = self.settings.embedded_kinds
            result["behind"] = await self.core.store.count(EventQuery(kinds=kinds, after_seq=state.seq))
        return result
