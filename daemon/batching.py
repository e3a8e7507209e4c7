"""How many events go together: into one request (imports, `toka watch`, `toka record`), one read
of a growing file, one transaction of the hook spool's ingestion.

Batches are bounded by count and by size in bytes, never by count alone: a thousand tool results
of 20 KB each are 20 MB, five times what one request line may hold. Shared by the client side
(daemon/client/appends.py) and the daemon's own ingestion (daemon/ingest/tail.py,
daemon/ingest/spool.py), so both cut the same way.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")

# Events per batch: enough to amortise a round trip and a commit, few enough that one
# transaction holds the write lock briefly.
MAX_BATCH_EVENTS = 1000
# Bytes per batch where no request line bounds it (the daemon's own reads and ingestion): what
# a batch holds in memory, and one transaction writes.
MAX_BATCH_BYTES = 4 * 1024 * 1024


class Batcher(Generic[T]):
    """Items gathered into batches of at most ``max_items`` items and ``max_bytes`` bytes; an
    item larger than ``max_bytes`` on its own is a batch of its own."""

    def __init__(self, max_bytes: int, max_items: int = MAX_BATCH_EVENTS) -> None:
        self.max_bytes = max_bytes
        self.max_items = max_items
        self._items: list[T] = []
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: T, size: int) -> list[T] | None:
        """Add ``item`` of ``size`` bytes; the batch it closed, if it did not fit in the open one."""
        full = None
        if self._items and (len(self._items) >= self.max_items or self._bytes + size > self.max_bytes):
            full = self.take()
        self._items.append(item)
        self._bytes += size
        return full

    def take(self) -> list[T]:
        """The open batch (perhaps empty), which is then closed."""
        items, self._items, self._bytes = self._items, [], 0
        return items
