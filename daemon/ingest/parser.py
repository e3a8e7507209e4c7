"""What every importer is: a parser fed one record at a time.

The same parser reads a file whole (``toka import``) or follows it as it grows (``toka watch``):
``feed`` takes each record in file order; ``flush`` gives what it held back for later records
(Claude Code's usage waits for the last record of its response), everything at the ``end`` of a
file, and what can go out now when the file is still being written (events waiting for the file
to name their session stay held); ``snapshot`` is its state after a flush, small and JSON-able,
from which a parser made for the same file carries on where this one stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from daemon.ingest.lines import ParseStats, read_records

# An event as the parsers make it: the JSON object a client appends (store.events.parse_new_event).
NewEventDict = dict[str, Any]
State = dict[str, Any]


class Parser(Protocol):
    stats: ParseStats  # what the parse met; may be swapped between records

    def feed(self, number: int, raw: bytes, record: dict[str, Any]) -> Iterable[NewEventDict]: ...

    def flush(self, end: bool = True) -> Iterable[NewEventDict]: ...

    def snapshot(self) -> State: ...


# (file, stats to update, a snapshot to carry on from or None) -> parser
ParserFactory = Callable[[Path, ParseStats, State | None], Parser]


def parse_whole(factory: ParserFactory, path: Path, stats: ParseStats) -> Iterator[NewEventDict]:
    """The events of a whole file, in file order; ``stats`` is updated."""
    for _, event in parse_numbered(factory, path, stats):
        yield event


def parse_numbered(factory: ParserFactory, path: Path, stats: ParseStats) -> Iterator[tuple[int, NewEventDict]]:
    """As :func:`parse_whole`, each event with the number of the line it came from (of the line
    that released it, for an event held back; of the last line, for those the end released),
    for reports that name a record."""
    parser = factory(path, stats, None)
    number = 0
    for number, raw, record in read_records(path, stats):
        for event in parser.feed(number, raw, record):
            yield number, event
    for event in parser.flush():
        yield number, event
