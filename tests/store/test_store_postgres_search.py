"""Search on PostgreSQL finds what SQLite's FTS5 finds: the same events appended to both (and to the
memory backend) give the same hits for every query, texts past a tsvector's limits included. The order
of the hits may differ (ts_rank is not BM25); the sets may not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.errors import UsageError
from store.events import NewEvent
from store.postgres.search import MAX_POSITION, MAX_POSITIONS, MAX_WORD_BYTES
from store.postgres.store import PostgresStore
from store.search import MAX_INDEXED_CHARS, SearchQuery
from store.search_syntax import literal_query
from store.sqlite.store import SqliteStore

T0 = 1_780_000_000_000_000
LONG_WORD = "a" * (MAX_WORD_BYTES + 53)
# The last two words of the text stand past the last position a tsvector keeps.
PAST_LAST_POSITION = "1 " * (MAX_POSITION - 1) + "z q"
TEXTS = {
    "timeout": "the login-timeout was raised to 30s (see config.yaml)",
    "pytest": "test_login failed: AssertionError in tests/test_auth.py::test_login",
    "german": "Größe und Straße, naïve",
    "russian": "Привет мир, ошибка соединения",
    "japanese": "日本語のテキスト 東京",
    "paths": "e-mail: dev@example.com, path /usr/local/bin/toka",
    "migrations": "migration migrated migrating",
    "quotes": "a \"quoted phrase\" inside, and O'Brien's dog",
    "underscores": "foo_bar_baz qux __init__",
    "repeated": "alpha beta " * (MAX_POSITIONS + 100) + "alpha omega end",
    "long": PAST_LAST_POSITION,
    "long word": LONG_WORD + " tail",
}
EXPECTED = {
    "login": {"timeout", "pytest"},
    "login timeout": {"timeout"},
    "login AND timeout": {"timeout"},
    "login OR größe": {"timeout", "pytest", "german"},
    "login NOT timeout": {"pytest"},
    '"login timeout"': {"timeout"},
    '"timeout login"': set(),
    "migrat*": {"migrations"},
    '"login time"*': {"timeout"},
    "(login OR assertionerror) AND auth": {"pytest"},
    "test_login": {"pytest"},
    "foo_bar": {"underscores"},
    "init": {"underscores"},
    "nothingmatcheshere": set(),
    "login nothingmatcheshere": set(),
    "привет": {"russian"},
    "東京": {"japanese"},
    "größe": {"german"},
    "naïve": {"german"},
    "usr local": {"paths"},
    "dev*": {"paths"},
    '"o brien"': {"quotes"},
    '"quoted phrase"': {"quotes"},
    '"--"': set(),
    'login NOT "--"': {"timeout", "pytest"},
    # A word at more positions than a tsvector keeps: the phrase after them is still found.
    '"alpha omega"': {"repeated"},
    '"beta alpha omega"': {"repeated"},
    'alpha NOT "alpha omega"': set(),
    'beta NOT (end NOT "alpha omega")': {"repeated"},
    # Words past the last position a tsvector keeps.
    '"z q"': {"long"},
    '"1 z"': {"long"},
    'z NOT "z q"': set(),
    # A word too long for a tsvector.
    LONG_WORD: {"long word"},
    f'"{LONG_WORD} tail"': {"long word"},
    f"tail NOT {LONG_WORD}": set(),
    "tai*": {"long word"},
}


@pytest.fixture
def stores(postgres_database: str, tmp_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[dict[str, EventStore]]:
    """An empty store of each backend: SQLite, PostgreSQL and memory."""
    opened: dict[str, EventStore] = {
        "sqlite": loop.run_until_complete(SqliteStore.open(tmp_path / "toka.db")),
        "postgres": loop.run_until_complete(PostgresStore.open(postgres_database)),
        "memory": EphemeralStore(),
    }
    yield opened
    for store in opened.values():
        loop.run_until_complete(store.close())


async def _append_everywhere(stores: dict[str, EventStore], batch: list[NewEvent]) -> list[int]:
    """``batch`` appended to every store, which all make the same events of it; their seqs."""
    appended = {name: [r.event for r in await store.append(batch)] for name, store in stores.items()}
    assert appended["postgres"] == appended["sqlite"] == appended["memory"]  # ids and all
    return [event.seq for event in appended["sqlite"]]


async def _found(store: EventStore, text: str, labels: dict[int, str], limit: int = 200) -> set[str]:
    return {labels.get(hit.seq, str(hit.seq)) for hit in await store.search(SearchQuery(text, limit=limit))}


async def test_postgres_finds_what_sqlite_and_memory_find(stores: dict[str, EventStore]) -> None:
    assert len(PAST_LAST_POSITION) < MAX_INDEXED_CHARS  # indexed whole: its last words are searchable
    batch = [NewEvent("s", "message", {"text": text}, "main", T0 + n) for n, text in enumerate(TEXTS.values())]
    labels = dict(zip(await _append_everywhere(stores, batch), TEXTS, strict=True))

    found = {query: {name: await _found(store, query, labels) for name, store in stores.items()} for query in EXPECTED}

    assert found == {query: dict.fromkeys(stores, hits) for query, hits in EXPECTED.items()}
    # An index rebuilt from the log answers the same.
    assert await stores["postgres"].rebuild_search_index() == len(TEXTS)
    postgres = stores["postgres"]
    assert {query: await _found(postgres, query, labels) for query in EXPECTED} == EXPECTED


async def test_a_limited_search_skips_texts_that_only_seemed_to_match(stores: dict[str, EventStore]) -> None:
    # Texts that hold both words of the phrase hundreds of times, never side by side, rank first
    # on their words alone; the two texts that hold the phrase come after them.
    near_misses = ["alpha " * (MAX_POSITIONS + n) + "gap " + "omega " * (MAX_POSITIONS + n) for n in range(5)]
    holders = ["just one alpha omega here " + "filler " * 50, "another alpha omega " + "filler " * 60]
    batch = [NewEvent("s", "message", {"text": text}, None, T0 + n) for n, text in enumerate(near_misses + holders)]
    holder_seqs = set((await _append_everywhere(stores, batch))[len(near_misses) :])

    for name, store in stores.items():
        hits = await store.search(SearchQuery('"alpha omega"', limit=2))
        assert ({hit.seq for hit in hits}, name) == (holder_seqs, name)
        one = await store.search(SearchQuery('"alpha omega"', limit=1))
        assert (len(one), one[0].seq in holder_seqs, name) == (1, True, name)


@pytest.mark.parametrize("text", ['"unbalanced', "login AND", "(login", "NOT login", "title:login", "login-timeout"])
async def test_a_malformed_query_is_a_usage_error_on_postgres_as_on_sqlite(
    stores: dict[str, EventStore], text: str
) -> None:
    await stores["postgres"].append([NewEvent("s", "message", {"text": "login"})])
    await stores["sqlite"].append([NewEvent("s", "message", {"text": "login"})])
    for name in ("postgres", "sqlite"):
        with pytest.raises(UsageError) as raised:
            await stores[name].search(SearchQuery(text))
        assert (repr(text) in raised.value.message, name) == (True, name)


# Searched as written (the default of `toka search`): paths, file names, hyphenated and dotted
# names, punctuation that FTS5's syntax would read as operators.
LITERAL = {
    "login-timeout": {"timeout"},
    "config.yaml": {"timeout"},
    "tests/test_auth.py::test_login": {"pytest"},
    "/usr/local/bin/toka": {"paths"},
    "dev@example.com": {"paths"},
    "O'Brien's": {"quotes"},
    '"quoted phrase"': {"quotes"},
    "login OR größe": set(),  # OR is a word here
    "timeout login": {"timeout"},  # every term, anywhere
    "(30s)": {"timeout"},
    "__init__": {"underscores"},
}


async def test_literal_queries_find_the_same_on_every_backend(stores: dict[str, EventStore]) -> None:
    batch = [NewEvent("s", "message", {"text": text}, "main", T0 + n) for n, text in enumerate(TEXTS.values())]
    labels = dict(zip(await _append_everywhere(stores, batch), TEXTS, strict=True))
    found = {
        text: {name: await _found(store, literal_query(text), labels) for name, store in stores.items()}
        for text in LITERAL
    }
    assert found == {text: dict.fromkeys(stores, hits) for text, hits in LITERAL.items()}


@pytest.mark.parametrize("text", ["--", "*", '""', "( )"])
def test_a_literal_query_without_a_word_is_refused(text: str) -> None:
    with pytest.raises(UsageError) as raised:
        literal_query(text)
    assert raised.value.hint is not None
