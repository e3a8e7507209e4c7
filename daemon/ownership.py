"""Who may own what toka keeps: its directories and files are the user's alone, and so is the
daemon a client talks to. Every process that creates or opens one of them checks so first.

A directory or file that another user owns, or that every user may write, is refused with an
``UnsafePath`` naming the fix, since someone else may have put it there or written to it; one of
the user's own that others may read (or, under a umask of 002, their group write) is tightened to
0700 or 0600, as toka would have created it. Files are opened without following links
(``O_NOFOLLOW``). A directory above toka's that another user owns (root aside), or that every user
may write without the sticky bit, is refused too: either could swap toka's directory for theirs.
The client checks the uid of the process behind the socket (:func:`peer_uid`) before it sends
anything. The hook runs this on every tool call: it loads nothing the hook did not load already.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from store.errors import UnsafePath

TYPE_CHECKING = False  # typing itself costs a hook run about 3 ms
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Sequence
    from pathlib import Path


# The fix named when a directory or file is another user's: toka's must be the user's own.
_ELSEWHERE = "set TOKA_HOME to a directory of your own (e.g. TOKA_HOME=~/.toka)"


def private_dir(path: str | os.PathLike[str], *, create: bool = True) -> bool:
    """Check that ``path`` is a directory of the user's own that no one else may write, and that
    no directory above it is another user's or can be swapped by every user; UnsafePath when it is
    not safe to use. With ``create`` (toka about to keep files there) it is created 0700, or
    tightened to 0700 when others may read it; without (a client about to connect), it is only
    looked at, and False when it is missing."""
    folder = os.fspath(path)
    _check_above(folder)  # before anything is created there
    if create:
        try:  # noqa: SIM105 - contextlib is one more import for every hook run
            os.makedirs(folder, 0o700, exist_ok=True)
        except FileExistsError:
            pass  # not a directory: said below
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if create:
            raise
        return False
    except NotADirectoryError:
        if not create:
            return False  # nothing listens there; creating it says what is in the way
        raise UnsafePath(f"{folder} is not a directory", f"move it out of the way: mv {folder} {folder}.old") from None
    except PermissionError:
        _too_open(folder, os.stat(folder), 0o700)  # another user's, most likely: say so
        raise UnsafePath(f"{folder} cannot be opened: permission denied", f"chmod 700 {folder}") from None
    try:
        if _too_open(folder, os.fstat(fd), 0o700) and create:
            os.fchmod(fd, 0o700)
    except UnsafePath as exc:
        if os.path.islink(folder):  # name what the link points at: that is what is refused
            shown = f"{folder} (a link to {os.path.realpath(folder)})"
            raise UnsafePath(exc.message.replace(folder, shown, 1), exc.hint) from None
        raise
    finally:
        os.close(fd)
    return True


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open`` of one of toka's own files (in a directory :func:`private_dir` checked):
    no link followed, the user's own, a regular file, 0600 (so created, and tightened when others
    may read it). The descriptor; UnsafePath when the file is not safe to use."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: a FIFO put in the file's place must not hang the open; it is refused below.
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(name):
            raise _link(name) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{name} is not a regular file", f"move it out of the way: mv {name} {name}.old")
        if _too_open(name, info, 0o600):
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_private(path: str | os.PathLike[str]) -> bytes:
    """The whole of one of toka's own files, opened as :func:`open_private` does."""
    fd = open_private(path, os.O_RDONLY)
    with open(fd, "rb") as handle:
        return handle.read()


def private_file(path: str | os.PathLike[str]) -> bool:
    """Check one of toka's files that a library opens rather than toka (the database and its
    WAL) as :func:`open_private` would; False when it does not exist."""
    name = os.fspath(path)
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise _link(name)
    if _too_open(name, info, 0o600) and stat.S_ISREG(info.st_mode):  # anything else: its opener says what is wrong
        os.chmod(name, 0o600)
    return True


def trusted_config(path: str | os.PathLike[str]) -> bool:
    """Check config.toml before it is read: it names commands the daemon runs, so it must be the
    user's (or root's) and writable by no one else. A link is followed (config files often live
    in a dotfiles repository); the user's own is tightened to 0600. False when it does not exist."""
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except FileNotFoundError:
        return False
    if _config_too_open(name, info):
        os.chmod(name, 0o600)
    return True


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket, where the OS says:
    ``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS and FreeBSD. None elsewhere, where the
    0700 runtime dir is what keeps other users' processes off the socket."""
    import socket  # loaded already by whoever holds a socket

    if sys.platform.startswith("linux"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)  # struct ucred {pid, uid, gid}
        return int.from_bytes(creds[4:8], sys.byteorder)
    option = getattr(socket, "LOCAL_PEERCRED", None)
    if option is not None:  # struct xucred {u_int cr_version; uid_t cr_uid; ...}, at level SOL_LOCAL (0)
        creds = sock.getsockopt(0, option, 76)
        return int.from_bytes(creds[4:8], sys.byteorder)
    return None


