"""The in-memory backend: the same semantics as SQLite, kept in lists and dicts.

For tests, benchmarks and throw-away daemons (``toka daemon run --memory``). Payloads are kept as
canonical bytes, as SQLite keeps them, so verify checks the same things here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from store.base import (
    AppendResult,
    EventQuery,
    EventStore,
    ProgressCallback,
    SessionInfo,
    Stats,
    VerifyReport,
    resolve_prefix,
)
from store.chain import ChainVerifier, StoredRow
from store.errors import NotFound
from store.events import Event, NewEvent
from store.kinds import is_activity
from store.query import matches
from store.sealer import Sealer
from store.search import SearchHit, SearchQuery, indexed_text, tokens
from store.search_match import TextMatcher


class EphemeralStore(EventStore):
    def __init__(self) -> None:
        self._events: list[Event] = []  # index i holds seq i + 1
        self._blobs: dict[str, bytes] = {}
        self._by_id: dict[str, Event] = {}
        self._by_key: dict[tuple[str, str], Event] = {}
        self._sessions: dict[str, SessionInfo] = {}
        self._texts: dict[int, tuple[str, list[str]]] = {}  # seq -> (indexed text, its tokens)
        self._cursors: dict[str, str] = {}

    @property
    def location(self) -> str:
        return ":memory:"

    async def append(self, batch: Sequence[NewEvent], *, alone: bool = False) -> list[AppendResult]:
        sealer = Sealer(
            len(self._events) + 1,
            lambda s: self._sessions[s].head if s in self._sessions else None,
            lambda s, k: self._by_key.get((s, k)),
            self._by_id.get,
        )
        results = sealer.seal_all(batch)
        for sealed in sealer.sealed:
            event = sealed.event
            self._blobs.setdefault(event.digest, sealed.payload_bytes)
            self._events.append(event)
            self._by_id[event.id] = event
            if event.key is not None:
                self._by_key[(event.session, event.key)] = event
            self._project(event)
            self._index(event)
        return results

    def _index(self, event: Event) -> None:
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            self._texts[event.seq] = (text, tokens(text))

    def _project(self, event: Event) -> None:
        info = self._sessions.get(event.session)
        if info is None:
            info = SessionInfo(event.session, 0, event.seq, event.seq, event.ts, event.ts, event.id)
        agents = dict(info.agents)
        if event.agent is not None:
            agents[event.agent] = agents.get(event.agent, 0) + 1
        kinds = dict(info.kinds)
        kinds[event.kind] = kinds.get(event.kind, 0) + 1
        self._sessions[event.session] = replace(
            info,
            events=info.events + 1,
            last_seq=event.seq,
            first_ts=min(info.first_ts, event.ts),
            last_ts=max(info.last_ts, event.ts) if is_activity(event.kind) else info.last_ts,
            head=event.id,
            agents=agents,
            kinds=kinds,
        )

    async def get(self, event_id: str) -> Event:
        if event_id in self._by_id:
            return self._by_id[event_id]
        found = [i for i in self._by_id if i.startswith(event_id.lower())] if event_id else []
        return self._by_id[resolve_prefix(event_id, found, "event")]

    async def payload(self, digest: str) -> tuple[str, dict[str, Any]]:
        found = [d for d in self._blobs if d.startswith(digest.lower())] if digest else []
        full = resolve_prefix(digest, found, "payload")
        return full, json.loads(self._blobs[full])

    async def get_by_seq(self, seq: int) -> Event:
        if 1 <= seq <= len(self._events):
            return self._events[seq - 1]
        raise NotFound(f"no event at seq {seq}", "seqs start at 1; see `toka events SESSION`")

    async def query(self, query: EventQuery) -> list[Event]:
        rows = self._events if query.order == "asc" else reversed(self._events)
        found: list[Event] = []
        for event in rows:
            if query.limit is not None and len(found) >= query.limit:
                break  # checked first, so that limit=0 gives nothing, as SQL's LIMIT 0 does
            if matches(event, query):
                found.append(event)
        return found

    async def sessions(self) -> list[SessionInfo]:
        return sorted(self._sessions.values(), key=lambda s: (s.last_ts, s.last_seq), reverse=True)

    async def session(self, name: str) -> SessionInfo:
        found = [s for s in self._sessions if s.startswith(name)]
        return self._sessions[resolve_prefix(name, found, "session")]

    async def replay(self, session: str, to_seq: int | None = None) -> AsyncIterator[Event]:
        for event in list(self._events):
            if to_seq is not None and event.seq > to_seq:
                break
            if event.session == session:
                yield event

    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport:
        verifier = ChainVerifier(lambda i: self._by_id[i].seq if i in self._by_id else None)
        total = len(self._events)
        for done, event in enumerate(self._events, 1):
            if session is None or event.session == session:
                verifier.check(_stored_row(event, self._blobs.get(event.digest)))
            if progress is not None and done % 1000 == 0:
                progress(done, total)
        heads = [(s.session, s.head) for s in self._sessions.values()]
        verifier.check_heads(h for h in heads if session is None or h[0] == session)
        if progress is not None:
            progress(total, total)
        return verifier.report(session)

    async def stats(self) -> Stats:
        payload_bytes = sum(len(self._blobs[e.digest]) for e in self._events)
        blob_bytes = sum(len(b) for b in self._blobs.values())
        return Stats(
            len(self._events),
            len(self._sessions),
            len(self._blobs),
            payload_bytes,
            blob_bytes,
            blob_bytes,
            0,
        )

    async def cursor(self, name: str) -> str | None:
        return self._cursors.get(name)

    async def save_cursor(self, name: str, value: str) -> None:
        self._cursors[name] = value

    async def rebuild_projections(self) -> int:
        self._sessions.clear()
        for event in self._events:
            self._project(event)
        return len(self._sessions)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        query = query.checked()
        matcher = TextMatcher(query.text)
        narrowing = EventQuery(session=query.session, kinds=query.kinds, since=query.since, until=query.until)
        found = []
        for seq, (text, words) in self._texts.items():
            event = self._events[seq - 1]
            wanted = (query.agent is None or event.agent == query.agent) and matches(event, narrowing)
            if wanted and matcher.matches(words):
                found.append((event, text, words))
        rarity = matcher.rarity([words for _, words in self._texts.values()])
        scored = sorted(
            ((matcher.score(words, rarity), event, text, words) for event, text, words in found),
            key=lambda item: (-item[0], item[1].seq),
        )
        return [
            SearchHit(
                event.seq,
                event.id,
                event.session,
                event.agent,
                event.kind,
                event.ts,
                event.digest,
                score,
                matcher.snippet(text),
            )
            for score, event, text, words in scored[: query.limit]
        ]

    async def rebuild_search_index(self) -> int:
        self._texts.clear()
        for event in self._events:
            self._index(event)
        return len(self._texts)

    async def close(self) -> None:
        return None


def _stored_row(event: Event, payload: bytes | None) -> StoredRow:
    return StoredRow(
        event.seq,
        event.id,
        event.session,
        event.agent,
        event.kind,
        event.ts,
        event.parents,
        event.digest,
        event.key,
        payload,
        None if payload is not None else "blob missing",
    )
