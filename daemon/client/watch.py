"""``toka watch``: the files under its paths ingested in the client's own process as they are
written, and sent through the client, as ``toka import`` does (the daemon's own watcher is
:class:`daemon.ingest.watch.DaemonWatcher`; both share the choice of files and the tail)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from daemon.client.appends import append_all
from daemon.client.sync import Client
from daemon.ingest.lines import BadLine
from daemon.ingest.tail import Cursors, Tail
from daemon.ingest.watch import NOTIFY, Ingested, Watching, ingest
from store.errors import DaemonUnavailable, NotFound, TokaError


def follow(
    connect: Callable[[], Client],
    roots: Sequence[Path],
    cursors: Cursors,
    report: Callable[[Ingested], None],
    stop: threading.Event,
    fmt: str = "auto",
    exclude: Path | None = None,
) -> None:
    """Ingest the files under ``roots`` through a client from ``connect`` until ``stop`` is set,
    calling ``report`` after each read that added or skipped something. A daemon that goes
    away is started again (``connect`` autostarts it) and the read is repeated; a file the
    daemon refuses is reported as a bad line 0 and read again on its next change."""
    from watchfiles import watch

    for root in roots:
        if not root.exists():
            raise NotFound(f"no file or folder at {root}", "check the path")
    watching = Watching(roots, exclude)
    tail = Tail(cursors, fmt)
    client = connect()

    def append(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = []
        for prepared, result in append_all(client, batch):
            if prepared.truncation is not None:
                result = {**result, "payload": prepared.event["payload"], "truncated": prepared.truncation.reason()}
            results.append(result)
        return results

    def ingest_all(paths: Iterable[Path]) -> None:
        nonlocal client
        for path in paths:
            try:
                try:
                    done = ingest(tail, path, append)
                except DaemonUnavailable:
                    client.close()
                    client = connect()
                    done = ingest(tail, path, append)
            except DaemonUnavailable:
                raise
            except TokaError as exc:
                done = Ingested(
                    path, bad_lines=[BadLine(str(path), 0, f"not stored, read again when it changes: {exc.message}")]
                )
            if done.events or done.bad_lines:
                report(done)

    try:
        ingest_all(watching.all_files())
        for changes in watch(*roots, stop_event=stop, raise_interrupt=False, **NOTIFY):
            ingest_all(watching.targets(changes))
    finally:
        client.close()
