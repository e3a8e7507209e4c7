"""Where settings come from: ``config.toml``, the environment (``TOKA_<NAME>``) and command-line
flags, resolved into :class:`~daemon.config.Settings` with every value checked; and writing one
key of ``config.toml`` (`toka config set`).

Nothing starts half-configured: a key that is no setting (a typo, a setting in the wrong table)
is an error naming the file and what it may have meant, a value out of its range or choices an
error naming the key, where it came from and what it may be, and two settings out of order
(a warning threshold above the critical one) an error naming both.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from daemon import config_values as values
from daemon.config import (
    SECTION_OF,
    SECTIONS,
    SETTINGS,
    Settings,
    attribute_of,
    coerce,
    env_name,
    key_of,
    lookup,
    suggestion,
)
from daemon.ownership import open_private, private_dir, trusted_config
from store.errors import ConfigError

# Tables of config.toml that are not settings, each read by its own module.
OTHER_TABLES = ("state",)  # daemon/states/machines.py
# Settings that must stay in order: the first below the second (or, for sizes, at most it).
ORDERED = (("warning_pct", "critical_pct"), ("target_pct", "trigger_pct"), ("max_line_bytes", "max_buffered_bytes"))


def read_toml(path: Path) -> dict[str, Any]:
    """The whole config file as TOML; a missing file is an empty one, a bad one a ConfigError.
    It is the user's own or refused (daemon/ownership.py): it names commands the daemon runs."""
    try:
        if not trusted_config(path):
            return {}
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", f"fix or remove {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def read_file(path: Path) -> dict[str, Any]:
    """The file's settings by name; a missing file is an empty one. A key that is no setting (a
    typo, a setting in the wrong table) is a ConfigError naming it and what it may have meant."""
    found, unknown = _settings_in(read_toml(path))
    if unknown:
        raise ConfigError(f"{path}: unknown {'; unknown '.join(unknown)}", "`toka config show` lists every setting")
    return found


# Tables that only hold tables of settings: ``[export.otlp]`` parses as {"export": {"otlp": {...}}}.
PARENT_TABLES = {section.split(".")[0] for section in SECTIONS if "." in section}


def _tables(raw: dict[str, Any]) -> list[tuple[str, Any]]:
    """The top tables of a parsed config.toml, with a parent table's own tables as ``parent.name``."""
    tables: list[tuple[str, Any]] = []
    for section, table in raw.items():
        if section in PARENT_TABLES and isinstance(table, dict):
            tables.extend((f"{section}.{name}", inner) for name, inner in table.items())
        else:
            tables.append((section, table))
    return tables


def _settings_in(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The settings of a parsed config.toml by name, and what in it is none (each with its suggestion)."""
    found = {}
    unknown = []
    for section, table in _tables(raw):
        if section in OTHER_TABLES:
            continue
        if not isinstance(table, dict):  # a key above every table
            unknown.append(f"key {section}{suggestion(section)}")
        elif section not in SECTIONS:
            unknown.append(f"table [{section}]{values.did_you_mean(section, SECTIONS)}")
        else:
            for name, value in table.items():
                if name in SETTINGS and SECTION_OF[name] == section:
                    found[name] = value
                else:
                    unknown.append(f"key {section}.{name}{suggestion(f'{section}.{name}')}")
    return found, unknown


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    sources: dict[str, str]  # name -> "default" | "config.toml" | "env TOKA_X" | "flag"


def load_settings(config_file: Path, flags: dict[str, Any] | None = None) -> Resolved:
    """Every setting resolved, each checked: a ConfigError names the first that is wrong, where it
    came from and what it may be, so that nothing starts half-configured."""
    found: dict[str, Any] = {}
    sources = {name: "default" for name in SETTINGS}
    layers = [
        (read_file(config_file), str(config_file)),
        ({n: os.environ[env_name(n)] for n in SETTINGS if env_name(n) in os.environ}, "env"),
        ({n: v for n, v in (flags or {}).items() if v is not None}, "flag"),
    ]
    for layer, source in layers:
        for name, value in layer.items():
            label = f"env {env_name(name)}" if source == "env" else source
            found[name] = coerce(name, value, label)
            sources[name] = label
    settings = settings_of(found)
    check_order(settings, sources)
    return Resolved(settings, sources)


def settings_of(found: dict[str, Any]) -> Settings:
    """The defaults, with the checked values of ``found`` (by name) over them."""
    sections = {
        attribute_of(section): replace(kind(), **{n: v for n, v in found.items() if SECTION_OF[n] == section})
        for section, kind in SECTIONS.items()
    }
    return Settings(**sections)


def check_order(settings: Settings, sources: dict[str, str], only: str | None = None) -> None:
    """ConfigError when two settings that must stay in order (ORDERED) do not; with ``only``,
    the pairs that setting is in."""
    for low, high in ORDERED:
        if only is not None and only not in (low, high):
            continue
        below, above = settings.value(low), settings.value(high)
        strict = isinstance(below, float)  # percentages: a threshold equal to the next one means nothing
        if below > above or (strict and below == above):
            relation = "below" if strict else "at most"
            raise ConfigError(
                f"{key_of(low)} ({below!r}, {_from(sources[low])}) must be {relation} {key_of(high)}"
                f" ({above!r}, {_from(sources[high])})",
                f"change one of them: toka config set {key_of(low)} VALUE",
            )


def write_setting(config_file: Path, key: str, value: str) -> Any:
    """Set one key in ``config.toml``, keeping everything else in the file; the value as checked.
    It is checked as the daemon would read it, with the file's other settings (a warning threshold
    set above the file's critical one is refused), and the file is written 0600."""
    import tomli_w

    name = lookup(key)
    checked = coerce(name, value, "the command line")
    data = read_toml(config_file)
    section = SECTION_OF[name]
    table = data
    for part in section.split("."):
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{config_file}: {section} must be a table", "fix it by hand first")
    table[name] = list(checked) if isinstance(checked, tuple) else checked
    in_file = {n: coerce(n, v, str(config_file)) for n, v in _settings_in(data)[0].items()}
    sources = {n: str(config_file) if n in in_file else "default" for n in SETTINGS} | {name: "the command line"}
    check_order(settings_of(in_file), sources, only=name)
    private_dir(config_file.parent)
    tmp = config_file.with_suffix(".toml.tmp")
    with open(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
        out.write(tomli_w.dumps(data))
    os.replace(tmp, config_file)
    return checked


def _from(source: str) -> str:
    return "the default" if source == "default" else f"from {source}"
