"""The ``search``, ``recall`` and ``search.rebuild`` operations (docs/search.md, docs/recall.md).

``search`` answers a query over the log, by its words and its meaning (daemon/search/hybrid.py).
``recall`` is what an agent asks when it wants its memory of something: the session's latest
events, the best matches by the same ranking (in its own session first, then in every other), and
the summaries its session was compressed into, without duplicates, each item saying why it is
there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from daemon.agents.refs import Refs
from daemon.component import Component
from daemon.contract.kinds import Kind
from daemon.core import Core
from daemon.recall.service import Embeddings
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs, Timestamp
from daemon.search.hybrid import SearchMode, ranked
from daemon.search.ranking import NOTHING, WORDS, Ranked
from store.base import EventQuery, EventStore
from store.errors import UsageError
from store.events import Event, format_ts
from store.search import MAX_LIMIT, SearchHit, SearchQuery, check_query_size, indexed_text
from store.search_syntax import literal_query

# Items a recall answers with unless asked otherwise, and at most.
RECALL_LIMIT = 10
MAX_RECALL = 100
# How far back recall looks for the session's latest events with text (usage and lifecycle
# events, which have none, can outnumber them).
RECENT_WINDOW = 200
# Characters of an event's text shown for a recent event, and of a summary.
RECENT_CHARS = 240
SUMMARY_CHARS = 1200
SUMMARY_KINDS = (Kind.COMPRESSION, Kind.COMPACTION, Kind.COMPACTION_SUMMARY)


@dataclass(frozen=True, slots=True)
class LogSearch(Component):
    """What the search ops are handed: the core, the reader of session and agent names, and the
    embedder of queries."""

    core: Core
    refs: Refs
    embeddings: Embeddings
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)  # held by the search running (hybrid.py)

    @property
    def store(self) -> EventStore:
        return self.core.store


OPS = Ops(LogSearch)


def hit_json(hit: SearchHit, matched: str | None = WORDS, similarity: float | None = None) -> dict[str, Any]:
    return {
        "seq": hit.seq,
        "id": hit.id,
        "session": hit.session,
        "agent": hit.agent,
        "kind": hit.kind,
        "ts": format_ts(hit.ts),
        "digest": hit.digest,
        "score": round(hit.score, 6),
        "snippet": hit.snippet,
        "matched": matched,
        "similarity": None if similarity is None else round(similarity, 6),
    }


def ranked_json(ranked: Ranked) -> dict[str, Any]:
    return hit_json(replace(ranked.hit, score=ranked.score), ranked.matched, ranked.similarity)


@dataclass(frozen=True, slots=True)
class Search:
    query: str
    session: str | None = None  # a session (or prefix); SESSION/NAME narrows to one of its agents
    agent: str | None = None  # an agent's name, in every session
    kinds: list[str] | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    limit: int = 20
    fts: bool = False  # the query is in FTS5 syntax and only its words are looked for
    semantic: bool = False  # only the query's meaning is looked for


@OPS.op("search", Search)
async def search(searcher: LogSearch, request: Search, call: Call) -> dict[str, Any]:
    if request.fts and request.semantic:
        raise UsageError(
            "fts and semantic exclude each other", "give one: --fts for words only, --semantic for meaning only"
        )
    mode = SearchMode.FTS if request.fts else SearchMode.SEMANTIC if request.semantic else SearchMode.HYBRID
    session, agent = (None, None) if request.session is None else await searcher.refs.session_and_agent(request.session)
    check_query_size(request.query)
    query = SearchQuery(
        text=request.query if request.fts else literal_query(request.query),
        session=session,
        agent=request.agent or (None if agent is None else agent.name),
        kinds=tuple(request.kinds or ()),
        since=request.since,
        until=request.until,
        limit=request.limit,
    )
    hits = await ranked(searcher.store, searcher.embeddings, query, request.query, mode, searcher.turn)
    return {"hits": [ranked_json(hit) for hit in hits]}


@OPS.op("search.rebuild", NoArgs)
async def search_rebuild(searcher: LogSearch, request: NoArgs, call: Call) -> dict[str, Any]:
    return {"events": await searcher.store.rebuild_search_index()}


def _head(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _event_item(why: str, event: Event, text: str, width: int, hit: Ranked | None) -> dict[str, Any]:
    """A recent event or a summary; with the score and snippet of its match when it matched."""
    if hit is not None:
        return {"why": why, **ranked_json(hit)}
    unscored = SearchHit(event.seq, event.id, event.session, event.agent, event.kind, event.ts, event.digest, 0, "")
    return {"why": why, **hit_json(unscored, matched=NOTHING), "score": None, "snippet": _head(text, width)}


async def _with_text(
    store: EventStore, query: EventQuery, wanted: int, leave_out: tuple[str, ...] = ()
) -> list[tuple[Event, str]]:
    """Up to ``wanted`` of the query's events that have text, with it."""
    found = []
    for event in await store.query(query):
        if event.kind in leave_out:
            continue
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            found.append((event, text))
            if len(found) == wanted:
                break
    return found


@dataclass(frozen=True, slots=True)
class Recall:
    query: str
    session: str
    limit: int = RECALL_LIMIT


@OPS.op("recall", Recall)
async def recall(searcher: LogSearch, request: Recall, call: Call) -> dict[str, Any]:
    """Recent events, matches and summaries for ``query`` in ``session``, at most ``limit``.

    A quarter of the places (at least one) is kept for recent events and a fifth (at least one)
    for summaries; matches take the rest, and whatever those leave unused. Items are unique by
    event id, then by payload digest (the same tool output recorded twice is shown once).
    """
    text, limit = request.query, request.limit
    store = searcher.store
    session = await searcher.refs.session(request.session)
    if not 1 <= limit <= MAX_RECALL:
        raise UsageError(f"argument 'limit' must be between 1 and {MAX_RECALL}, got {limit}")
    recent_quota, summary_quota = max(1, limit // 4), max(1, limit // 5)

    want = min(MAX_LIMIT, limit)
    words = literal_query(text)  # the words of the topic, as written
    embeddings, hybrid = searcher.embeddings, SearchMode.HYBRID
    in_session = await ranked(
        store, embeddings, SearchQuery(words, session=session, limit=want), text, hybrid, searcher.turn
    )
    everywhere = await ranked(store, embeddings, SearchQuery(words, limit=MAX_LIMIT), text, hybrid, searcher.turn)
    elsewhere = [hit for hit in everywhere if hit.hit.session != session]
    matched = {hit.hit.id: hit for hit in in_session}
    latest = EventQuery(session=session, order="desc", limit=RECENT_WINDOW)
    recent = await _with_text(store, latest, recent_quota, leave_out=SUMMARY_KINDS)
    summaries = await _with_text(
        store, EventQuery(session=session, kinds=SUMMARY_KINDS, order="desc", limit=RECENT_WINDOW), summary_quota
    )

    items: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    seen_digests: set[str] = set()

    def add(item: dict[str, Any]) -> bool:
        if item["id"] in seen_ids or item["digest"] in seen_digests:
            return False
        seen_ids.add(item["id"])
        seen_digests.add(item["digest"])
        items.append(item)
        return True

    for event, event_text in recent:
        add(_event_item("recent", event, event_text, RECENT_CHARS, matched.get(event.id)))
    for event, event_text in summaries:
        add(_event_item("summary", event, event_text, SUMMARY_CHARS, matched.get(event.id)))
    room = limit - len(items)
    for hit in [*in_session, *elsewhere]:
        if room <= 0:
            break
        if add({"why": "match", **ranked_json(hit)}):
            room -= 1
    return {"query": text, "session": session, "items": items}
