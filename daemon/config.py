"""Settings: one typed model, one precedence order, and where each value came from.

Precedence, highest first: a command-line flag, the environment (``TOKA_<NAME>``), the
``config.toml`` file, the defaults below. The file groups keys in tables (``[store]``,
``[daemon]``, ``[watch]``); ``toka config show`` prints each resolved value with its source. A
list setting is a TOML array in the file, and ``os.pathsep``-separated in the environment and
on the command line.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from daemon.agents.policies import ON_CRITICAL
from daemon.compress.model import POLICIES as COMPRESSION_POLICIES
from daemon.cost.overrides import parse_prices
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


@dataclass(frozen=True)
class DaemonSettings:
    max_line_bytes: int = _setting(4 * 1024 * 1024, "largest request line the daemon accepts, in bytes")
    shutdown_deadline: float = _setting(5.0, "seconds the daemon waits for in-flight requests when it stops")
    start_timeout: float = _setting(10.0, "seconds a client waits for an autostarted daemon to answer")


@dataclass(frozen=True)
class LifecycleSettings:
    warning_pct: float = _setting(75.0, "context fill (% of the window) at which an agent goes WARNING")
    critical_pct: float = _setting(90.0, "context fill (% of the window) at which an agent goes CRITICAL")
    on_critical: str = _setting(
        "notify",
        "what the daemon does when a spawned agent goes CRITICAL: notify (a lifecycle event only) or handoff"
        " (hand its work to a successor); per agent with `toka agent spawn --policy`",
        ON_CRITICAL,
    )
    max_handoffs: int = _setting(5, "handoffs allowed per trace; the next one puts the agent in ERROR")


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
        COMPRESSION_POLICIES,
    )
    trigger_pct: float = _setting(75.0, "context fill (% of the window) from which compression is considered")
    target_pct: float = _setting(37.5, "context fill (% of the window) compression aims at")
    min_messages: int = _setting(20, "new messages a session needs since its last compression")
    min_interval_s: float = _setting(1800.0, "seconds between two compressions of a session")
    auto_compress: str = _setting(
        "off",
        "compress a spawned agent's session by itself at the trigger (off, or a policy); per agent with"
        " `toka agent spawn --auto-compress`",
        ("off", *COMPRESSION_POLICIES),
    )
    summarizer: str = _setting(
        "builtin",
        "builtin (extractive, offline), or a command that reads the text on stdin and writes the summary on stdout",
    )
    summarizer_timeout: float = _setting(30.0, "seconds an external summarizer may take")


@dataclass(frozen=True)
class RedactionSettings:
    kinds: tuple[str, ...] = _setting(
        REDACT_KINDS,
        "what is redacted from text that leaves the process (summaries, handoffs, external summarizers)",
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
    )
    sweep_s: float = _setting(
        DEFAULT_SWEEP_S, "seconds between two sweeps of expired pool entries", env="TOKA_POOL_SWEEP_S"
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
    command_interval_s: float = _setting(60.0, "seconds before the command runs again for the same alert")
    command_timeout_s: float = _setting(10.0, "seconds the alert command may run before it is stopped")
    block_cost_limit: float = _setting(0.0, "dollars a 5-hour block may cost before an alert (0: none)", zero=True)
    block_token_limit: int = _setting(0, "tokens a 5-hour block may use before an alert (0: none)", zero=True)


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

    def value(self, name: str) -> Any:
        """A setting by its name (``durability``), wherever its section."""
        return getattr(getattr(self, SECTION_OF[name]), name)


# Every setting by name (names are unique across sections, so `toka config get durability`
# needs no section), and the section each belongs to.
SETTINGS = {f.name: f for section in SECTIONS.values() for f in fields(section)}
SECTION_OF = {f.name: name for name, section in SECTIONS.items() for f in fields(section)}
assert len(SETTINGS) == sum(len(fields(section)) for section in SECTIONS.values()), "setting names must be unique"


def key_of(name: str) -> str:
    return f"{SECTION_OF[name]}.{name}"


def env_name(name: str) -> str:
    return SETTINGS[name].metadata["env"] or f"TOKA_{name.upper()}"


def lookup(key: str) -> str:
    """The setting name for a key given as ``store.durability`` or ``durability``."""
    name = key.rsplit(".", 1)[-1]
    if name not in SETTINGS or key not in (name, key_of(name)):
        known = ", ".join(key_of(n) for n in SETTINGS)
        raise ConfigError(f"unknown setting {key!r}", f"known settings: {known}")
    return name


def coerce(name: str, value: Any, source: str) -> Any:
    """Check and convert one value for setting ``name``; ``source`` names where it came from."""
    spec = SETTINGS[name]
    if spec.metadata["parse"] is not None:
        return spec.metadata["parse"](key_of(name), value, source)
    kind: type = type(spec.default) if spec.default is not MISSING else dict
    if kind is tuple:
        items = _coerce_list(name, value, source)
        unknown = [item for item in items if spec.metadata["choices"] and item not in spec.metadata["choices"]]
        if unknown:
            known = ", ".join(spec.metadata["choices"])
            raise ConfigError(f"{key_of(name)} from {source}: unknown {', '.join(unknown)}", f"known: {known}")
        return items
    if kind is dict:
        return _coerce_windows(name, value, source)
    if kind is bool:
        return _coerce_bool(name, value, source)
    try:
        if isinstance(value, str) and kind is not str:
            value = kind(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError
    except (TypeError, ValueError):
        raise ConfigError(f"{key_of(name)} from {source} must be {kind.__name__}, got {value!r}") from None
    choices = spec.metadata["choices"]
    if choices and value not in choices:
        raise ConfigError(f"{key_of(name)} from {source} must be one of {', '.join(choices)}, got {value!r}")
    if isinstance(value, (int, float)) and (value < 0 if spec.metadata["zero"] else value <= 0):
        wanted = "0 or more" if spec.metadata["zero"] else "positive"
        raise ConfigError(f"{key_of(name)} from {source} must be {wanted}, got {value!r}")
    return value


_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def _coerce_bool(name: str, value: Any, source: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    raise ConfigError(f"{key_of(name)} from {source} must be true or false, got {value!r}")


def _coerce_list(name: str, value: Any, source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part for part in value.split(os.pathsep) if part)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ConfigError(
        f"{key_of(name)} from {source} must be a list of strings, got {value!r}",
        f'in config.toml: [{SECTION_OF[name]}] {name} = ["~/.claude/projects"]',
    )


def _coerce_windows(name: str, value: Any, source: str) -> dict[str, int]:
    """A table of positive ints by name; ``name=N,name=N`` in the environment and on the command line."""
    if isinstance(value, str):
        try:
            value = {k.strip(): int(v) for k, v in (item.split("=", 1) for item in value.split(",") if item.strip())}
        except ValueError:
            value = None
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v > 0 for k, v in value.items()
    ):
        return dict(value)
    raise ConfigError(
        f"{key_of(name)} from {source} must be a table of positive token counts, got {value!r}",
        'in config.toml: [models] windows = { "my-model" = 32000 }; elsewhere my-model=32000,other=8000',
    )


def read_toml(path: Path) -> dict[str, Any]:
    """The whole config file as TOML; a missing file is an empty one, a bad one a ConfigError."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", f"fix or remove {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def read_file(path: Path) -> dict[str, Any]:
    """The file's settings by name; a missing file is an empty one."""
    raw = read_toml(path)
    found = {}
    for section, table in raw.items():
        if not isinstance(table, dict):
            continue  # top-level keys belong to no toka setting; later versions may use them
        for name, value in table.items():
            if name in SETTINGS and SECTION_OF[name] == section:
                found[name] = value
    return found


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    sources: dict[str, str]  # name -> "default" | "config.toml" | "env TOKA_X" | "flag"


