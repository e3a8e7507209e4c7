"""The one exception hierarchy of toka.

Every layer raises these; the daemon sends them over the wire as ``{code, message, hint}``,
the client raises them again from that code, and the CLI turns them into ``error: ...`` /
``hint: ...`` and an exit code in exactly one place. They live in the lowest layer so that
``store``, ``daemon`` and ``toka_cli`` can all raise and catch the same classes.
"""

from __future__ import annotations


class TokaError(Exception):
    """Base class: a message for people, an optional hint naming the fix, an exit code."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_wire(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "hint": self.hint}

    def lines(self) -> str:
        """As a person reads it on stderr: ``error: ...`` and, when there is one, ``hint: ...``."""
        return f"error: {self.message}\n" + (f"hint: {self.hint}\n" if self.hint else "")


class UsageError(TokaError):
    """The request or command line is malformed (bad JSON, wrong types, unknown op)."""

    code = "bad_request"
    exit_code = 2


class InvalidEvent(UsageError):
    """An event to append does not have the shape of an event."""

    code = "invalid_event"


class ConfigError(TokaError):
    code = "config"
    exit_code = 2


class UnsafePath(TokaError):
    """A directory or file toka keeps is not the user's own: another user owns it or can write
    it, or a link stands where toka's own file should be. Nothing is read from it or written to it."""

    code = "unsafe_path"
    exit_code = 2


class NotFound(TokaError):
    code = "not_found"
    exit_code = 3


class Ambiguous(TokaError):
    """An id prefix matches more than one thing."""

    code = "ambiguous"
    exit_code = 2


class DaemonUnavailable(TokaError):
    code = "daemon_unavailable"
    exit_code = 4


class DaemonNeedsRestart(TokaError):
    """A daemon answers, but it runs another toka version or protocol: `toka daemon restart`."""

    code = "daemon_needs_restart"
    exit_code = 1


class ProtocolError(TokaError):
    """The peer spoke something other than toka's protocol, or another version of it."""

    code = "protocol"
    exit_code = 4


class IntegrityError(TokaError):
    """The log does not match its own hashes."""

    code = "integrity"
    exit_code = 5


class StoreError(TokaError):
    """The database cannot be opened or written: corrupt, too new, read-only, full."""

    code = "store"
    exit_code = 1


class StoreUnavailable(StoreError):
    """The database server cannot be reached (PostgreSQL): the daemon reconnects on its own, and
    hooks spool what they record meanwhile."""

    code = "store_unavailable"
    exit_code = 4


class SchemaTooNew(StoreError):
    code = "schema_too_new"
    exit_code = 2


class DatabaseDamaged(StoreError):
    """The database file is damaged: SQLite found it corrupt, its own check failed, or the log no
    longer holds events it committed (store/damage.py). The daemon takes no more writes into it
    (reads go on) until `toka admin recover` has saved what it can into a new database."""

    code = "damaged"
    exit_code = 5


class Busy(TokaError):
    """The daemon is shutting down or overloaded; try again."""

    code = "busy"
    exit_code = 1


class Conflict(TokaError):
    """The request does not fit the current state: a lifecycle transition the agent's state
    does not allow, a write that expected another version."""

    code = "conflict"
    exit_code = 6


class ExportFailed(TokaError):
    """The collector an export was sent to could not be reached, or would not take it."""

    code = "export_failed"
    exit_code = 1


def _family(cls: type[TokaError]) -> list[type[TokaError]]:
    return [cls] + [sub for child in cls.__subclasses__() for sub in _family(child)]


# Every class above by its wire code; a code this toka does not know becomes a plain TokaError.
ERRORS_BY_CODE: dict[str, type[TokaError]] = {cls.code: cls for cls in _family(TokaError)}


def error_from_wire(error: dict[str, object]) -> TokaError:
    """Rebuild the exception a daemon reported, falling back to the base class."""
    cls = ERRORS_BY_CODE.get(str(error.get("code")), TokaError)
    hint = error.get("hint")
    return cls(str(error.get("message", "unknown error")), str(hint) if hint else None)
