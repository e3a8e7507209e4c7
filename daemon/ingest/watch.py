"""Watching transcripts: new and growing files are ingested as they are written.

Two watchers share the choice of files and the :class:`~daemon.ingest.tail.Tail`:

- :func:`daemon.client.watch.follow`, which ``toka watch`` runs in the foreground: it parses in
  its own process and sends through the client, as ``toka import`` does;
- :class:`DaemonWatcher`, which the daemon runs on ``[watch] paths`` and, while ``watch.agents``
  is on, on the agents' own folders (daemon/ingest/agents.py): it parses in a worker thread and
  appends through the group committer.

Each reads every ``*.jsonl`` file under its paths once at start (from the file's cursor: a
restart reads only what is new), then each file that watchfiles reports as changed, and every
``RESCAN_S`` all of them again, which catches what a file-system notification may miss (a folder
made just before it was watched, an overflowing inotify queue) at the cost of a stat per file.
At each rescan the daemon's watcher also looks for an agent's folder made since it started (the
agent's first run on the machine), and follows it from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.component import Component
from daemon.config import StoreSettings
from daemon.ingest.agents import AgentFolder, agent_folders
from daemon.ingest.history import ImportRecord, StartRead
from daemon.ingest.lines import BadLine, ParseStats
from daemon.ingest.settings import WatchSettings
from daemon.ingest.tail import Cursors, Tail
from daemon.ingest.transcripts import find_transcripts
from store.errors import Busy, TokaError

if TYPE_CHECKING:
    from daemon.contract.results_status import WatchFolder, WatchStatus
    from daemon.core import Core
    from store.base import AppendResult

log = logging.getLogger("toka.watch")

# Longest a change waits to be grouped with others, and the quiet time that hands them over:
# a line written is read within about a tenth of a second.
DEBOUNCE_MS = 200
STEP_MS = 30
# Every so often all files are looked at again, notified or not.
RESCAN_S = 10.0
SUFFIX = ".jsonl"
# How both watchers ask watchfiles to notify: grouped changes, and an empty set every RESCAN_S.
NOTIFY: dict[str, Any] = {
    "debounce": DEBOUNCE_MS,
    "step": STEP_MS,
    "yield_on_timeout": True,
    "rust_timeout": int(RESCAN_S * 1000),
}

Changes = set[tuple[Any, str]]


@dataclass
class Ingested:
    """What one read of one file added to the log."""

    path: Path
    events: list[dict[str, Any]] = field(default_factory=list)  # with seq, id and created
    bad_lines: list[BadLine] = field(default_factory=list)

    @property
    def created(self) -> int:
        """How many of the events are new; the others were in the log already (another watcher
        or an import stored them first)."""
        return sum(1 for e in self.events if e["created"])

    @property
    def sessions(self) -> list[str]:
        return sorted({e["session"] for e in self.events})

    @property
    def kinds(self) -> Counter[str]:
        return Counter(e["kind"] for e in self.events)


def resolve_roots(paths: Iterable[str | Path]) -> list[Path]:
    return [Path(p).expanduser().absolute() for p in paths]


class Watching:
    """Which files the roots hold, and which of them a set of changes concerns."""

    def __init__(self, roots: Sequence[Path], exclude: Path | None = None) -> None:
        self.roots = list(roots)
        self.exclude = exclude

    def _wanted(self, path: Path) -> bool:
        if path.suffix != SUFFIX:
            return False
        return self.exclude is None or not path.is_relative_to(self.exclude)

    def all_files(self) -> list[Path]:
        files: list[Path] = []
        for root in self.roots:
            found = find_transcripts(root) if root.is_dir() else [root] if root.is_file() else []
            files += [path for path in found if self._wanted(path) and path not in files]
        return files

    def targets(self, changes: Changes) -> list[Path]:
        """The files a set of changes concerns; every file on a rescan (no changes: a timeout)."""
        if not changes:
            return self.all_files()
        return sorted({Path(name) for _, name in changes if self._wanted(Path(name))})


def ingest(tail: Tail, path: Path, append: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Ingested:
    """Read what ``path`` gained and store it with ``append`` (events -> results), then save the
    file's cursor. When an append fails the Tail forgets the file, so the next call reads the
    same lines again; the error is raised. A result may carry what was stored of its event
    (``payload``) and why it was cut (``truncated``): the event is reported as a bad line."""
    stats = ParseStats()
    done = Ingested(path, bad_lines=stats.bad_lines)
    try:
        for batch in tail.read(path, stats):
            results = append([event for _, event in batch])
            for (line, event), result in zip(batch, results, strict=True):
                stored = {**event, **result}
                if (reason := stored.pop("truncated", None)) is not None:
                    done.bad_lines.append(BadLine(str(path), line, reason))
                done.events.append(stored)
    except BaseException:
        tail.forget(path)
        raise
    tail.commit(path)
    return done


class DaemonWatcher(Component):
    """The daemon's own watcher of ``[watch] paths`` and, while ``watch.agents`` is on, of the
    agents' own folders (daemon/ingest/agents.py); nothing to watch: it does nothing. It first
    reads what the files hold (:class:`~daemon.ingest.history.StartRead`, which op
    ``watch.ready`` waits for), then follows them. :meth:`status` is for ``toka status``."""

    def __init__(self, core: Core) -> None:
        settings = core.settings[WatchSettings]
        self.paths = resolve_roots(settings.paths)
        self.agents = agent_folders() if settings.agents else None
        self.roots = list(self.paths)  # what is watched: the paths, and the agents' folders found at start
        self._append = core.append
        # A memory store forgets its events at exit, so its watcher must forget how far it read.
        durable = core.settings[StoreSettings].backend != "memory"
        self._tail = Tail(Cursors(core.paths.cursors("daemon") if durable else None))
        self.start_read = StartRead(ImportRecord(core.paths.agents_imported if durable else None))
        self._exclude = core.paths.data_dir
        self.stopping = threading.Event()  # set at shutdown: the read under way ends early
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.files: set[Path] = set()
        self._agent_files: Counter[Path] = Counter()  # of self.files, those in each agent's folder
        self.created = 0
        self.bad_lines = 0
        self.last_error: str | None = None

    def _found_agents(self) -> list[AgentFolder]:
        return [folder for folder in self.agents or [] if folder.path.is_dir()]

    async def start(self) -> None:
        self.roots += [folder.path for folder in self._found_agents() if folder.path not in self.roots]
        if self.roots or self.agents is not None:  # the agents' folders are looked for until they appear
            self._task = asyncio.create_task(self.run(self._stop), name="watch")
        else:
            self.start_read.finish([], complete=False)

    async def stop(self, deadline: float) -> None:
        if self._task is None:
            return
        self._stop.set()
        self.stopping.set()  # the file being read stops after its current batch
        try:
            await asyncio.wait_for(self._task, deadline)
        except TimeoutError:
            log.warning("the watcher did not stop within the deadline")

    def status(self) -> WatchStatus | None:
        if not self.roots and self.agents is None:
            return None
        agents: list[WatchFolder] | None = None
        if self.agents is not None:
            agents = [
                {
                    "agent": folder.agent,
                    "path": str(folder.path),
                    "found": folder.path in self.roots,
                    "files": self._agent_files[folder.path],
                }
                for folder in self.agents
            ]
        return {
            "paths": [str(root) for root in self.paths],
            "missing": [str(root) for root in self.paths if not root.exists()],
            "agents": agents,
            "files": len(self.files),
            "events": self.created,
            "bad_lines": self.bad_lines,
            "last_error": self.last_error,
            "history": self.start_read.to_json(),
        }

    async def run(self, stop: asyncio.Event) -> None:
        """Watch until ``stop`` is set; a failure of the watching itself is logged and shown in
        the status, and the daemon serves on without it."""
        try:
            await self._run(stop)
        except Exception as exc:
            self.last_error = f"watching stopped: {exc}"
            log.exception("watch: watching stopped")
        finally:
            self.start_read.finish([], complete=False)  # no one waits on a read that will not end

    async def _run(self, stop: asyncio.Event) -> None:
        from watchfiles import awatch

        roots = [root for root in self.roots if root.exists()]
        for root in self.paths:
            if root not in roots:
                log.warning("watch: no file or folder at %s; not watched until the daemon restarts", root)
        watching = Watching(roots, self._exclude)
        if roots:
            log.info("watching %s", ", ".join(map(str, roots)))
        await self._read_at_start(watching.all_files())
        while not stop.is_set():
            if not watching.roots:  # nothing to watch yet: an agent's folder may appear
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RESCAN_S)
                await self._follow_new_agent_folders(watching)
                continue
            async for changes in awatch(*watching.roots, stop_event=stop, **NOTIFY):
                if not changes and await self._follow_new_agent_folders(watching):
                    break  # watched again, the new folder with the others
                await self._ingest_all(watching.targets(changes))

    async def _follow_new_agent_folders(self, watching: Watching) -> bool:
        """At a rescan: an agent's folder made since the daemon started (the agent's first run)
        is followed from now on, what it holds read first. Whether there was one."""
        new = [folder.path for folder in self._found_agents() if folder.path not in watching.roots]
        if not new:
            return False
        log.info("watch: following %s, made since the daemon started", ", ".join(map(str, new)))
        watching.roots += new
        self.roots += [path for path in new if path not in self.roots]
        files = [path for path in watching.all_files() if any(path.is_relative_to(root) for root in new)]
        complete, events = True, 0
        for path in files:
            created = await self._ingest(path)
            complete, events = complete and created is not None, events + (created or 0)
        if complete and not self.stopping.is_set():
            self.start_read.imported([str(path) for path in new], len(files), events)
        return True

    async def _read_at_start(self, files: list[Path]) -> None:
        """Read what every file holds from its cursor: counted for those who wait on it."""
        read = self.start_read
        read.begin(len(files), agents=bool(self._found_agents()))
        complete = True
        for path in files:
            if self.stopping.is_set():
                complete = False
                break
            created = await self._ingest(path)
            if created is None:
                complete = False
            else:
                read.events += created
            read.files_read += 1
            read.progressed()
        if read.first:
            log.info("watch: the agents' history read: %d files, %d events", read.files_read, read.events)
        read.finish([str(folder.path) for folder in self._found_agents()], complete)

    async def _ingest_all(self, paths: Iterable[Path]) -> None:
        for path in paths:
            await self._ingest(path)

    async def _ingest(self, path: Path) -> int | None:
        """Read what ``path`` gained: the events it added, or None when it could not be read."""
        loop = asyncio.get_running_loop()

        def append(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
            if self.stopping.is_set():
                raise Busy("the daemon is shutting down")  # the cursor stays where it was
            results = asyncio.run_coroutine_threadsafe(self._append_dicts(batch), loop).result()
            return [{"seq": r.event.seq, "id": r.event.id, "created": r.created} for r in results]

        try:
            done = await asyncio.to_thread(ingest, self._tail, path, append)
        except (OSError, TokaError) as exc:
            if self.stopping.is_set():
                return None
            self.last_error = f"{path}: {exc}"
            log.error("watch: %s not ingested, read again on its next change: %s", path, exc)
            return None
        if path not in self.files:
            self.files.add(path)
            self._agent_files.update(folder.path for folder in self.agents or [] if path.is_relative_to(folder.path))
        self.created += done.created
        self.bad_lines += len(done.bad_lines)
        for bad in done.bad_lines:
            log.warning("watch: skipped %s", bad)
        return done.created

    async def _append_dicts(self, batch: list[dict[str, Any]]) -> list[AppendResult]:
        from store.events import parse_new_event

        results = await self._append([parse_new_event(event) for event in batch])
        if not self.start_read.done.is_set():
            self.start_read.progressed()  # a long file keeps whoever waits informed
        return results
