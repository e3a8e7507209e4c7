"""One search as the ops run it: by words (``fts``), by meaning (``semantic``) or both fused
(``hybrid``, the default), narrowed by session, agent, kinds and time alike (docs/recall.md).

Hybrid search asks each side for more than it returns (:data:`CANDIDATES` times the limit), so
that a hit ranked low by one side and high by the other can still reach the fused list. When
semantic recall is off or cannot run, a hybrid search is a search by words, its hits saying so;
only ``semantic`` refuses, naming why. A query that names a text as written (a path, a file, a
flag: :func:`~daemon.search.ranking.as_written`) is answered by its word matches when it has any.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from enum import StrEnum

from daemon.recall.service import Embeddings
from daemon.search.ranking import Ranked, as_written, by_meaning, by_words, fuse
from store.base import EventStore
from store.errors import UsageError
from store.search import MAX_LIMIT, SearchHit, SearchQuery

# How many hits each side is asked for, per hit returned.
CANDIDATES = 3


class SearchMode(StrEnum):
    HYBRID = "hybrid"  # words and meaning, fused
    FTS = "fts"  # the words only, in FTS5 syntax
    SEMANTIC = "semantic"  # the meaning only


async def ranked(
    store: EventStore,
    embeddings: Embeddings,
    query: SearchQuery,
    meaning_of: str,
    mode: SearchMode,
    turn: asyncio.Lock,
) -> list[Ranked]:
    """The hits of ``query`` (its ``text`` in FTS5 syntax) ranked as ``mode`` says; ``meaning_of``
    is the text whose meaning is looked for (the query as the person wrote it). ``turn`` is held
    for the whole search: searches run one after the other, each of its steps together (the words'
    and the meaning's), so that a search is not held up by the steps of those sent after it."""
    async with turn:
        return await _ranked(store, embeddings, query, meaning_of, mode)


async def _ranked(
    store: EventStore, embeddings: Embeddings, query: SearchQuery, meaning_of: str, mode: SearchMode
) -> list[Ranked]:
    if mode == SearchMode.FTS:
        return by_words(await _words(store, query, fts=True))
    wider = replace(query, limit=min(MAX_LIMIT, query.limit * CANDIDATES))
    if mode == SearchMode.SEMANTIC:  # the kinds weighed among more than are returned
        vector = await embeddings.embed_query(meaning_of)
        return by_meaning(await store.vectors().nearest(vector, wider.checked()), query.limit)
    words = await _words(store, wider, fts=False)
    if not embeddings.on or (words and as_written(meaning_of)):
        return by_words(words[: query.limit])
    vector = await embeddings.embed_query(meaning_of)
    return fuse(words, await store.vectors().nearest(vector, wider.checked()), query.limit)


async def _words(store: EventStore, query: SearchQuery, fts: bool) -> list[SearchHit]:
    """The full-text hits; a query in FTS5 syntax that does not parse says how to search for it
    as written instead."""
    try:
        return await store.search(query)
    except UsageError as exc:
        if not fts:
            raise
        hint = f"{exc.hint}; or search without FTS syntax (leave out --fts) to find the text as written"
        raise UsageError(exc.message, hint) from None
