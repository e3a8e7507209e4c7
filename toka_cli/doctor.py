"""The checks behind `toka doctor`: each looks at one thing, says what it found, and names the
command that fixes it.

A check never changes anything: the daemon is probed, not started; the database facts come from
the daemon, or from the client reading the database read-only when no daemon runs (SQLite's
``quick_check`` reads every page, which is what a diagnostic of the file should do; a PostgreSQL
database is checked by toka_cli/doctor_postgres.py); config.toml is parsed, not rewritten.
``problem`` means something does not work or will not; ``warning`` means it works but may not for
long, or needs a look.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from daemon.client.doctor import clock_offset_us, database_health
from daemon.client.sync import probe
from daemon.config import Settings
from daemon.config_file import load_settings, read_file
from daemon.ingest.settings import WatchSettings
from daemon.otel.settings import OtelSettings
from daemon.paths import Paths
from daemon.sections import SECTIONS
from store.errors import ConfigError, TokaError, UnsafePath
from toka_cli.doctor_check import CLOCK_SKEW_US, Check, newest_event
from toka_cli.doctor_export import export_check
from toka_cli.doctor_integrations import integration_checks
from toka_cli.doctor_postgres import postgres_checks
from toka_cli.doctor_prices import prices_check
from toka_cli.doctor_recall import recall_check
from toka_cli.doctor_status import status_checks

if TYPE_CHECKING:
    from daemon.contract.results import DatabaseHealth, PostgresHealth

# Below either, the data dir is short of space: SQLite needs room for the WAL and checkpoints,
# and a full disk refuses appends.
LOW_DISK_BYTES = 1 << 30
LOW_DISK_FRACTION = 0.05
# The fix of a damaged database: what can be read goes into a new one, the damaged file is kept.
RECOVER = "toka admin recover"


def run_checks(paths: Paths, cwd: Path | None = None) -> list[Check]:
    """Every check, in the order they are shown. ``cwd`` is where project hooks are looked for."""
    settings = _settings(paths)
    checks = [
        _daemon(paths),
        _socket(paths),
        _files(paths),
        *_database(paths),
        _disk(paths),
        _config(paths),
        _watched_paths(settings),
        *integration_checks(cwd or Path.cwd()),
        _daemon_clock(paths),
        export_check(paths),
        recall_check(paths),
        prices_check(paths),
        *status_checks(paths, settings[OtelSettings].listen if settings is not None else ""),
    ]
    return checks


def problems(checks: list[Check]) -> list[Check]:
    return [check for check in checks if check.status == "problem"]


def _settings(paths: Paths) -> Settings | None:
    try:
        return load_settings(SECTIONS, paths.config_file).settings
    except TokaError:  # a bad config, or one that is not the user's: the config check says which
        return None


def _daemon(paths: Paths) -> Check:
    try:
        state = probe(paths)
    except UnsafePath as exc:  # its directory, or the process behind the socket, is not the user's
        return Check("daemon", "problem", exc.message, exc.hint)
    if state.state == "running":
        return Check("daemon", "ok", f"running, {state.detail}")
    if state.state == "needs_restart":
        return Check("daemon", "problem", state.detail, "toka daemon restart")
    if not paths.socket.exists():
        return Check("daemon", "warning", "not running; the next toka command starts it", "toka daemon start")
    return Check("daemon", "problem", state.detail, "toka daemon restart")


def _socket(paths: Paths) -> Check:
    found = []
    for path, wanted in ((paths.runtime_dir, 0o700), (paths.socket, 0o600)):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode != wanted:
            found.append(f"{path} is {mode:04o}, not {wanted:04o}")
        if info.st_uid != os.getuid():
            found.append(f"{path} belongs to uid {info.st_uid}, not to you ({os.getuid()})")
    if found:
        return Check("socket", "problem", "; ".join(found), f"chmod 0700 {paths.runtime_dir} && toka daemon restart")
    if not paths.socket.exists():
        return Check("socket", "ok", f"no socket yet at {paths.socket}")
    return Check("socket", "ok", f"{paths.socket} is 0600 in a 0700 directory")


def _files(paths: Paths) -> Check:
    """toka's directories and files are the user's own (daemon/ownership.py): refused ones are a problem,
    ones looser than 0700/0600 a warning (toka tightens them when it next opens them)."""
    refused, loose = paths.unsafe()
    if refused:
        return Check("files", "problem", "; ".join(exc.message for exc in refused), refused[0].hint)
    if loose:
        return Check("files", "warning", "; ".join(loose), "chmod 700 on directories, 600 on files")
    return Check("files", "ok", "toka's directories and files are yours, 0700 and 0600")


def _database(paths: Paths) -> list[Check]:
    found = database_health(paths)
    if found["backend"] == "postgres":
        return postgres_checks(cast("PostgresHealth", found))
    health = cast("DatabaseHealth", found)
    path = Path(health["path"])
    if not health["exists"]:
        return [
            Check("database", "ok", f"no database yet at {path}; the daemon creates it"),
            Check("schema", "ok", "no database yet"),
            Check("clock", "ok", "no events yet"),
        ]
    if health["unreadable"] is not None:
        return [
            Check("database", "problem", health["unreadable"], RECOVER),
            Check("schema", "ok", "not checked: the database cannot be read"),
            Check("clock", "ok", "not checked: the database cannot be read"),
        ]
    return [_integrity(health, path), _schema(health), _newest_event(health)]


def _integrity(health: DatabaseHealth, path: Path) -> Check:
    found = health["quick_check"]
    if found != ["ok"]:
        return Check("database", "problem", f"{path} fails SQLite's quick_check: {'; '.join(found[:3])}", RECOVER)
    if health["tip_problem"] is not None:
        return Check("database", "problem", f"{path} lost committed events: {health['tip_problem']}", RECOVER)
    if health["damaged"] is not None:
        damaged = health["damaged"]
        detail = f"{path} was found damaged on {damaged['since']} ({damaged['reason']}); it takes no writes"
        return Check("database", "problem", detail, RECOVER)
    return Check("database", "ok", f"{path} passes SQLite's quick_check ({health['size_bytes'] / 1e6:.1f} MB)")


def _schema(health: DatabaseHealth) -> Check:
    version, current = health["schema_version"], health["schema_current"]
    if version == current:
        return Check("schema", "ok", f"schema version {version}, this toka's")
    if version is not None and version < current:
        return Check(
            "schema",
            "warning",
            f"schema version {version}; this toka upgrades it to {current} when the daemon starts",
            "toka daemon restart",
        )
    return Check(
        "schema",
        "problem",
        f"schema version {version} was written by a newer toka (this one knows {current})",
        "pip install -U toka",
    )


def _newest_event(health: DatabaseHealth) -> Check:
    if not health["events_table"]:
        return Check("clock", "ok", "no events table yet")
    return newest_event(health["newest"], health["newest_ts"])


def _daemon_clock(paths: Paths) -> Check:
    if not paths.socket.exists():
        return Check("daemon_clock", "ok", "the daemon is not running")
    try:
        offset = clock_offset_us(paths)
    except TokaError as exc:
        return Check("daemon_clock", "ok", f"not compared: {exc.message}")
    if abs(offset) > CLOCK_SKEW_US:
        return Check(
            "daemon_clock",
            "problem",
            f"the daemon's clock is {offset / 1e6:+.0f} s from this one",
            "timedatectl set-ntp true && toka daemon restart",
        )
    return Check("daemon_clock", "ok", f"the daemon's clock agrees with this one ({offset / 1e3:+.0f} ms)")


def _existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _disk(paths: Paths) -> Check:
    where = _existing_parent(paths.data_dir)
    usage = shutil.disk_usage(where)
    free_gib = usage.free / (1 << 30)
    share = usage.free / usage.total if usage.total else 0.0
    detail = f"{free_gib:.1f} GiB free ({share:.0%}) in {where}"
    if usage.free < LOW_DISK_BYTES or share < LOW_DISK_FRACTION:
        return Check("disk", "warning", f"only {detail}; appends fail when it is full", f"du -sh {where}/* | sort -h")
    return Check("disk", "ok", detail)


def _config(paths: Paths) -> Check:
    path = paths.config_file
    try:
        in_file = read_file(SECTIONS, path)
    except UnsafePath as exc:
        return Check("config", "problem", exc.message, exc.hint)
    except ConfigError as exc:
        return Check("config", "problem", exc.message, f"$EDITOR {path}")
    layers: list[tuple[dict[str, Any], Callable[[str], str], Callable[[str], str]]] = [
        (in_file, lambda name: str(path), lambda name: f"toka config set {SECTIONS.key_of(name)} VALUE"),
        (
            {name: os.environ[env] for name in SECTIONS.by_name if (env := SECTIONS.env_name(name)) in os.environ},
            lambda name: f"env {SECTIONS.env_name(name)}",
            lambda name: f"unset {SECTIONS.env_name(name)}",
        ),
    ]
    for values, source, fix in layers:
        for name, value in values.items():
            try:
                SECTIONS.coerce(name, value, source(name))
            except ConfigError as exc:
                return Check("config", "problem", exc.message, fix(name))
    try:
        load_settings(SECTIONS, path)  # the settings together: thresholds in order
    except ConfigError as exc:
        return Check("config", "problem", exc.message, exc.hint)
    where = str(path) if path.exists() else f"defaults (no {path})"
    return Check("config", "ok", f"settings parse: {where}")


def _watched_paths(settings: Settings | None) -> Check:
    if settings is None:
        return Check("watch", "ok", "not checked: the config does not parse")
    if not settings[WatchSettings].paths:
        return Check("watch", "ok", "no watched paths (watch.paths)")
    missing = [path for path in settings[WatchSettings].paths if not Path(path).expanduser().exists()]
    if missing:
        kept = os.pathsep.join(path for path in settings[WatchSettings].paths if path not in missing)
        fix = f"mkdir -p {' '.join(missing)}, or toka config set watch.paths '{kept}'"
        return Check("watch", "problem", f"watched paths missing: {', '.join(missing)}", fix)
    return Check("watch", "ok", f"{len(settings[WatchSettings].paths)} watched path(s) exist")
