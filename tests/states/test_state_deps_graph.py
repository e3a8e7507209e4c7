"""The dependency graph without a daemon: waves, cycles, and the graph rebuilt from events."""

from __future__ import annotations

from typing import Any

import pytest

from daemon.deps.graph import ADD, REMOVE, SESSION, Graph
from store.errors import Conflict
from store.events import Event


def _graph(*edges: tuple[str, str]) -> Graph:
    graph = Graph()
    for node, needs in edges:
        assert graph.cycle_if_added(node, needs) is None
        graph.add(node, needs)
    return graph


def _event(seq: int, kind: str, node: Any, needs: Any, session: str = SESSION) -> Event:
    payload = {"node": node, "needs": needs}
    return Event(seq, f"{seq:064x}", session, None, kind, 1_700_000_000_000_000, (), "0" * 64, None, payload)


def test_waves_start_with_what_needs_nothing() -> None:
    graph = _graph(("frontend", "api"), ("api", "db"), ("api", "auth"), ("docs", "api"), ("auth", "db"))
    assert graph.waves() == [["db"], ["auth"], ["api"], ["docs", "frontend"]]


def test_independent_nodes_share_a_wave() -> None:
    graph = _graph(("b", "a"), ("c", "a"), ("e", "d"))
    assert graph.waves() == [["a", "d"], ["b", "c", "e"]]
    assert Graph().waves() == []


def test_an_edge_closing_a_cycle_is_found_with_the_cycle() -> None:
    graph = _graph(("b", "c"), ("c", "a"))
    assert graph.cycle_if_added("a", "b") == ["a", "b", "c", "a"]
    assert graph.cycle_if_added("c", "b") == ["c", "b", "c"]
    assert graph.cycle_if_added("a", "a") == ["a", "a"]
    assert graph.cycle_if_added("d", "a") is None


def test_the_cycle_named_is_a_shortest_one() -> None:
    graph = _graph(("b", "x1"), ("x1", "x2"), ("x2", "a"), ("b", "a"))
    assert graph.cycle_if_added("a", "b") == ["a", "b", "a"]


def test_removing_an_edge_can_free_a_node() -> None:
    graph = _graph(("b", "a"), ("c", "b"))
    graph.remove("c", "b")
    assert graph.edges() == [("b", "a")]
    assert graph.waves() == [["a"], ["b"]]  # c has no edges left: it is no longer a node
    graph.remove("c", "b")  # not there: nothing happens


def test_a_cyclic_graph_built_by_hand_is_reported() -> None:
    graph = Graph()
    graph.needs = {"a": {"b"}, "b": {"a"}, "c": set()}
    with pytest.raises(Conflict, match="a, b"):
        graph.waves()


def _log() -> list[Event]:
    return [
        _event(1, ADD, "b", "a"),
        _event(2, ADD, "c", "b"),
        _event(3, ADD, "a", "c"),  # would close a cycle: passed over
        _event(4, ADD, "d", "d"),  # a self-need: passed over
        _event(5, ADD, "x", 3),  # not a name: passed over
        _event(6, ADD, "e", "a", session="elsewhere"),
        _event(7, ADD, "d", "a"),
        _event(8, REMOVE, "c", "b"),
        _event(9, ADD, "c", "d"),
    ]


def test_replaying_the_same_events_gives_the_same_graph() -> None:
    first, second = Graph(), Graph()
    for event in _log():
        first.apply(event)
    for event in _log():
        second.apply(event)
    assert first.edges() == second.edges() == [("b", "a"), ("c", "d"), ("d", "a")]
    assert first.waves() == [["a"], ["b", "d"], ["c"]]