def shown(name: str, value: Any) -> Any:
    """A setting's value as it may be printed: a secret one with its password hidden."""
    if SETTINGS[name].metadata["secret"] and isinstance(value, str):
        if SETTINGS[name].metadata["secret"] == "whole":
            return "********" if value else value
        from store.url import redacted

        return redacted(value)
    return value


def load_settings(config_file: Path, flags: dict[str, Any] | None = None) -> Resolved:
    values: dict[str, Any] = {}
    sources = {name: "default" for name in SETTINGS}
    layers = [
        (read_file(config_file), str(config_file)),
        ({n: os.environ[env_name(n)] for n in SETTINGS if env_name(n) in os.environ}, "env"),
        ({n: v for n, v in (flags or {}).items() if v is not None}, "flag"),
    ]
    for layer, source in layers:
        for name, value in layer.items():
            label = f"env {env_name(name)}" if source == "env" else source
            values[name] = coerce(name, value, label)
            sources[name] = label
    sections = {
        section: replace(kind(), **{n: v for n, v in values.items() if SECTION_OF[n] == section})
        for section, kind in SECTIONS.items()
    }
    return Resolved(Settings(**sections), sources)


def write_setting(config_file: Path, key: str, value: str) -> Any:
    """Set one key in ``config.toml``, keeping everything else in the file."""
    import tomli_w

    name = lookup(key)
    checked = coerce(name, value, "the command line")
    try:
        data = tomllib.loads(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{config_file} is not valid TOML: {exc}", "fix it by hand first") from None
    section = SECTION_OF[name]
    data.setdefault(section, {})[name] = list(checked) if isinstance(checked, tuple) else checked
    config_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = config_file.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    os.replace(tmp, config_file)
    return checked
