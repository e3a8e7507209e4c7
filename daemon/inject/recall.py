"""The project recall given at the start of a session that continues nothing (``inject.recall``):
the notes of its folder's earlier sessions, ranked by the search's ranking (daemon/search/ranking.py)
against the work at hand, which at a session's start is the latest request a person typed in the
folder's last session. Without semantic recall, or before any request, the latest notes come first,
as they always did.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.contract.kinds import NOTE_PREFIX
from daemon.core import Core
from daemon.recall.service import Embeddings
from daemon.search.ranking import by_meaning
from daemon.transcript.text import is_request
from store.base import EventQuery
from store.errors import UsageError
from store.events import Event
from store.vectors import VectorHit, unpack_dot

# Notes read per session, and in all, before they are ranked: the latest of a folder's history.
CANDIDATES_PER_SESSION = 40
CANDIDATES = 120
# How far back the folder's last session is read for the latest request.
REQUEST_WINDOW = 400


async def folder_notes(core: Core, sessions: Sequence[str]) -> list[Event]:
    """The latest notes with text of ``sessions`` (latest session first), newest first in each."""
    notes: list[Event] = []
    for session in sessions:
        query = EventQuery(session=session, kinds=(NOTE_PREFIX + "*",), order="desc", limit=CANDIDATES_PER_SESSION)
        async for note in core.store.scan(query):
            text = note.payload.get("text")
            if isinstance(text, str) and text.strip():
                notes.append(note)
        if len(notes) >= CANDIDATES:
            break
    return notes[:CANDIDATES]


async def latest_request(core: Core, session: str) -> str | None:
    query = EventQuery(session=session, kinds=("message",), order="desc", limit=REQUEST_WINDOW)
    async for event in core.store.scan(query):
        if is_request(event):
            return str(event.payload["text"])
    return None


async def ranked_notes(core: Core, embeddings: Embeddings, sessions: Sequence[str], limit: int) -> list[Event]:
    """Up to ``limit`` notes of ``sessions`` (latest session first): the nearest the latest request
    of the first session when semantic recall runs, else the latest."""
    notes = await folder_notes(core, sessions)
    request = await latest_request(core, sessions[0]) if sessions and embeddings.on else None
    if request is None or len(notes) <= 1:
        return notes[:limit]
    try:
        wanted, *vectors = await embeddings.embed_texts([request, *(str(note.payload["text"]) for note in notes)])
    except UsageError:
        return notes[:limit]
    hits = [
        VectorHit(n.seq, n.id, n.session, n.agent, n.kind, n.ts, n.digest, unpack_dot(wanted, vector), "")
        for n, vector in zip(notes, vectors, strict=True)
    ]
    by_seq = {note.seq: note for note in notes}
    return [by_seq[ranked.hit.seq] for ranked in by_meaning(hits, limit)]
