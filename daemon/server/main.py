"""Running the daemon: ``python -m daemon`` and ``toka daemon run``. Takes the pidfile lock,
opens the store, serves until a signal or a ``shutdown`` request, and turns start-up failures
into one line and an exit code."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

from daemon.config import Settings, StoreSettings
from daemon.config_file import load_settings
from daemon.ownership import open_private, private_dir
from daemon.paths import Paths, SharedLogPaths, resolve_paths
from daemon.sections import SECTIONS
from daemon.server.pidlock import PidLock
from daemon.server.process import Daemon
from daemon.states.machines import Machine, read_machines
from store.base import EventStore
from store.errors import ConfigError, StoreError, TokaError

log = logging.getLogger("toka.daemon")


class SettingsRefused(ConfigError):
    """A setting the daemon refused as it resolved them all: what the client that starts it
    reads only the daemon's own sections of, and reports as if it had read it itself."""


async def open_store(paths: Paths, settings: Settings) -> EventStore:
    store = settings[StoreSettings]
    if store.backend == "memory":
        from store.ephemeral import EphemeralStore

        return EphemeralStore()
    if store.backend == "postgres":
        return await _open_postgres(store.url, store.durability)
    from store.sqlite.store import SqliteStore

    paths.check_database()
    return await SqliteStore.open(
        paths.database,
        durability=store.durability,  # type: ignore[arg-type]
        merkle=store.signed_heads,
    )


async def _open_postgres(url: str, durability: str) -> EventStore:
    if not url:
        raise ConfigError(
            "store.backend is postgres but store.url is empty",
            "set it: toka config set store.url postgresql://USER@HOST/DB (or TOKA_STORE_URL)",
        )
    try:
        from store.postgres.store import PostgresStore
    except ImportError:
        raise ConfigError(
            "the postgres backend needs psycopg, which is not installed", "pip install 'toka[postgres]'"
        ) from None
    return await PostgresStore.open(url, durability)


async def run(paths: Paths, settings: Settings) -> None:
    os.umask(0o077)  # the database, logs and pidfile are for their owner only
    paths.check_socket_length()
    paths.ensure_runtime_dir()
    paths.ensure_data_dir()
    lock = PidLock(paths)
    lock.acquire()
    try:
        machines = read_machines(paths.config_file)  # a malformed machine stops start-up before the store opens
        store = await open_store(paths, settings)
        try:
            await _serve(paths, settings, store, machines)
        finally:
            # Whatever stopped the daemon, and however far start-up got: an open store's connection
            # threads would keep the process alive, holding the database and the pidfile lock.
            await store.close()
    finally:
        lock.release()


async def _serve(paths: Paths, settings: Settings, store: EventStore, machines: Mapping[str, Machine]) -> None:
    daemon = Daemon(SharedLogPaths(*paths) if store.shared else paths, settings, store, machines)
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)

    def on_signal(signum: int) -> None:
        if daemon.stop_requested:
            log.warning("second signal: exiting at once")
            os._exit(128 + signum)
        daemon.request_stop(signal.Signals(signum).name)

    for signum in signals:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        await daemon.serve()
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


def run_foreground(flags: dict[str, Any] | None = None) -> None:
    """Log to stderr, resolve the settings (flags over env over file) and serve until stopped."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs every change at INFO
    paths = resolve_paths()
    try:
        settings = load_settings(SECTIONS, paths.config_file, flags).settings
    except ConfigError as exc:
        raise SettingsRefused(exc.message, exc.hint) from None
    try:
        asyncio.run(run(paths, settings))
    except OSError as exc:
        raise _os_failure(exc) from None


def _os_failure(exc: OSError) -> TokaError:
    """A file or directory the daemon needs and cannot have, named, with what to do about it."""
    where = f": {exc.filename}" if exc.filename else ""
    if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return StoreError(f"{exc.strerror}{where}", "check the permissions of the data dir, or set TOKA_HOME")
    if exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.ENOTEMPTY):
        return StoreError(f"{exc.strerror}{where}", "something else is where toka keeps that file: move it away")
    if exc.errno == errno.ENOSPC:
        return StoreError(f"{exc.strerror}{where}", "free some space and retry")
    return StoreError(f"the daemon cannot start: {exc.strerror or exc}{where}", "see `toka doctor`")


def main(argv: list[str] | None = None) -> None:
    """``python -m daemon [--memory]``: errors are one line on stderr and an exit code, whatever
    stopped the daemon, and the process ends even if a thread of a library would keep it."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        run_foreground({"backend": "memory"} if "--memory" in argv else {})
    except TokaError as exc:
        _exit(exc)
    except Exception as exc:  # a bug: the client that started it still learns why, and no daemon hangs
        log.exception("the daemon failed")
        _exit(TokaError(f"internal error: {exc!r}", "see the daemon's log (toka daemon logs)"))
    _exit(None)


def _exit(error: TokaError | None) -> None:
    if error is not None:
        sys.stderr.write(error.lines())
        _leave_failure(error)
    code = 0 if error is None else error.exit_code
    sys.stderr.flush()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        # Interpreter shutdown would wait for that thread forever (it may hold the database).
        log.warning("exiting with a thread still running")
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


def _leave_failure(error: TokaError) -> None:
    """Write why start-up failed where the client that started the daemon reads it."""
    with contextlib.suppress(OSError, TokaError):
        paths = resolve_paths()
        if private_dir(paths.runtime_dir, create=False):
            # Whole or not at all: the client may read it while this process is still exiting.
            partial = paths.start_failure.with_name(paths.start_failure.name + ".tmp")
            with open(open_private(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w") as out:
                out.write(json.dumps({**error.to_wire(), "settings": isinstance(error, SettingsRefused)}))
            os.replace(partial, paths.start_failure)
