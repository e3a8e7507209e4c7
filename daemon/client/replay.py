"""A session replayed in causal order: each ``lifecycle`` event right after the event that caused it.

The daemon evaluates usage after committing it, so the lifecycle event a usage event causes is
appended after the whole batch that carried it (an import appends a thousand events at a time):
its seq comes late while its time and its ``cause`` point into the middle. Read in seq order, a
replay up to that middle would miss it, and a full replay would show it out of place. So a
replay reads the session's lifecycle events first (few), and shows each right after its cause;
one whose cause is not in the session (or has been pruned) stays where its seq puts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from daemon.contract.kinds import Kind
from daemon.contract.results import Event
from store.kinds import kind_taken

if TYPE_CHECKING:
    from daemon.client.sync import Client

LIFECYCLE = Kind.LIFECYCLE
# What an importer keeps of a line it does not map (progress, snapshots): the bulk of a real
# session, hidden from transcripts and timelines unless asked for.
RAW = Kind.RAW


def replay_lines(
    client: Client, session: str, to_seq: int | None = None, kinds: list[str] | None = None
) -> Iterator[Event]:
    """The events of ``session`` up to ``to_seq`` (all when None) that ``kinds`` takes (patterns
    as the daemon reads them: ``tool.*``, ``!raw``), in causal order."""
    query: dict[str, Any] = {"session": session, "kinds": kinds or []}
    if to_seq is not None:
        query["before_seq"] = to_seq + 1
    taken = kind_taken(LIFECYCLE, tuple(kinds or ()))
    lifecycle = list(client.iter_events(session=session, kinds=[LIFECYCLE])) if taken else []
    return causal_order(client.iter_events(**query), lifecycle)


def causal_order(events: Iterable[Event], lifecycle: Iterable[Event]) -> Iterator[Event]:
    """``events`` (a session's, in seq order, possibly up to a point) with each event of
    ``lifecycle`` (the session's lifecycle events, any range) right after its cause."""
    caused: dict[str, list[Event]] = {}
    for event in lifecycle:
        cause = event["payload"].get("cause")
        if isinstance(cause, str):
            caused.setdefault(cause, []).append(event)
    shown: set[str] = set()
    for event in events:
        if event["kind"] == LIFECYCLE and event["id"] in shown:
            continue  # shown at its cause already
        yield event
        for effect in caused.get(event["id"], ()):
            if effect["seq"] > event["seq"]:
                shown.add(effect["id"])
                yield effect
