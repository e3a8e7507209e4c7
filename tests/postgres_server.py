"""A throw-away PostgreSQL server for the tests of the PostgreSQL backend.

tests/conftest.py starts one per pytest run, in the xdist controller (or the only process) before any
worker starts, and puts its admin URL in ``TOKATEST_POSTGRES_URL``, which the workers inherit; each
test that asks for ``postgres_database`` gets a fresh database on it. A URL already in
``TOKATEST_POSTGRES_URL`` names an existing server, and then none is started.

The server is started from the installed binaries (``pg_ctl`` on PATH, else the highest version in
/usr/lib/postgresql/*/bin) with its data and its socket in a new folder under /tmp, listens on no TCP
address, and is stopped and removed when the run ends. When that server has no pgvector (Debian's
apt sources lack ``postgresql-NN-pgvector`` for some versions) and the test extra's ``pgserver`` is
installed, pgserver's bundled server, which has it, is started instead: one server per run either
way, and semantic recall's tests run against a real pgvector. As root it runs as the ``postgres``
user, since initdb and pg_ctl refuse root; pgserver's files are copied into the server's folder when
that user cannot reach them where they are installed (a virtualenv in a private folder). A watchdog
process removes it too if pytest dies without cleaning up (SIGKILL, a second Ctrl-C during teardown).

The names start with TOKATEST_, not TOKA_: the ``toka_home`` fixture clears every TOKA_ variable.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

URL_VARIABLE = "TOKATEST_POSTGRES_URL"
# Set by the process that tried to start the server and could not, for the workers' skip reason.
UNAVAILABLE_VARIABLE = "TOKATEST_POSTGRES_UNAVAILABLE"
# The server's cluster_name: it names the processes (``postgres: toka-tests: checkpointer``), and
# tells a test that the server is this module's and not one from TOKATEST_POSTGRES_URL.
CLUSTER_NAME = "toka-tests"
DATABASE_PREFIX = "toka_t_"
SERVER_USER = "postgres"


class Unavailable(Exception):
    """No server can be started here; the message says why."""


@dataclass
class Server:
    """A running throw-away server: its admin URL and the folder holding its data and socket."""

    url: str
    root: Path
    bindir: Path
    watchdog: subprocess.Popen[bytes]
    options: str = ""  # the server's -o options, for starting it again (control)


def _version(path: Path) -> tuple[int, ...]:
    """The version in /usr/lib/postgresql/<version>/bin, as numbers (9.6 < 15)."""
    try:
        return tuple(int(part) for part in path.parent.name.split("."))
    except ValueError:
        return ()


def _complete(bindir: Path) -> bool:
    return all(os.access(bindir / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres"))


def system_bindirs() -> list[Path]:
    """The folders of initdb, pg_ctl and postgres installed on the system: pg_ctl's on PATH first,
    then Debian's, highest version first."""
    candidates = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version, reverse=True)
    found: list[Path] = []
    for bindir in candidates:
        if bindir not in found and _complete(bindir):
            found.append(bindir)
    return found


