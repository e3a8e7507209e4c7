"""A signed tree head, and the append-only files that keep them.

A head says: the log's first ``size`` events hash to ``root`` (store/merkle.py), as of ``time``,
signed by the holder of ``key``. The signed bytes are::

    toka-tree-head-v1\n<size>\n<root, 64 hex digits>\n<time, as every toka timestamp>\n

``heads.jsonl`` beside the database holds one head per line, each line written whole with
O_APPEND; a witness file (``store.witness_path``) gets the same lines. A torn last line, which a
crash can leave, is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import StoreError
from store.events import format_ts, parse_ts

MAGIC = "toka-tree-head-v1"


def signed_bytes(size: int, root: str, time: str) -> bytes:
    return f"{MAGIC}\n{size}\n{root}\n{time}\n".encode()


@dataclass(frozen=True, slots=True)
class SignedHead:
    size: int
    root: str  # hex
    time: str  # format_ts
    key: str  # the signer's Ed25519 public key, hex
    signature: str  # hex

    @property
    def message(self) -> bytes:
        return signed_bytes(self.size, self.root, self.time)

    @property
    def name(self) -> str:
        return f"the head signed at {self.time} (size {self.size})"

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "root": self.root, "time": self.time, "key": self.key, "signature": self.signature}

    def line(self) -> bytes:
        return (json.dumps(self.to_json(), separators=(",", ":")) + "\n").encode()


def parse_head(data: Any) -> SignedHead | None:
    """A head from its JSON object; None when it is not one."""
    if not isinstance(data, dict):
        return None
    size, root, time, key, signature = (data.get(n) for n in ("size", "root", "time", "key", "signature"))
    if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
        return None
    if not all(isinstance(v, str) and _is_hex(v) for v in (root, key, signature)) or not isinstance(time, str):
        return None
    try:
        time = format_ts(parse_ts(time))
    except ValueError:
        return None
    return SignedHead(size, root.lower(), time, key.lower(), signature.lower())  # type: ignore[union-attr]


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return bool(text)


def read_heads(path: Path) -> tuple[list[SignedHead], int]:
    """The heads in ``path`` in file order, and how many lines were not heads (a missing file
    holds none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StoreError(f"cannot read the signed heads in {path}: {exc.strerror}") from None
    heads, bad = [], 0
    with os.fdopen(fd, "rb") as source:
        for raw in source:
            try:
                head = parse_head(json.loads(raw))
            except ValueError:
                head = None
            if head is None:
                bad += raw.strip() != b""
            else:
                heads.append(head)
    return heads, bad


def append_head(path: Path, head: SignedHead, sync: bool) -> None:
    """One line at the end of ``path`` (made 0600), written whole; fsynced when ``sync``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, head.line())
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _lines_from_the_end(path: Path) -> Iterator[bytes]:
    """The lines of ``path``, last first, read a block at a time from its end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read the signed heads in {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as source:
        end = source.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            start = max(0, end - _BLOCK)
            source.seek(start)
            lines = (source.read(end - start) + rest).split(b"\n")
            end = start
            rest = lines.pop(0) if end > 0 else b""
            yield from reversed(lines)
        if rest:
            yield rest


# Bytes read at a time from the end of the heads file: a few dozen heads.
_BLOCK = 16384


def last_good_head(path: Path, holds: Callable[[SignedHead], bool]) -> tuple[SignedHead | None, int]:
    """The last head of ``path`` that ``holds`` (its signature, by this log's key), and how many
    lines after it are not such heads: a line is never trusted for its place in the file."""
    untrusted = 0
    for raw in _lines_from_the_end(path):
        if not raw.strip():
            continue
        try:
            head = parse_head(json.loads(raw))
        except ValueError:
            head = None
        if head is not None and holds(head):
            return head, untrusted
        untrusted += 1
    return None, untrusted


def end_line(path: Path) -> None:
    """A line end added to ``path`` when its last line has none (a torn write, a hand edit), so
    the next head appended starts a line of its own."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        if end and os.pread(fd, 1, end - 1) != b"\n":
            os.write(fd, b"\n")
    finally:
        os.close(fd)
