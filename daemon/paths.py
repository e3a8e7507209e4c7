"""Every path toka uses, in one place.

Data (database, logs) under the platform's user data dir, ``config.toml`` under the user config
dir, the socket and pidfile under the user runtime dir. ``TOKA_HOME`` moves all of them into one
folder: ``$TOKA_HOME/toka.db``, ``$TOKA_HOME/config.toml``, ``$TOKA_HOME/run/toka.sock``. They
are the user's own, and daemon/ownership.py holds the checks that keep them so.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple

from daemon.ownership import private_dir, private_file, unsafe_paths
from store.errors import ConfigError, UnsafePath

TYPE_CHECKING = False  # typing itself costs a hook run about 3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import NamedTuple

    class _Dirs(NamedTuple):
        data_dir: Path
        config_dir: Path
        runtime_dir: Path
else:
    _Dirs = namedtuple("_Dirs", ["data_dir", "config_dir", "runtime_dir"])

APP = "toka"
# sockaddr_un.sun_path holds 108 bytes on Linux (104 on macOS and the BSDs), NUL included.
MAX_SOCKET_PATH = 107 if sys.platform.startswith("linux") else 103
SOCKET_NAME = "toka.sock"  # in the runtime dir
SPOOL_NAME = "hooks.spool.jsonl"  # in the data dir
# The folder recording hooks drop their payloads in, one file each, without starting Python
# (daemon/ingest/inbox.py), and the one the daemon sets aside what it cannot ingest in.
INBOX_NAME = "hooks.inbox"  # in the data dir
INBOX_REJECTED_NAME = "hooks.inbox.rejected"  # in the data dir


# A named tuple, not a frozen dataclass: the same immutable record, without importing
# dataclasses (and inspect) on every hook run, about 6 ms of a hook's start-up.
class Paths(_Dirs):
    """The data, config and runtime dirs, and every file toka keeps in them."""

    __slots__ = ()

    @property
    def database(self) -> Path:
        return self.data_dir / "toka.db"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "logs" / "daemon.log"

    @property
    def spool(self) -> Path:
        """Hook events recorded while the daemon was down, one JSON line each (daemon/ingest/spool.py)."""
        return self.data_dir / SPOOL_NAME

    @property
    def inbox(self) -> Path:
        """Hook payloads dropped by the recording hooks' shell command, one file each
        (daemon/ingest/inbox.py)."""
        return self.data_dir / INBOX_NAME

    @property
    def inbox_rejected(self) -> Path:
        """The inbox's files the daemon could not ingest, set aside (daemon/ingest/inbox.py)."""
        return self.data_dir / INBOX_REJECTED_NAME

    def cursors(self, watcher: str) -> Path:
        """How far ``watcher`` (``daemon``, or ``cli`` for `toka watch`) has read each watched
        file, one small JSON file each (daemon/ingest/tail.py)."""
        return self.data_dir / "watch" / watcher

    @property
    def agents_imported(self) -> Path:
        """When the daemon first imported the agents' own folders (daemon/ingest/history.py)."""
        return self.data_dir / "watch" / "agents.json"

    @property
    def handoffs(self) -> Path:
        """Handoff documents as markdown, when ``handoff.save_markdown`` asks for them."""
        return self.data_dir / "handoffs"

    @property
    def heads_file(self) -> Path:
        """The signed tree heads, one JSON line each, beside the database (daemon/heads/)."""
        return self.data_dir / "heads.jsonl"

    @property
    def heads_key(self) -> Path:
        """The Ed25519 key heads are signed with, 0600, outside the database (daemon/heads/keys.py)."""
        return self.config_dir / "heads.key"

    @property
    def heads_signed(self) -> Path:
        """What ``heads.key`` has signed (the last head's size, and any reset), beside the key
        (daemon/heads/history.py)."""
        return self.config_dir / "heads.signed"

    @property
    def otel_token(self) -> Path:
        """The OTLP receiver's bearer token when otel.token is empty, 0600 (daemon/otel/token.py)."""
        return self.config_dir / "otel.token"

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def socket(self) -> Path:
        return self.runtime_dir / SOCKET_NAME

    @property
    def pidfile(self) -> Path:
        return self.runtime_dir / "toka.pid"

    @property
    def start_failure(self) -> Path:
        """Why the latest start-up failed, as JSON, for the client that started it (daemon/client/autostart.py)."""
        return self.runtime_dir / "start-failure.json"

    @property
    def start_lock(self) -> Path:
        return self.runtime_dir / "start.lock"

    def check_socket_length(self) -> None:
        check_socket_length(self.socket)

    def ensure_runtime_dir(self) -> None:
        """Create (or check) the runtime dir as 0700: the socket inside answers its owner only."""
        private_dir(self.runtime_dir)

    def ensure_data_dir(self) -> None:
        """Create (or check) the data dir as 0700: it holds every agent's transcripts."""
        private_dir(self.data_dir)

    def check_database(self) -> None:
        """The database's files, which SQLite and the store open (following links), checked beforehand:
        SQLite's own, the tip of the log and the record of damage (store/tip.py, store/damage.py)."""
        for suffix in DATABASE_FILES:
            private_file(f"{self.database}{suffix}")

    def unsafe(self) -> tuple[list[UnsafePath], list[str]]:
        """What of toka's directories and files would be refused, and what is looser than toka
        keeps it, changing nothing: for `toka doctor`."""
        data, db = self.data_dir, self.database
        folders = [data, self.config_dir, self.runtime_dir, data / "logs", data / "watch", data / "handoffs"]
        folders += [self.inbox, self.inbox_rejected]
        files: list[str | Path] = [f"{db}{suffix}" for suffix in DATABASE_FILES]
        files += [self.spool, self.log_file, self.pidfile, self.heads_file, self.heads_key, self.heads_signed]
        files.append(self.otel_token)
        return unsafe_paths(folders, files, self.config_file)


