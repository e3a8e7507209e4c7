"""Settings: one typed model, each setting documented and bounded where it is declared.

Precedence, highest first: a command-line flag, the environment (``TOKA_<NAME>``), the
``config.toml`` file, the defaults below. The file groups keys in tables (``[store]``,
``[daemon]``, ``[watch]``); ``toka config show`` prints each resolved value with its source. A
list setting is a TOML array in the file, and ``os.pathsep``-separated in the environment and
on the command line. Every number has its bounds and every enumeration its choices, and
:func:`coerce` holds each value to them; daemon/config_file.py reads the sources and resolves them.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from daemon import config_values as values
from daemon.contract.policies import AUTO_COMPRESS_OFF, CompressionPolicy, OnCritical, choices_of
from daemon.cost.overrides import parse_prices
from daemon.export.settings import OtlpExportSettings
from daemon.otel.settings import OtelSettings
from daemon.redact import KINDS as REDACT_KINDS
from daemon.setting import setting as _setting
from store.errors import ConfigError

# The memory pool's defaults (daemon/memory/pool.py): room for the working notes of many agents, small
# next to the machine; expired entries linger at most the sweep interval before they are dropped.
DEFAULT_CAPACITY = 64 * 1024 * 1024
DEFAULT_SWEEP_S = 5.0


@dataclass(frozen=True)
class StoreSettings:
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


@dataclass(frozen=True)
class LifecycleSettings:
    warning_pct: float = _setting(
        75.0, "context fill (% of the window) at which an agent goes WARNING", bounds=(1.0, 100.0)
    )
    critical_pct: float = _setting(
        90.0, "context fill (% of the window) at which an agent goes CRITICAL", bounds=(1.0, 100.0)
    )
    on_critical: str = _setting(
        "notify",
        "what the daemon does when a spawned agent goes CRITICAL: notify (a lifecycle event only) or handoff"
        " (hand its work to a successor); per agent with `toka agent spawn --policy`",
        choices_of(OnCritical),
    )
    max_handoffs: int = _setting(
        5, "handoffs allowed per trace; the next one puts the agent in ERROR", bounds=(1, 1000)
    )


@dataclass(frozen=True)
class HandoffSettings:
    save_markdown: bool = _setting(
        False, "also write each handoff's markdown to handoffs/<trace>/<id>.md in the data dir"
    )


@dataclass(frozen=True)
class CompressionSettings:
    policy: str = _setting(
        "summarize",
        "how `toka compress` and automatic compression shrink a session: fifo, window, summarize or importance",
        choices_of(CompressionPolicy),
    )
    trigger_pct: float = _setting(
        75.0, "context fill (% of the window) from which compression is considered", bounds=(1.0, 100.0)
    )
    target_pct: float = _setting(37.5, "context fill (% of the window) compression aims at", bounds=(1.0, 99.0))
    min_messages: int = _setting(20, "new messages a session needs since its last compression", bounds=(1, 1_000_000))
    min_interval_s: float = _setting(
        1800.0, "seconds between two compressions of a session", bounds=(0.001, 30 * DAY_S)
    )
    auto_compress: str = _setting(
        "off",
        "compress a spawned agent's session by itself at the trigger (off, or a policy); per agent with"
        " `toka agent spawn --auto-compress`",
        (AUTO_COMPRESS_OFF, *choices_of(CompressionPolicy)),
    )
    summarizer: str = _setting(
        "builtin",
        "builtin (extractive, offline), or a command that reads the text on stdin and writes the summary on stdout",
    )
    summarizer_timeout: float = _setting(30.0, "seconds an external summarizer may take", bounds=(0.1, 3600.0))


@dataclass(frozen=True)
class RedactionSettings:
    kinds: tuple[str, ...] = _setting(
        REDACT_KINDS,
        "what is redacted from text handed on (summaries, handoffs, external summarizers, toka context)",
        REDACT_KINDS,
        env="TOKA_REDACT",
    )


@dataclass(frozen=True)
class ModelSettings:
    windows: dict[str, int] = _setting(
        {},
        'context windows by model name prefix, over the model table (e.g. {"my-model" = 32000})',
        env="TOKA_MODEL_WINDOWS",
    )
    prices: dict[str, dict[str, Any]] = _setting(
        {},
        "USD per million tokens by model name prefix, over the price table (docs/cost.md), e.g."
        ' {"my-model" = { input = 3.0, output = 15.0 }}',
        env="TOKA_MODEL_PRICES",
        parse=parse_prices,
    )


@dataclass(frozen=True)
class PoolSettings:
    capacity_bytes: int = _setting(
        DEFAULT_CAPACITY,
        "bytes the memory pool holds (values only); puts past it evict the least recently used entries",
        env="TOKA_POOL_CAPACITY_BYTES",
        bounds=(1, 1024 * GIB),
    )
    sweep_s: float = _setting(
        DEFAULT_SWEEP_S,
        "seconds between two sweeps of expired pool entries",
        env="TOKA_POOL_SWEEP_S",
        bounds=(0.01, DAY_S),
    )


@dataclass(frozen=True)
class WatchSettings:
    paths: tuple[str, ...] = _setting(
        (),
        "transcript files and folders the daemon ingests as they are written (as `toka watch` does)",
        env="TOKA_WATCH_PATHS",
    )


@dataclass(frozen=True)
class AlertSettings:
    command: str = _setting(
        "",
        "a command run with each alert as JSON on stdin (a notification, a webhook script); none when empty",
        env="TOKA_ALERT_COMMAND",
    )
    command_interval_s: float = _setting(
        60.0, "seconds before the command runs again for the same alert", bounds=(0.001, 7 * DAY_S)
    )
    command_timeout_s: float = _setting(
        10.0, "seconds the alert command may run before it is stopped", bounds=(0.1, 3600.0)
    )
    max_age_s: float = _setting(
        3600.0,
        "seconds after which an agent's change is history, not an alert (an import of past sessions raises none)",
        bounds=(1.0, 365 * DAY_S),
    )
    block_cost_limit: float = _setting(
        0.0, "dollars a 5-hour block may cost before an alert (0: none)", bounds=(0.0, 1e9)
    )
    block_token_limit: int = _setting(0, "tokens a 5-hour block may use before an alert (0: none)", bounds=(0, 10**15))


# The sections of config.toml, each a table of its settings, in the order `toka config show` lists them.
SECTIONS: dict[str, type] = {
    "store": StoreSettings,
    "daemon": DaemonSettings,
    "lifecycle": LifecycleSettings,
    "handoff": HandoffSettings,
    "compression": CompressionSettings,
    "redaction": RedactionSettings,
    "models": ModelSettings,
    "pool": PoolSettings,
    "watch": WatchSettings,
    "alerts": AlertSettings,
    "otel": OtelSettings,
    "export.otlp": OtlpExportSettings,
}


@dataclass(frozen=True)
class Settings:
    """Every setting, by section: ``settings.store.durability``, ``settings.watch.paths``."""

    store: StoreSettings = field(default_factory=StoreSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    handoff: HandoffSettings = field(default_factory=HandoffSettings)
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    pool: PoolSettings = field(default_factory=PoolSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    alerts: AlertSettings = field(default_factory=AlertSettings)
    otel: OtelSettings = field(default_factory=OtelSettings)
    export_otlp: OtlpExportSettings = field(default_factory=OtlpExportSettings)  # [export.otlp]

    def value(self, name: str) -> Any:
        """A setting by its name (``durability``), wherever its section."""
        return getattr(getattr(self, attribute_of(SECTION_OF[name])), name)


def attribute_of(section: str) -> str:
    """The field of :class:`Settings` that holds a section: ``export_otlp`` for ``[export.otlp]``."""
    return section.replace(".", "_")


# Every setting by name (names are unique across sections, so `toka config get durability`
# needs no section), and the section each belongs to.
SETTINGS = {f.name: f for section in SECTIONS.values() for f in fields(section)}
SECTION_OF = {f.name: name for name, section in SECTIONS.items() for f in fields(section)}
assert len(SETTINGS) == sum(len(fields(section)) for section in SECTIONS.values()), "setting names must be unique"
assert all(f.metadata["bounds"] for f in SETTINGS.values() if type(f.default) in (int, float)), (
    "every number needs its bounds"
)


def key_of(name: str) -> str:
    return f"{SECTION_OF[name]}.{name}"


def env_name(name: str) -> str:
    return SETTINGS[name].metadata["env"] or f"TOKA_{name.upper()}"


def lookup(key: str) -> str:
    """The setting name for a key given as ``store.durability`` or ``durability``."""
    name = key.rsplit(".", 1)[-1]
    if name not in SETTINGS or key not in (name, key_of(name)):
        raise ConfigError(f"unknown setting {key!r}{suggestion(key)}", "`toka config show` lists them all")
    return name


def suggestion(key: str) -> str:
    """`` (did you mean store.durability?)`` for a key that is not one, where one is close."""
    name = key.rsplit(".", 1)[-1]
    if name in SETTINGS:  # the right name in the wrong table
        return f" (did you mean {key_of(name)}?)"
    keys = [key_of(n) for n in SETTINGS]
    return values.did_you_mean(key, keys) or values.did_you_mean(name, SETTINGS)


def allowed(name: str) -> str:
    """What setting ``name`` may be, for people: ``4096 to 1073741824``, ``normal, full``."""
    spec = SETTINGS[name].metadata
    kind = type(SETTINGS[name].default) if SETTINGS[name].default is not MISSING else dict
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


def coerce(name: str, value: Any, source: str) -> Any:
    """Check and convert one value for setting ``name``; ``source`` names where it came from."""
    spec = SETTINGS[name]
    key = key_of(name)
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


def shown(name: str, value: Any) -> Any:
    """A setting's value as it may be printed: a secret one with its password hidden."""
    if SETTINGS[name].metadata["secret"] == "whole" and isinstance(value, dict):
        return {key: "********" for key in value}
    if SETTINGS[name].metadata["secret"] and isinstance(value, str):
        if SETTINGS[name].metadata["secret"] == "whole":
            return "********" if value else value
        from store.url import redacted

        return redacted(value)
    return value
