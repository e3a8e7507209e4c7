"""Settings: typed sections, each setting documented and bounded where it is declared, and the
generic machinery that names, checks and shows them.

Precedence, highest first: a command-line flag, the environment (``TOKA_<NAME>``), the
``config.toml`` file, the defaults. The file groups keys in tables (``[store]``, ``[daemon]``,
``[watch]``); ``toka config show`` prints each resolved value with its source. A list setting is
a TOML array in the file, and ``os.pathsep``-separated in the environment and on the command line.
Every number has its bounds and every enumeration its choices, and :meth:`Sections.coerce` holds
each value to them; daemon/config_file.py reads the sources and resolves them.

A section is a frozen dataclass of :func:`~daemon.setting.setting` fields with its table's name
(``table``), declared by the component that reads it (daemon/lifecycle/settings.py); this module
declares only the daemon's own two, ``[store]`` and ``[daemon]``, and imports no component. A
:class:`Sections` is a set of them: daemon/sections.py holds every one (the daemon, `toka config`),
:data:`OWN_SECTIONS` the two the client reads itself (autostart's timeout, doctor's backend).
A component reads its section from the :class:`Settings` it is handed:
``settings[LifecycleSettings].warning_pct``.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, dataclass, fields
from typing import Any, ClassVar, TypeVar

from daemon import config_values as values
from daemon.setting import setting as _setting
from store.errors import ConfigError

S = TypeVar("S")


@dataclass(frozen=True)
class StoreSettings:
    table: ClassVar[str] = "store"

    durability: str = _setting(
        "normal",
        "normal: commit with synchronous=NORMAL (an OS crash may lose the last commits, never"
        " corrupt; on PostgreSQL the server's own synchronous_commit); full: fsync every commit",
        ("normal", "full"),
    )
    backend: str = _setting(
        "sqlite",
        "sqlite: the database file in the data dir; postgres: the shared database at store.url (docs/postgres.md);"
        " memory: nothing kept",
        ("sqlite", "postgres", "memory"),
    )
    url: str = _setting(
        "",
        "the PostgreSQL database of backend = postgres, e.g. postgresql://toka@db.internal/toka?sslmode=verify-full"
        " (keep the password in ~/.pgpass or PGPASSWORD; it is never shown)",
        env="TOKA_STORE_URL",
        secret=True,
    )
    signed_heads: bool = _setting(True, "keep a Merkle tree of the log and sign its head (docs/tamper-evidence.md)")
    head_interval_ms: int = _setting(
        1000, "milliseconds a signed head may lag behind the commits it covers", bounds=(10, 3_600_000)
    )
    witness_path: str = _setting("", "a file (on another disk) each signed head is appended to too; none when empty")
    witness_command: str = _setting("", "a command each signed head is piped to as JSON (git, a post); none when empty")


# Sizes in bytes, for the bounds below.
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
DAY_S = 86400.0


@dataclass(frozen=True)
class DaemonSettings:
    table: ClassVar[str] = "daemon"
    # Settings that must stay in order: the first at most the second.
    in_order: ClassVar[tuple[tuple[str, str], ...]] = (("max_line_bytes", "max_buffered_bytes"),)

    # At least 4 KiB: below, `status` and `shutdown` still fit, but a hook's payload no longer does.
    max_line_bytes: int = _setting(4 * MIB, "largest request line the daemon accepts, in bytes", bounds=(4 * KIB, GIB))
    shutdown_deadline: float = _setting(
        5.0, "seconds the daemon waits for in-flight requests when it stops", bounds=(0.1, 3600.0)
    )
    start_timeout: float = _setting(
        10.0, "seconds a client waits for an autostarted daemon to answer", bounds=(0.5, 600.0)
    )
    max_connections: int = _setting(
        512,
        "client connections the daemon holds at once; one more is answered `busy` and closed",
        bounds=(8, 65536),
    )
    max_buffered_bytes: int = _setting(
        64 * MIB,
        "bytes of unfinished request lines the daemon holds over all connections; a line past it is answered `busy`",
        bounds=(4 * KIB, 64 * GIB),
    )
    line_timeout: float = _setting(
        30.0,
        "seconds a client may leave a request line unfinished without sending more; then it is closed",
        bounds=(0.1, 3600.0),
    )


class Settings:
    """The resolved settings of a set of sections, each by its class:
    ``settings[LifecycleSettings].warning_pct``. A section it was not made with is a KeyError: a
    process reads the sections it loaded (the client's, :data:`OWN_SECTIONS`), never defaults in
    their place."""

    def __init__(self, *sections: Any) -> None:
        self._sections: dict[type[Any], Any] = {type(section): section for section in sections}

    def __getitem__(self, kind: type[S]) -> S:
        found = self._sections.get(kind)
        if not isinstance(found, kind):
            raise KeyError(f"these settings hold no [{getattr(kind, 'table', kind.__name__)}]")
        return found

    def value(self, name: str) -> Any:
        """A setting by its name (``durability``), wherever its section."""
        for section in self._sections.values():
            if name in {f.name for f in fields(section)}:
                return getattr(section, name)
        raise KeyError(name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and self._sections == other._sections

    def __repr__(self) -> str:
        return f"Settings({', '.join(map(repr, self._sections.values()))})"


class Sections:
    """A set of sections, by name: what config.toml may hold of them, and each setting named,
    checked and shown. ``whole``: these are all there are, so a table or key that is none of
    them is an error (the daemon, `toka config`); else what is not theirs is left to the daemon,
    which reads them all (the client). ``other_tables``: tables that are not settings, each read
    by its own module."""

    def __init__(self, *kinds: type[Any], other_tables: tuple[str, ...] = (), whole: bool = True) -> None:
        self.kinds = kinds
        self.by_table: dict[str, type[Any]] = {kind.table: kind for kind in kinds}
        # Every setting by name (names are unique across sections, so `toka config get durability`
        # needs no section), and the section each belongs to.
        self.by_name: dict[str, Field[Any]] = {f.name: f for kind in kinds for f in fields(kind)}
        self.section_of = {f.name: kind.table for kind in kinds for f in fields(kind)}
        # Settings that must stay in order: the first below the second (or, for sizes, at most it).
        self.in_order: tuple[tuple[str, str], ...] = tuple(
            pair for kind in kinds for pair in getattr(kind, "in_order", ())
        )
        # Tables that only hold tables of settings: ``[export.otlp]`` parses as {"export": {"otlp": {...}}}.
        self.parent_tables = {table.split(".")[0] for table in self.by_table if "." in table}
        self.other_tables = other_tables
        self.whole = whole
        assert len(self.by_name) == sum(len(fields(kind)) for kind in kinds), "setting names must be unique"
        assert all(f.metadata["bounds"] for f in self.by_name.values() if type(f.default) in (int, float)), (
            "every number needs its bounds"
        )

    def defaults(self) -> Settings:
        return Settings(*(kind() for kind in self.kinds))

    def key_of(self, name: str) -> str:
        return f"{self.section_of[name]}.{name}"

    def env_name(self, name: str) -> str:
        return self.by_name[name].metadata["env"] or f"TOKA_{name.upper()}"

    def lookup(self, key: str) -> str:
        """The setting name for a key given as ``store.durability`` or ``durability``."""
        name = key.rsplit(".", 1)[-1]
        if name not in self.by_name or key not in (name, self.key_of(name)):
            raise ConfigError(f"unknown setting {key!r}{self.suggestion(key)}", "`toka config show` lists them all")
        return name

    def suggestion(self, key: str) -> str:
        """`` (did you mean store.durability?)`` for a key that is not one, where one is close."""
        name = key.rsplit(".", 1)[-1]
        if name in self.by_name:  # the right name in the wrong table
            return f" (did you mean {self.key_of(name)}?)"
        keys = [self.key_of(n) for n in self.by_name]
        return values.did_you_mean(key, keys) or values.did_you_mean(name, self.by_name)

    def allowed(self, name: str) -> str:
        """What setting ``name`` may be, for people: ``4096 to 1073741824``, ``normal, full``."""
        spec = self.by_name[name].metadata
        default = self.by_name[name].default
        kind = type(default) if default is not MISSING else dict
        if spec["shape"]:
            return str(spec["shape"])
        if spec["bounds"]:
            low, high = spec["bounds"]
            return f"{values.shown_number(low)} to {values.shown_number(high)}"
        if kind is tuple:
            return "a list" + (f" of {', '.join(spec['choices'])}" if spec["choices"] else " of paths")
        if spec["choices"]:
            return ", ".join(spec["choices"])
        if kind is bool:
            return "true, false"
        if kind is dict:
            low, high = values.WINDOW_BOUNDS
            return "a table by model" + ("" if spec["parse"] else f" of token counts from {low} to {high}")
        return "text"

    def coerce(self, name: str, value: Any, source: str) -> Any:
        """Check and convert one value for setting ``name``; ``source`` names where it came from."""
        spec = self.by_name[name]
        key = self.key_of(name)
        if spec.metadata["parse"] is not None:
            return spec.metadata["parse"](key, value, source)
        kind: type = type(spec.default) if spec.default is not MISSING else dict
        if kind is tuple:
            return values.string_list(key, value, source, spec.metadata["choices"])
        if kind is dict:
            return values.token_table(key, value, source)
        if kind is bool:
            return values.boolean(key, value, source)
        if kind in (int, float):
            assert isinstance(spec.default, (int, float))
            return values.number(key, value, source, kind, spec.metadata["bounds"], spec.default)
        if spec.metadata["choices"]:
            return values.choice(key, value, source, spec.metadata["choices"])
        if not isinstance(value, str):
            raise ConfigError(f"{key} from {source} must be text, got {value!r}")
        return value

    def shown(self, name: str, value: Any) -> Any:
        """A setting's value as it may be printed: a secret one with its password hidden."""
        secret = self.by_name[name].metadata["secret"]
        if secret == "whole" and isinstance(value, dict):
            return {key: "********" for key in value}
        if secret and isinstance(value, str):
            if secret == "whole":
                return "********" if value else value
            from store.url import redacted

            return redacted(value)
        return value


# The daemon's own sections: all the client's process reads (the time autostart waits, the
# backend doctor and recovery look at), without loading a component. The daemon reads them all.
OWN_SECTIONS = Sections(StoreSettings, DaemonSettings, whole=False)