def unsafe_paths(
    folders: Sequence[str | Path], files: Sequence[str | Path], config: str | Path
) -> tuple[list[UnsafePath], list[str]]:
    """What of ``folders``, ``files`` and ``config`` (config.toml) would be refused, and what is
    looser than toka keeps it (tightened when toka next opens it), changing nothing."""
    refused: list[UnsafePath] = []
    loose: list[str] = []

    def look(name: str, wanted: int, check: Callable[[str], os.stat_result | None]) -> None:
        try:
            info = check(name)
        except FileNotFoundError:
            return
        except UnsafePath as exc:
            refused.append(exc)
            return
        if info is not None and info.st_mode & 0o077 and info.st_uid == os.getuid():
            loose.append(f"{name} is {info.st_mode & 0o7777:04o}, not {wanted:04o}")

    def folder(name: str) -> os.stat_result:
        info = os.stat(name)
        _too_open(name, info, 0o700)
        _check_above(name)
        return info

    def file(name: str) -> os.stat_result | None:
        info = _file_info(name)
        if info is not None:
            _too_open(name, info, 0o600)
        return info

    def config_file(name: str) -> os.stat_result:
        info = os.stat(name)
        _config_too_open(name, info)
        return info

    for each in dict.fromkeys(os.fspath(f) for f in folders):
        look(each, 0o700, folder)
    for kept in files:
        look(os.fspath(kept), 0o600, file)
    look(os.fspath(config), 0o600, config_file)
    return refused, loose


def _file_info(name: str) -> os.stat_result | None:
    """``lstat`` of one of toka's files: None when missing, UnsafePath for a link or a non-file."""
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _link(name)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{name} is not a regular file", f"move it out of the way: mv {name} {name}.old")
    return info


def _config_too_open(name: str, info: os.stat_result) -> bool:
    """As :func:`_too_open`, but config.toml may be root's (an image's, a managed machine's) when
    no one else may write it."""
    if info.st_uid == 0 and os.getuid() != 0:
        if info.st_mode & 0o022:
            raise UnsafePath(f"{name} is writable by others (mode {info.st_mode & 0o7777:04o})", f"chmod go-w {name}")
        return False
    return _too_open(name, info, 0o600)


def _too_open(name: str, info: os.stat_result, wanted: int) -> bool:
    """UnsafePath for what is not the user's or what every user may write; whether the rest is
    looser than ``wanted`` (0700, 0600) and needs tightening."""
    uid = os.getuid()
    if info.st_uid != uid:
        raise UnsafePath(
            f"{name} belongs to uid {info.st_uid}, not to you (uid {uid}): toka neither reads nor writes it",
            f"{_ELSEWHERE}, or remove {name} if you made it as another user",
        )
    mode = info.st_mode & 0o7777
    if mode & 0o002:
        raise UnsafePath(
            f"{name} is writable by every user (mode {mode:04o})",
            f"check what it holds, then chmod {wanted:o} {name}; or {_ELSEWHERE}",
        )
    return bool(mode & 0o077)


def _check_above(folder: str) -> None:
    """Refuse a directory above ``folder`` (as given, and with its links resolved) that another
    user owns (root aside), or that every user may write without the sticky bit: either could
    rename toka's directory and put theirs in its place."""
    uid = os.getuid()
    seen = set()
    for start in (os.path.abspath(folder), os.path.realpath(folder)):
        parent = os.path.dirname(start)
        while parent not in seen:
            seen.add(parent)
            try:
                info = os.stat(parent)
            except (FileNotFoundError, NotADirectoryError):  # toka creates it, or says what is in the way
                parent = os.path.dirname(parent)
                continue
            if info.st_uid not in (0, uid):
                raise UnsafePath(
                    f"{parent}, above {folder}, belongs to uid {info.st_uid}: they could swap toka's directory",
                    _ELSEWHERE,
                )
            if info.st_mode & 0o002 and not info.st_mode & stat.S_ISVTX:
                raise UnsafePath(
                    f"{parent}, above {folder}, is writable by every user: anyone could swap toka's directory",
                    _ELSEWHERE,
                )
            parent = os.path.dirname(parent)


def _link(name: str) -> UnsafePath:
    return UnsafePath(
        f"{name} is a symbolic link where toka keeps a file of its own", f"toka follows no links there: rm {name}"
    )
