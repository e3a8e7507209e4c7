"""Where settings come from: ``config.toml``, the environment (``TOKA_<NAME>``) and command-line
flags, resolved into :class:`~daemon.config.Settings` with every value checked; and writing one
key of ``config.toml`` (`toka config set`). Each reads the :class:`~daemon.config.Sections` it is
given: every one (daemon/sections.py) or the client's own (``OWN_SECTIONS``).

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
from daemon.config import Sections, Settings
from daemon.ownership import open_private, private_dir, trusted_config
from store.errors import ConfigError


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


def read_file(sections: Sections, path: Path) -> dict[str, Any]:
    """The file's settings of ``sections`` by name; a missing file is an empty one. A key that is
    no setting (a typo, a setting in the wrong table) is a ConfigError naming it and what it may
    have meant."""
    found, unknown = _settings_in(sections, read_toml(path))
    if unknown:
        raise ConfigError(f"{path}: unknown {'; unknown '.join(unknown)}", "`toka config show` lists every setting")
    return found


def _tables(sections: Sections, raw: dict[str, Any]) -> list[tuple[str, Any]]:
    """The top tables of a parsed config.toml, with a parent table's own tables as ``parent.name``."""
    tables: list[tuple[str, Any]] = []
    for section, table in raw.items():
        if section in sections.parent_tables and isinstance(table, dict):
            tables.extend((f"{section}.{name}", inner) for name, inner in table.items())
        else:
            tables.append((section, table))
    return tables


def _settings_in(sections: Sections, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The settings of a parsed config.toml by name, and what in it is none (each with its
    suggestion). Sections that are not whole leave what is not theirs to the daemon."""
    found = {}
    unknown = []
    for section, table in _tables(sections, raw):
        if section in sections.other_tables or (not sections.whole and section not in sections.by_table):
            continue
        if not isinstance(table, dict):  # a key above every table
            unknown.append(f"key {section}{sections.suggestion(section)}")
        elif section not in sections.by_table:
            unknown.append(f"table [{section}]{values.did_you_mean(section, sections.by_table)}")
        else:
            for name, value in table.items():
                if name in sections.by_name and sections.section_of[name] == section:
                    found[name] = value
                elif sections.whole:
                    unknown.append(f"key {section}.{name}{sections.suggestion(f'{section}.{name}')}")
    return found, unknown


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    sources: dict[str, str]  # name -> "default" | "config.toml" | "env TOKA_X" | "flag"


def load_settings(sections: Sections, config_file: Path, flags: dict[str, Any] | None = None) -> Resolved:
    """Every setting of ``sections`` resolved, each checked: a ConfigError names the first that is
    wrong, where it came from and what it may be, so that nothing starts half-configured."""
    found: dict[str, Any] = {}
    names = sections.by_name
    env_name = sections.env_name
    sources = {name: "default" for name in names}
    layers = [
        (read_file(sections, config_file), str(config_file)),
        ({n: os.environ[env_name(n)] for n in names if env_name(n) in os.environ}, "env"),
        ({n: v for n, v in (flags or {}).items() if v is not None}, "flag"),
    ]
    for layer, source in layers:
        for name, value in layer.items():
            label = f"env {env_name(name)}" if source == "env" else source
            found[name] = sections.coerce(name, value, label)
            sources[name] = label
    settings = settings_of(sections, found)
    check_order(sections, settings, sources)
    return Resolved(settings, sources)


def settings_of(sections: Sections, found: dict[str, Any]) -> Settings:
    """The defaults, with the checked values of ``found`` (by name) over them."""
    return Settings(
        *(
            replace(kind(), **{n: v for n, v in found.items() if sections.section_of[n] == table})
            for table, kind in sections.by_table.items()
        )
    )


def check_order(sections: Sections, settings: Settings, sources: dict[str, str], only: str | None = None) -> None:
    """ConfigError when two settings that must stay in order (a section's ``in_order``) do not;
    with ``only``, the pairs that setting is in."""
    for low, high in sections.in_order:
        if only is not None and only not in (low, high):
            continue
        below, above = settings.value(low), settings.value(high)
        strict = isinstance(below, float)  # percentages: a threshold equal to the next one means nothing
        if below > above or (strict and below == above):
            relation = "below" if strict else "at most"
            raise ConfigError(
                f"{sections.key_of(low)} ({below!r}, {_from(sources[low])}) must be {relation}"
                f" {sections.key_of(high)} ({above!r}, {_from(sources[high])})",
                f"change one of them: toka config set {sections.key_of(low)} VALUE",
            )


def write_setting(sections: Sections, config_file: Path, key: str, value: str) -> Any:
    """Set one key in ``config.toml``, keeping everything else in the file; the value as checked.
    It is checked as the daemon would read it, with the file's other settings (a warning threshold
    set above the file's critical one is refused), and the file is written 0600."""
    import tomlkit

    name = sections.lookup(key)
    checked = sections.coerce(name, value, "the command line")
    read_toml(config_file)  # the file's own checks: the user's, valid TOML
    # tomlkit keeps the user's comments, order and layout, which tomllib and tomli-w drop.
    try:
        document = tomlkit.parse(config_file.read_text(encoding="utf-8") if trusted_config(config_file) else "")
    except FileNotFoundError:
        document = tomlkit.document()
    section = sections.section_of[name]
    table: Any = document
    for part in section.split("."):
        if part not in table:
            table[part] = tomlkit.table()
        table = table[part]
        if not isinstance(table, dict):
            raise ConfigError(f"{config_file}: {section} must be a table", "fix it by hand first")
    _set_in_table(table, name, list(checked) if isinstance(checked, tuple) else checked)
    data = document.unwrap()
    in_file = {n: sections.coerce(n, v, str(config_file)) for n, v in _settings_in(sections, data)[0].items()}
    sources = {n: str(config_file) if n in in_file else "default" for n in sections.by_name}
    check_order(sections, settings_of(sections, in_file), sources | {name: "the command line"}, only=name)
    private_dir(config_file.parent)
    tmp = config_file.with_suffix(".toml.tmp")
    with open(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
        out.write(tomlkit.dumps(document))
    os.replace(tmp, config_file)
    return checked


def _set_in_table(table: Any, name: str, value: Any) -> None:
    """``name = value`` in a tomlkit table: in its place when the key is there, else after the
    table's last key, before the blank lines and comments that end it (they head what follows).
    A list is written an item a line, as tomli-w wrote it."""
    import tomlkit

    if isinstance(value, list):
        items = tomlkit.array()
        items.extend(value)
        value = items.multiline(True)
    if name in table:
        table[name] = value
        return
    body = table.value.body if hasattr(table, "value") else table.body
    trailing: list[Any] = []
    while body and body[-1][0] is None:
        trailing.insert(0, body.pop()[1])
    table[name] = value
    for item in trailing:
        table.add(item)


def _from(source: str) -> str:
    return "the default" if source == "default" else f"from {source}"
