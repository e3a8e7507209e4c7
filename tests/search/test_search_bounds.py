"""A search's query is bounded (docs/search.md, "Bounds"): its length and its words are refused
beyond their limits, and a query at the limit, of one word repeated, is read as that word once, on
every backend. How long such a search takes is measured by benchmarks/bench_search.py."""

from __future__ import annotations

import pytest

from store.base import EventStore
from store.errors import UsageError
from store.events import NewEvent
from store.search import MARK_END, MARK_START, MAX_QUERY_CHARS, MAX_QUERY_WORDS, SearchQuery
from store.search_syntax import literal_query

T0 = 1_767_225_600_000_000


async def repeated_word_events(store: EventStore) -> None:
    """Events whose text is one word over and over, and one that holds it once among others."""
    await store.append(
        [NewEvent(session="r", kind="tool.result", payload={"output": "word " * 2000}, ts=T0 + i) for i in range(5)]
        + [NewEvent(session="r", kind="message", payload={"text": "one word among others"}, ts=T0 + 9)]
    )


async def test_a_mebibyte_of_repeated_words_is_refused_with_the_bound(store: EventStore) -> None:
    await repeated_word_events(store)
    query = "word " * (1024 * 1024 // 5)
    with pytest.raises(UsageError) as refused:
        literal_query(query)
    assert f"at most {MAX_QUERY_CHARS:,} are read" in refused.value.message
    assert refused.value.hint and "few distinctive words" in refused.value.hint
    with pytest.raises(UsageError, match="characters long"):
        await store.search(SearchQuery(query))  # in FTS5 syntax too


@pytest.mark.parametrize("fts", [False, True])
async def test_a_query_of_more_words_than_the_bound_is_refused(store: EventStore, fts: bool) -> None:
    await repeated_word_events(store)
    query = " ".join(["word"] * (MAX_QUERY_WORDS + 1))
    with pytest.raises(UsageError) as refused:
        await store.search(SearchQuery(query if fts else literal_query(query)))
    too_many = f"the search query has {MAX_QUERY_WORDS + 1} words; at most {MAX_QUERY_WORDS} are read"
    assert refused.value.message == too_many
    with pytest.raises(UsageError, match="words; at most"):  # the words of a path count one by one
        literal_query("/".join(["src"] * (MAX_QUERY_WORDS + 1)))


@pytest.mark.parametrize(
    "query",
    [
        literal_query(" ".join(["word"] * MAX_QUERY_WORDS)),
        " ".join(["word"] * MAX_QUERY_WORDS),
        " OR ".join(["word"] * MAX_QUERY_WORDS),
        "NEAR(" + " ".join(["word"] * MAX_QUERY_WORDS) + ", 3)",
    ],
)
async def test_a_query_at_the_bound_of_one_repeated_word_finds_what_the_word_finds(
    store: EventStore, query: str
) -> None:
    await repeated_word_events(store)
    once = await store.search(SearchQuery("word"))
    hits = await store.search(SearchQuery(query))
    assert [hit.seq for hit in hits] == [hit.seq for hit in once]
    assert sorted(hit.seq for hit in hits) == [1, 2, 3, 4, 5, 6]
    [among] = [hit for hit in hits if hit.seq == 6]
    assert among.snippet == f"one {MARK_START}word{MARK_END} among others"
    assert all(hit.snippet.startswith(f"{MARK_START}word word") for hit in hits if hit.seq != 6)


async def test_a_star_alone_is_a_usage_error_saying_what_a_star_does(store: EventStore) -> None:
    with pytest.raises(UsageError) as refused:
        await store.search(SearchQuery("*"))
    assert refused.value.message == (
        "cannot read the search query '*': a * must follow a word: it makes the word a prefix (`migrat*`)"
    )
