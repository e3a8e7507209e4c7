"""How a setting is declared: a dataclass field with its default, its help (what `toka config
show` and the man page say), and how it is read (daemon/config.py). Apart from config.py so that
a component can declare its own section (daemon/otel/settings.py) with nothing else of the loader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any


def setting(
    default: Any,
    help: str,
    choices: tuple[str, ...] = (),
    env: str | None = None,
    secret: bool | str = False,
    parse: Callable[[str, Any, str], Any] | None = None,
    bounds: tuple[float, float] | None = None,
    shape: str | None = None,
) -> Any:
    # secret: a value that may hold a password, shown only with it hidden (store/url.py); "whole":
    # a value that is a secret itself (a token), never shown.
    # parse: checks and converts a value of its own shape, as parse(key, value, source).
    # bounds: the smallest and largest a number may be, both included; every number has them.
    # shape: what a value with its own parse may be, for people (`toka config show`), when the
    # type alone would not say it.
    metadata = {
        "help": help,
        "choices": choices,
        "env": env,
        "secret": secret,
        "parse": parse,
        "bounds": bounds,
        "shape": shape,
    }
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=metadata)
    return field(default=default, metadata=metadata)
