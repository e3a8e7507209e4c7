"""`toka doctor`'s database checks on the PostgreSQL backend: the connection, the server's version,
the schema steps and the role's rights, from the facts of ``doctor.database``
(store/postgres/health.py), which the daemon reads, or the client when no daemon runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toka_cli.doctor_check import Check, newest_event

if TYPE_CHECKING:
    from daemon.contract.results import PostgresHealth

# Below this server version (PostgreSQL 13) toka is not tried; it is tested on 15.
OLDEST_SERVER = 130000
UPGRADE = "pip install -U 'toka[postgres]'"


def postgres_checks(health: PostgresHealth) -> list[Check]:
    """The checks ``database``, ``server``, ``schema``, ``privileges`` and ``clock``."""
    where = health["location"]
    error = health["error"]
    if error is not None:
        skipped = "not checked: the database cannot be reached" if not health["reachable"] else "not checked"
        return [
            _unreachable(health, error),
            *(Check(name, "ok", skipped) for name in ("server", "schema", "privileges", "clock")),
        ]
    return [_database(health, where), _server(health), _schema(health), _privileges(health), _clock(health)]


def _unreachable(health: PostgresHealth, error: str) -> Check:
    where = health["location"]
    if error.startswith("psycopg is not installed"):
        return Check("database", "problem", f"{where}: {error}", "pip install 'toka[postgres]'")
    if error.startswith("no database URL"):
        return Check("database", "problem", error, "toka config set store.url postgresql://USER@HOST/DATABASE")
    if health["reachable"]:
        return Check("database", "problem", f"{where}: {error}", "check the role's rights on the database")
    return Check(
        "database",
        "problem",
        f"{where} cannot be reached: {error}",
        "check that the server runs, and store.url (toka config get store.url)",
    )


def _database(health: PostgresHealth, where: str) -> Check:
    detail = f"{where}: connected as {health['user']} to database {health['database']}"
    others = health["other_tables"]
    if not health["toka_database"] and others:
        return Check(
            "database",
            "problem",
            f"{detail}, which holds other tables ({', '.join(others[:5])}) and is not a toka database",
            "point store.url at an empty database or one that toka set up",
        )
    return Check("database", "ok", detail)


def _server(health: PostgresHealth) -> Check:
    version, number = health["server_version"], health["server_version_num"] or 0
    if number < OLDEST_SERVER:
        return Check(
            "server",
            "warning",
            f"PostgreSQL {version} is older than 13, the oldest toka is meant for (it is tested on 15)",
            "upgrade the server to PostgreSQL 13 or later",
        )
    return Check("server", "ok", f"PostgreSQL {version}")


def _schema(health: PostgresHealth) -> Check:
    applied, unknown, pending = health["schema_applied"], health["schema_unknown"], health["schema_pending"]
    steps = len(health["schema_steps"])
    if applied is None or unknown is None or pending is None:
        return Check("schema", "warning", "not checked: the role may not read toka_migrations (see privileges)")
    if unknown:
        return Check(
            "schema",
            "problem",
            f"the database was written by a newer toka: it records schema steps this one does not know"
            f" ({', '.join(unknown)})",
            UPGRADE,
        )
    if not health["toka_database"]:
        return Check("schema", "ok", "no toka schema yet; the daemon sets it up when it starts")
    if pending:
        return Check(
            "schema",
            "warning",
            f"{len(applied)} of this toka's {steps} schema steps applied; the daemon applies the rest"
            f" ({', '.join(pending)}) when it starts",
            "toka daemon restart",
        )
    return Check("schema", "ok", f"{steps} schema steps applied, this toka's")


def _privileges(health: PostgresHealth) -> Check:
    user, missing = health["user"], health["missing"]
    if missing:
        lacking = "; ".join(f"{', '.join(m['privileges'])} on {m['type']} {m['name']}" for m in missing)
        return Check(
            "privileges",
            "problem",
            f"the role {user} lacks {lacking}",
            "as the database's owner: " + "; ".join(m["grant"] for m in missing),
        )
    return Check("privileges", "ok", f"the role {user} has the rights toka needs")


def _clock(health: PostgresHealth) -> Check:
    return newest_event(health["newest"], health["newest_ts"])
