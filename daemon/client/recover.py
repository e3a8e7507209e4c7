"""`toka admin recover` on the client's side: the daemon stopped, the database held, the recovery run.

A damaged database may be one no daemon can open, so the recovery runs here, in the command's
own process, by the store's function (store/sqlite/recover.py, loaded for this command only).
Nothing else may touch the files meanwhile: the daemon is asked to stop, the start-up lock is
held (a client that would start a daemon waits for the recovery, then starts it on the new
database), and so is the pidfile lock a daemon takes (one started by hand is refused). The next
command starts a daemon on the recovered database.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from daemon.client.stop import stop_daemon
from daemon.paths import Paths
from store.errors import DaemonUnavailable, UsageError

if TYPE_CHECKING:
    from daemon.contract.results import Recovery


def recover_database(paths: Paths) -> Recovery:
    """Stop the daemon, recover the database into a new one, keep the damaged one beside it:
    ``Recovery.to_json()`` with the pid of the daemon stopped (null when none ran)."""
    from daemon.config import OWN_SECTIONS, StoreSettings
    from daemon.config_file import load_settings

    backend = load_settings(OWN_SECTIONS, paths.config_file).settings[StoreSettings].backend
    if backend != "sqlite":
        raise UsageError(
            f"toka admin recover works on the SQLite database; this toka's store is {backend}",
            "a PostgreSQL database is its server's to check and repair (amcheck, pg_dump and restore)",
        )
    stopped = stop_daemon(paths)
    with _held(paths):
        from store.sqlite.recover import recover

        recovery = recover(paths.database)
    return cast("Recovery", {**recovery.to_json(), "stopped": stopped})


@contextlib.contextmanager
def _held(paths: Paths) -> Iterator[None]:
    """The start-up lock and the pidfile lock, for as long as the files are swapped."""
    paths.ensure_runtime_dir()
    with open(paths.start_lock, "a") as starting, open(paths.pidfile, "a+") as pidfile:
        fcntl.flock(starting, fcntl.LOCK_EX)
        try:
            fcntl.flock(pidfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pidfile.seek(0)
            pid = pidfile.read().strip() or "?"
            raise DaemonUnavailable(
                f"a daemon (pid {pid}) holds the database and did not stop when asked",
                f"stop it (kill {pid}), then run `toka admin recover` again",
            ) from None
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                if not paths.pidfile.read_text().strip():
                    paths.pidfile.unlink()  # still under its lock: no daemon has opened it meanwhile
