"""The toka an agent's configuration runs, and whether a configured command can run at all."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.errors import ConfigError


def toka_executable() -> str:
    """The absolute path of this toka's console script (or, failing that, of the `toka` on PATH)."""
    here = Path(sys.executable).parent / "toka"
    if here.exists():
        return str(here.absolute())
    on_path = shutil.which("toka")
    if on_path is None:
        raise ConfigError("cannot find the `toka` executable", "install toka with pip, then rerun")
    return str(Path(on_path).absolute())


def toka_command(*args: str) -> str:
    """A shell command line running this toka by its absolute path: ``/venv/bin/toka hook claude-code``."""
    return shlex.join([toka_executable(), *args])


def is_toka(program: str) -> bool:
    """Whether a command's program is a toka (bare, or by any path)."""
    return Path(program).name == "toka"


def command_words(entry: Any, unwrap: Callable[[str], str] = str) -> list[str] | None:
    """The words of a settings entry's ``command`` (after ``unwrap``), None when it has no
    command or one that does not parse as a shell command line."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    try:
        return shlex.split(unwrap(entry["command"]))
    except ValueError:
        return None


def unresolved(program: str) -> str | None:
    """Why ``program`` cannot be run as an agent would run it, or None when it can.

    An agent runs it with its own environment, not this shell's: a bare name is only as good as
    the PATH the agent was started with, which is why a bare ``toka`` is reported too."""
    if os.sep not in program:
        found = shutil.which(program)
        if found is None:
            return f"`{program}` is not on PATH"
        return f"`{program}` is found only through PATH ({found}); an agent started elsewhere may not find it"
    path = Path(program).expanduser()
    if not path.exists():
        return f"{path} does not exist"
    if not os.access(path, os.X_OK) or path.is_dir():
        return f"{path} is not executable"
    return None
