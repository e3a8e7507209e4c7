"""daemon/contract/results.py says what the CLI and the TUI may read: each TypedDict is held to a
real daemon's answers here, keys and value types, nested ones included."""

import types
import typing
from pathlib import Path
from typing import Any, NotRequired, TypedDict, get_args, get_origin, get_type_hints

import pytest
from cli_support import EXAMPLE

from daemon.client.doctor import database_health
from daemon.client.sync import Client
from daemon.client.transfer import import_files
from daemon.contract import results, results_names
from daemon.paths import resolve_paths
from store import search


def mismatches(value: Any, kind: Any, where: str = "result") -> list[str]:
    """Where ``value`` does not have the shape ``kind`` declares (empty when it does)."""
    if kind is Any:
        return []
    origin = get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [mismatches(value, option, where) for option in get_args(kind)]
        return [] if any(not found for found in options) else min(options, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where} is {type(value).__name__}, not a list"]
        return [
            problem for i, item in enumerate(value) for problem in mismatches(item, get_args(kind)[0], where + f"[{i}]")
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where} is {type(value).__name__}, not an object"]
        return [problem for k, item in value.items() for problem in mismatches(item, get_args(kind)[1], f"{where}.{k}")]
    if typing.is_typeddict(kind):
        return _typeddict_mismatches(value, kind, where)
    if kind is type(None):
        return [] if value is None else [f"{where} is {value!r}, not null"]
    if kind is float:
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    else:
        fits = isinstance(value, kind)
    return [] if fits else [f"{where} is {value!r}, not {kind.__name__}"]


def _typeddict_mismatches(value: Any, kind: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} is {type(value).__name__}, not {kind.__name__}"]
    declared = get_type_hints(kind)
    found = [f"{where} lacks {name!r}" for name in sorted(kind.__required_keys__ - set(value))]
    found += [
        f"{where} has {name!r}, which {kind.__name__} does not declare" for name in sorted(set(value) - set(declared))
    ]
    for name in set(value) & set(declared):
        found += mismatches(value[name], declared[name], f"{where}.{name}")
    return found


@pytest.fixture
def answers(toka_home: Path, tmp_path: Path) -> dict[str, Any]:
    """One answer of each op the CLI and the TUI read, on the example session and an agent with
    a handoff, a memory entry, a pool entry and a lifecycle change."""
    with Client() as client:
        imported = import_files(client, [EXAMPLE]).to_json()
        agent = client.call("agents.spawn", type="billing", window=10_000)
        client.call("agents.usage", agent=agent["id"], input_tokens=8_000)
        handoff = client.call("handoffs.create", target="fix-login-timeout")
        client.call("memory.set", scope="global", key="k", value={"n": 1})
        found = {
            "EventsPage": client.call("events.query", session="fix"),
            "Event": next(client.iter_events(session="fix")),
            "Session": client.call("sessions.get", session="fix"),
            "SessionList": client.call("sessions.list"),
            "Status": client.call("status"),
            "Agent": client.call("agents.get", agent=agent["id"]),
            "AgentList": client.call("agents.list"),
            "NameCompletions": client.call("names.complete", prefix="fix/", agents=True),
            "Usage": client.call("usage", target=agent["id"]),
            "HandoffList": client.call("handoffs.list"),
            "Handoff": client.call("handoffs.get", id=handoff["id"]),
            "HandoffChain": client.call("handoffs.chain", trace=agent["trace"]),
            "HandoffCheck": client.call("handoffs.verify", id=handoff["id"]),
            "VerifyReport": client.call("verify"),
            "Stats": client.call("stats"),
            "Compression": client.call("compress", session="fix", dry_run=True, force=True, target_pct=5),
            "WorkingContext": client.call("context", session="fix"),
            "MemoryEntry": client.call("memory.get", scope="global", key="k"),
            "MemoryList": client.call("memory.list"),
            "PoolStats": client.call("pool.stats"),
            "SearchResult": client.call("search", query="login"),
            "Recall": client.call("recall", query="login", session="fix"),
            "ImportReport": imported,
            "DatabaseHealth": database_health(resolve_paths()),
        }
    return found


def test_each_declared_result_matches_the_daemons_answer(answers: dict[str, Any]) -> None:
    assert answers["Agent"]["history"], "the agent's history is there to be checked"
    assert answers["SearchResult"]["hits"] and answers["Recall"]["items"]
    assert [name["name"] for name in answers["NameCompletions"]["names"]][:1] == ["fix/main"]
    declared = {name: getattr(results, name, None) or getattr(results_names, name) for name in answers}
    problems = {name: mismatches(value, declared[name], name) for name, value in answers.items()}
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_check_catches_a_missing_key_an_extra_one_and_a_wrong_type() -> None:
    class Point(TypedDict):
        x: int
        label: str | None
        tags: NotRequired[list[str]]

    assert mismatches({"x": 1, "label": None}, Point) == []
    assert mismatches({"x": 1, "label": "a", "tags": ["t"]}, Point) == []
    assert mismatches({"label": "a"}, Point) == ["result lacks 'x'"]
    assert mismatches({"x": 1, "label": "a", "y": 2}, Point) == ["result has 'y', which Point does not declare"]
    assert mismatches({"x": True, "label": "a"}, Point) == ["result.x is True, not int"]
    assert mismatches({"x": 1, "label": "a", "tags": [3]}, Point) == ["result.tags[0] is 3, not str"]


def test_snippet_marks_are_the_stores() -> None:
    # The store writes them, the CLI and the TUI read them from the client's results module.
    assert (results.MARK_START, results.MARK_END) == (search.MARK_START, search.MARK_END)
