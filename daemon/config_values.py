"""One setting's value checked and converted, whatever its source: a number within its range, a
boolean, a list of strings, a table of token counts; and the key a mistyped one may have meant.

daemon/config.py's ``Sections`` knows the settings and calls these with a setting's key (``daemon.max_line_bytes``)
and where the value came from (the config file's path, ``env TOKA_X``, ``flag``), so that every
error is one line naming the key, its source and what is allowed.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Iterable
from typing import Any

from store.errors import ConfigError

# Numbers in the environment and on the command line are text; TOML gives ints and floats.
_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}
# The largest and smallest token count a context window may be given (models.windows): no model
# has fewer than a few hundred tokens of context, and a billion is past every window there is.
WINDOW_BOUNDS = (256, 1_000_000_000)


def shown_number(number: float) -> str:
    """``4096``, ``0.5``, ``3600`` (not ``3600.0``), ``1000000000`` (not ``1e+09``): a bound as
    a person types it."""
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    return str(number) if isinstance(number, int) else f"{number:g}"


def number(key: str, value: Any, source: str, kind: type, bounds: tuple[float, float], default: float) -> int | float:
    """``value`` as an int or a float (``kind``), finite and within ``bounds`` (both included)."""
    low, high = bounds
    wanted = f"{'a whole number' if kind is int else 'a number'} from {shown_number(low)} to {shown_number(high)}"
    hint = f"its default is {shown_number(default)}"
    try:
        if isinstance(value, str):
            value = kind(value.strip())
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)) or not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{key} from {source} must be {wanted}, got {value!r}", hint) from None
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"{key} from {source} must be {wanted}, got {value!r}", hint)
    return value


def boolean(key: str, value: Any, source: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    raise ConfigError(f"{key} from {source} must be true or false, got {value!r}")


def string_list(key: str, value: Any, source: str, choices: tuple[str, ...]) -> tuple[str, ...]:
    """A list of strings (``os.pathsep``-separated as text), each one of ``choices`` when given."""
    if isinstance(value, str):
        items = tuple(part for part in value.split(os.pathsep) if part)
    elif isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        items = tuple(value)
    else:
        section, name = key.split(".", 1)
        raise ConfigError(
            f"{key} from {source} must be a list of strings, got {value!r}",
            f'in config.toml: [{section}] {name} = ["~/.claude/projects"]',
        )
    unknown = [item for item in items if choices and item not in choices]
    if unknown:
        wrong = ", ".join(f"{item}{did_you_mean(item, choices)}" for item in unknown)
        raise ConfigError(f"{key} from {source}: unknown {wrong}", f"known: {', '.join(choices)}")
    return items


def token_table(key: str, value: Any, source: str) -> dict[str, int]:
    """A table of token counts by name within WINDOW_BOUNDS; ``name=N,name=N`` as text."""
    if isinstance(value, str):
        try:
            value = {k.strip(): int(v) for k, v in (item.split("=", 1) for item in value.split(",") if item.strip())}
        except ValueError:
            value = None
    low, high = WINDOW_BOUNDS
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and low <= v <= high
        for k, v in value.items()
    ):
        return dict(value)
    raise ConfigError(
        f"{key} from {source} must be a table of token counts from {low} to {high}, got {value!r}",
        'in config.toml: [models] windows = { "my-model" = 32000 }; elsewhere my-model=32000,other=8000',
    )


def choice(key: str, value: Any, source: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key} from {source} must be one of {', '.join(choices)}, got {value!r}")
    if choices and value not in choices:
        raise ConfigError(
            f"{key} from {source} must be one of {', '.join(choices)}, got {value!r}{did_you_mean(value, choices)}"
        )
    return value


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean store.durability?)`` when one of ``candidates`` is close to ``word``."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
