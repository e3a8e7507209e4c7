"""What the head key has signed: ``heads.signed`` beside ``heads.key`` in the config dir.

The heads file lives beside the database, so whoever can rewrite the database can delete it
too, or cut heads off its end; a daemon that then signed the log as it found it would put the
real key's signature on a rewritten log. This small file, rewritten whole at each head, says
how far the key's signed history reaches (the last head's size and root) and keeps a line for
each time a person reset it on purpose (`toka heads --reset --yes`). The daemon signs only a
log whose heads file still holds a head of that size (docs/tamper-evidence.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.errors import StoreError


@dataclass(frozen=True, slots=True)
class Reset:
    """One reset: when, why signing was refused then, how far the history reached, where the
    heads file went."""

    time: str
    refused: str | None
    signed_before: int
    kept_as: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "refused": self.refused,
            "signed_before": self.signed_before,
            "kept_as": self.kept_as,
        }


@dataclass(frozen=True, slots=True)
class History:
    key: str  # the public key, hex: a history of another key says nothing of this one
    size: int  # the last head's size; 0 before the first
    root: str  # and its root, hex ("" before the first)
    resets: tuple[Reset, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        resets = [r.to_json() for r in self.resets]
        return {"key": self.key, "size": self.size, "root": self.root, "resets": resets}


def read_history(path: Path) -> History | None:
    """The history in ``path``; None when there is none. A file that is not one is an error:
    it is not silently taken for a fresh start."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as source:
        raw = source.read()
    try:
        data = json.loads(raw)
        resets = tuple(Reset(r["time"], r["refused"], int(r["signed_before"]), r["kept_as"]) for r in data["resets"])
        return History(str(data["key"]), int(data["size"]), str(data["root"]), resets)
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(
            f"{path} is not a record of signed heads ({exc})", "`toka heads --reset --yes` writes a new one"
        ) from None


def write_history(path: Path, history: History, sync: bool) -> None:
    """``path`` replaced whole (a file beside it, renamed over it), 0600; fsynced when ``sync``."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, (json.dumps(history.to_json(), separators=(",", ":")) + "\n").encode())
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
