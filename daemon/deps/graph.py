"""A dependency graph of agents or workstreams, as a projection of the log.

A node is any name; an edge says that a node needs another (``frontend`` needs ``api``). Edges
are ``deps.add`` / ``deps.remove`` events ``{node, needs}`` in the fixed session ``toka.deps``.
The graph stays acyclic: an edge that would close a cycle is refused when it is asked for (with
the cycle named), and passed over on replay should one reach the log some other way, so replaying
the log always rebuilds the same graph. :meth:`Graph.waves` gives the order work can run in:
wave 0 holds the nodes that need nothing, each later wave the nodes whose needs are all in
earlier waves, so the nodes of one wave can run in parallel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from daemon.component import Component, Projection
from daemon.contract.kinds import Kind
from daemon.core import Core
from store.errors import Conflict, NotFound, UsageError
from store.events import Event, fit_name, parse_new_event

SESSION = "toka.deps"
ADD = Kind.DEPS_ADD
REMOVE = Kind.DEPS_REMOVE
KINDS = (ADD, REMOVE)
# Node names are payload values; the same bound as a session name.
MAX_NODE_CHARS = 200


def node_name(value: Any, what: str = "node") -> str:
    name = fit_name(value, MAX_NODE_CHARS)
    if name is None:
        raise UsageError(
            f"a {what} must be a non-empty string without control characters",
            f"at most {MAX_NODE_CHARS} characters, e.g. an agent id or a workstream",
        )
    return name


class Graph:
    """Nodes and what each needs. Pure: no I/O, no events."""

    def __init__(self) -> None:
        self.needs: dict[str, set[str]] = {}

    @property
    def nodes(self) -> set[str]:
        found = set(self.needs)
        for targets in self.needs.values():
            found |= targets
        return found

    def edges(self) -> list[tuple[str, str]]:
        return sorted((node, need) for node, targets in self.needs.items() for need in targets)

    def has(self, node: str, needs: str) -> bool:
        return needs in self.needs.get(node, set())

    def path(self, start: str, goal: str) -> list[str] | None:
        """A shortest chain of needs from ``start`` to ``goal`` (both included), or None."""
        previous: dict[str, str | None] = {start: None}
        frontier = [start]
        while frontier:
            following = []
            for node in frontier:
                for need in sorted(self.needs.get(node, ())):
                    if need in previous:
                        continue
                    previous[need] = node
                    if need == goal:
                        chain = [goal]
                        while (step := previous[chain[-1]]) is not None:
                            chain.append(step)
                        return chain[::-1]
                    following.append(need)
            frontier = following
        return None

    def cycle_if_added(self, node: str, needs: str) -> list[str] | None:
        """The cycle ``node -> needs -> ... -> node`` that the edge would close, or None."""
        if node == needs:
            return [node, node]
        back = self.path(needs, node)
        return None if back is None else [node, *back]

    def add(self, node: str, needs: str) -> None:
        self.needs.setdefault(node, set()).add(needs)

    def remove(self, node: str, needs: str) -> None:
        targets = self.needs.get(node)
        if targets is not None:
            targets.discard(needs)
            if not targets:
                del self.needs[node]

    def waves(self) -> list[list[str]]:
        """The nodes in waves (Kahn's algorithm, level by level); names sorted within a wave."""
        waiting = {node: set(self.needs.get(node, ())) for node in self.nodes}
        waves: list[list[str]] = []
        done: set[str] = set()
        while waiting:
            ready = sorted(node for node, needs in waiting.items() if needs <= done)
            if not ready:  # only an acyclic graph is ever built; this guards the loop regardless
                raise Conflict(f"the graph has a cycle among {', '.join(sorted(waiting))}")
            waves.append(ready)
            done.update(ready)
            for node in ready:
                del waiting[node]
        return waves

    def apply(self, event: Event) -> None:
        if event.session != SESSION:
            return
        node, needs = event.payload.get("node"), event.payload.get("needs")
        if not isinstance(node, str) or not isinstance(needs, str):
            return
        if event.kind == ADD and self.cycle_if_added(node, needs) is None:
            self.add(node, needs)
        elif event.kind == REMOVE:
            self.remove(node, needs)


class Dependencies(Component):
    """The daemon's dependency graph: rebuilt at start-up, changed by requests."""

    def __init__(self, core: Core) -> None:
        self.store = core.store
        self.append = core.append
        self.handed_over = core.handed_over  # a change answers once the graph holds it
        self.graph = Graph()
        self._lock = asyncio.Lock()

    def projection(self) -> Projection:
        return Projection("dependencies", KINDS, self.graph.apply, SESSION)

    async def add(self, node: Any, needs: Sequence[Any]) -> list[str]:
        """Record that ``node`` needs each of ``needs``; the needs that were new. All or nothing:
        a self-need or a cycle refuses the whole request."""
        node = node_name(node)
        wanted = list(dict.fromkeys(node_name(need, "need") for need in needs))
        if not wanted:
            raise UsageError("name at least one node it needs", "e.g. toka deps add frontend --needs api")
        async with self._lock:
            trial = Graph()
            trial.needs = {n: set(t) for n, t in self.graph.needs.items()}
            new = []
            for need in wanted:
                if node == need:
                    raise UsageError(f"{node} cannot need itself")
                if trial.has(node, need):
                    continue
                cycle = trial.cycle_if_added(node, need)
                if cycle is not None:
                    raise Conflict(
                        f"adding {node} needs {need} would close the cycle {' -> '.join(cycle)}",
                        "remove one of those edges first with `toka deps rm`",
                    )
                trial.add(node, need)
                new.append(need)
            events = [
                parse_new_event({"session": SESSION, "kind": ADD, "payload": {"node": node, "needs": need}})
                for need in new
            ]
            if events:
                results = await self.append(events)
                await self.handed_over(results[-1].event.seq)
            return new

    async def remove(self, node: Any, needs: Sequence[Any]) -> list[str]:
        """Drop ``node``'s edges to each of ``needs``; NotFound (nothing stored) if one is not there."""
        node = node_name(node)
        wanted = list(dict.fromkeys(node_name(need, "need") for need in needs))
        if not wanted:
            raise UsageError("name at least one node to stop needing", "e.g. toka deps rm frontend --needs api")
        async with self._lock:
            missing = [need for need in wanted if not self.graph.has(node, need)]
            if missing:
                raise NotFound(f"{node} does not need {', '.join(missing)}", "list the edges with `toka deps show`")
            events = [
                parse_new_event({"session": SESSION, "kind": REMOVE, "payload": {"node": node, "needs": need}})
                for need in wanted
            ]
            results = await self.append(events)
            await self.handed_over(results[-1].event.seq)
            return wanted