class SharedLogPaths(Paths):
    """The paths of a daemon on a log other daemons share (PostgreSQL): its signed heads and their
    record are of that log, kept apart from those of the SQLite log it may have run on before
    (and may again), which the shared log's seqs do not match (docs/tamper-evidence.md)."""

    __slots__ = ()

    @property
    def heads_file(self) -> Path:
        return self.data_dir / "heads.postgres.jsonl"

    @property
    def heads_signed(self) -> Path:
        return self.config_dir / "heads.postgres.signed"


# The files beside the database, by suffix: SQLite's, the tip of the log, the record of damage.
DATABASE_FILES = ("", "-wal", "-shm", "-journal", "-tip", "-damaged")


def check_socket_length(socket: str | os.PathLike[str]) -> None:
    length = len(os.fsencode(socket))
    if length > MAX_SOCKET_PATH:
        raise ConfigError(
            f"the socket path {socket} is {length} bytes, longer than the {MAX_SOCKET_PATH} this OS allows",
            "set TOKA_HOME to a shorter path of your own, e.g. TOKA_HOME=~/.toka",
        )


def resolve_paths() -> Paths:
    from pathlib import Path

    return Paths(*(Path(folder) for folder in _dirs()))


class HookFiles(namedtuple("HookFiles", ["socket", "spool"])):
    """The two files a hook run needs, as strings: resolving them loads no pathlib, which costs a
    hook run (a process per tool call of an agent) about 3 ms of its start-up."""

    __slots__ = ()


def hook_files() -> HookFiles:
    data, _, runtime = _dirs()
    return HookFiles(os.path.join(runtime, SOCKET_NAME), os.path.join(data, SPOOL_NAME))


def _dirs() -> tuple[str, str, str]:
    """The data, config and runtime dirs, as absolute paths."""
    home = os.environ.get("TOKA_HOME")
    if home:
        root = os.path.abspath(os.path.expanduser(home))
        return root, root, os.path.join(root, "run")
    return platform_dirs()


def platform_dirs() -> tuple[str, str, str]:
    """The data, config and runtime dirs when TOKA_HOME is not set: the platform's user dirs."""
    import warnings

    import platformdirs

    data = platformdirs.user_data_dir(APP, appauthor=False)
    config = platformdirs.user_config_dir(APP, appauthor=False)
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: handled below, no need to warn
        warnings.simplefilter("ignore")
        runtime = platformdirs.user_runtime_dir(APP, appauthor=False)
    # Containers and root shells often have no /run/user/<uid>; fall back to the data dir.
    parent = os.path.dirname(runtime)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        runtime = os.path.join(data, "run")
    return data, config, runtime