def pgserver_bindir() -> Path | None:
    """The binaries of an installed ``pgserver`` (PyPI), a PostgreSQL build that bundles pgvector;
    found without importing it, whose import makes folders and a lock file of its own."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    bindir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return bindir if _complete(bindir) else None


def extension_dir(bindir: Path) -> Path | None:
    """Where the server of ``bindir`` looks for extensions: its pg_config's share folder, else
    Debian's layout (/usr/lib/postgresql/NN/bin: /usr/share/postgresql/NN/extension)."""
    pg_config = bindir / "pg_config"
    if os.access(pg_config, os.X_OK):
        done = subprocess.run([str(pg_config), "--sharedir"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip()) / "extension"
    if bindir.parent.parent == Path("/usr/lib/postgresql"):
        return Path("/usr/share/postgresql") / bindir.parent.name / "extension"
    return None


def has_pgvector(bindir: Path) -> bool:
    """Whether the server of ``bindir`` has the pgvector extension to create."""
    found = extension_dir(bindir)
    return found is not None and (found / "vector.control").exists()


def find_bindir() -> Path | None:
    """The folder of initdb, pg_ctl and postgres: pg_ctl's on PATH, else Debian's highest version;
    when that server lacks pgvector, an installed pgserver's."""
    system = system_bindirs()
    if system and has_pgvector(system[0]):
        return system[0]
    return pgserver_bindir() or (system[0] if system else None)


def bindir_without_pgvector() -> Path | None:
    """A system server without pgvector, for the tests of what semantic recall says there."""
    return next((bindir for bindir in system_bindirs() if not has_pgvector(bindir)), None)


def _as_server_user() -> list[str]:
    """The prefix that runs a command as the server's user: none, or runuser as root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        raise Unavailable(f"running as root, and there is no runuser to run the server as {SERVER_USER}")
    return ["runuser", "-u", SERVER_USER, "--"]


def _run(what: str, command: list[str], cwd: Path, log: Path | None = None) -> None:
    try:
        done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"{what} failed: {error}") from None
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip().splitlines()
        if log is not None and log.exists():
            output += log.read_text(errors="replace").strip().splitlines()
        raise Unavailable(f"{what} failed (exit {done.returncode}): {' / '.join(output[-5:])}")


def _free_port() -> int:
    # With no TCP address the port only names the socket file, which lives in a folder of its own,
    # so any number would do; a free one keeps it out of the way of anything else.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def admin_url(root: Path, port: int) -> str:
    query = urllib.parse.urlencode({"host": str(root), "port": port}, safe="/")
    return f"postgresql://{SERVER_USER}@/postgres?{query}"


def _reachable(prefix: list[str], bindir: Path) -> bool:
    """Whether the server's user can run the binaries of ``bindir`` (and load their libraries)."""
    if not prefix:
        return True
    done = subprocess.run([*prefix, str(bindir / "initdb"), "--version"], capture_output=True, cwd="/", check=False)
    return done.returncode == 0


def _copy_of_pgserver(bindir: Path, root: Path, owner: pwd.struct_passwd) -> Path:
    """pgserver's server copied into ``root`` for ``owner``, in its own layout (its binaries find
    their libraries at ``bin/../../../pgserver.libs``, PostgreSQL its share and lib folders beside
    ``bin``); the copy's bin folder."""
    install = bindir.parent
    copies = [
        (install, root / "pgserver" / "pginstall"),
        (install.parent.parent / "pgserver.libs", root / "pgserver.libs"),
    ]
    for source, copy in copies:
        if source.is_dir():
            shutil.copytree(source, copy, symlinks=True, ignore=shutil.ignore_patterns("include", "*.a"))
            # Its own, whatever the modes the installing umask left.
            for path in [copy.parent, copy, *copy.rglob("*")]:
                os.lchown(path, owner.pw_uid, owner.pw_gid)
    return copies[0][1] / "bin"


def start(durable: bool = False, bindir: Path | None = None) -> Server:
    """Create and start a server, or raise Unavailable with the reason. ``durable``: with the
    server's default durability (fsync, synchronous commits), as benchmarks need. ``bindir``: the
    binaries to start it from, :func:`find_bindir`'s by default."""
    bindir = bindir or find_bindir()
    if bindir is None:
        raise Unavailable("no server binaries (initdb, pg_ctl, postgres) on PATH or in /usr/lib/postgresql/*/bin")
    prefix = _as_server_user()
    if prefix:
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise Unavailable(f"running as root, and there is no {SERVER_USER} user to run the server as") from None
    root = Path(tempfile.mkdtemp(prefix="tokapg-", dir="/tmp"))
    if prefix and bindir == pgserver_bindir() and not _reachable(prefix, bindir):
        try:
            bindir = _copy_of_pgserver(bindir, root, owner)
        except OSError as error:
            shutil.rmtree(root, ignore_errors=True)
            raise Unavailable(f"copying pgserver's server for the {SERVER_USER} user failed: {error}") from None
    watchdog = _start_watchdog(root, bindir)
    data, log, port = root / "data", root / "server.log", _free_port()
    # fsync, synchronous_commit and full_page_writes off: a crash may lose or corrupt the data, which
    # is thrown away anyway. For tests only, never for a server whose data matters.
    options = [] if durable else ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
    options += [
        "-c listen_addresses=''",
        f"-c unix_socket_directories={shlex.quote(str(root))}",
        f"-c port={port}",
        "-c max_connections=300",
        f"-c cluster_name={CLUSTER_NAME}",
    ]
    initdb = [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", SERVER_USER, "--no-sync", "-E", "UTF8"]
    # -l: the server writes to the log, not to pg_ctl's output, whose pipes it would keep open.
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", " ".join(options)]
    try:
        if prefix:
            os.chown(root, owner.pw_uid, owner.pw_gid)
        # The C locale: the same collation everywhere, and no failure for a LANG that is not installed.
        _run("initdb", [*prefix, *initdb, "--locale=C"], root)
        _run("pg_ctl start", [*prefix, *pg_ctl, "start"], root, log)
    except BaseException:
        stop(Server("", root, bindir, watchdog))
        raise
    return Server(admin_url(root, port), root, bindir, watchdog, " ".join(options))


def control(server: Server, action: str) -> None:
    """``pg_ctl stop`` (fast: sessions are ended, as an operator's restart does), ``start`` or
    ``restart`` a server that :func:`start` made, for the tests of a server that goes away."""
    data, log = server.root / "data", server.root / "server.log"
    command = [str(server.bindir / "pg_ctl"), "-D", str(data), "-w", "-t", "60"]
    if action in ("stop", "restart"):
        command += ["-m", "fast"]
    if action in ("start", "restart"):
        command += ["-l", str(log), "-o", server.options]
    _run(f"pg_ctl {action}", [*_as_server_user(), *command, action], server.root, log)


def start_for_run() -> Server | None:
    """Start the run's server, unless TOKATEST_POSTGRES_URL names one, and put its URL there for the
    workers to inherit; when it cannot be started, put the reason in TOKATEST_POSTGRES_UNAVAILABLE."""
    os.environ.pop(UNAVAILABLE_VARIABLE, None)
    if os.environ.get(URL_VARIABLE):
        return None
    try:
        server = start()
    except Unavailable as error:
        os.environ[UNAVAILABLE_VARIABLE] = str(error)
        return None
    os.environ[URL_VARIABLE] = server.url
    return server


def stop_for_run(server: Server) -> None:
    os.environ.pop(URL_VARIABLE, None)
    stop(server)


def unavailable_reason() -> str:
    return os.environ.get(UNAVAILABLE_VARIABLE, "none was started for this run")


def remove(root: Path, bindir: Path) -> None:
    """Stop the server in ``root`` if it runs, without waiting for a checkpoint, and delete the folder."""
    if (root / "data" / "postmaster.pid").exists():
        subprocess.run(
            [*_as_server_user(), str(bindir / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate", "-w", "stop"],
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
    shutil.rmtree(root, ignore_errors=True)


def stop(server: Server) -> None:
    remove(server.root, server.bindir)
    if server.watchdog.stdin is not None:
        server.watchdog.stdin.close()
    server.watchdog.wait(timeout=120)


def _start_watchdog(root: Path, bindir: Path) -> subprocess.Popen[bytes]:
    """A process that removes the server once this one is gone: it waits for the end of a pipe that
    only this process holds open. A session of its own keeps a Ctrl-C in the terminal from it."""
    return subprocess.Popen(
        [sys.executable, __file__, str(root), str(bindir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=True,
    )


def _watch(root: Path, bindir: Path) -> None:
    sys.stdin.buffer.read()
    remove(root, bindir)


def with_dbname(url: str, dbname: str) -> str:
    """The same server and user as ``url`` (a URL or key=value conninfo), another database."""
    if "://" not in url:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(url, dbname=dbname)
    return urllib.parse.urlsplit(url)._replace(path="/" + urllib.parse.quote(dbname, safe="")).geturl()


def offers_pgvector(url: str) -> bool:
    """Whether the server at ``url`` has the pgvector extension to create."""
    import psycopg

    with psycopg.connect(url, connect_timeout=30) as conn:
        found = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    return found is not None


@contextmanager
def database(url: str) -> Iterator[str]:
    """A new, empty database on the server of the admin URL ``url``; dropped afterwards."""
    import psycopg
    from psycopg import sql

    # secrets, not random: pytest-randomly reseeds random for every test, in every worker alike.
    name = DATABASE_PREFIX + secrets.token_hex(8)
    with psycopg.connect(url, autocommit=True, connect_timeout=30) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_dbname(url, name)
    finally:
        with psycopg.connect(url, autocommit=True, connect_timeout=30) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    _watch(Path(sys.argv[1]), Path(sys.argv[2]))
