"""The time zone of the user's process, by name, for the reports it asks the daemon for.

The daemon may run with another zone (started by systemd, or by another shell), so a client
sends its own: ``TZ`` when it is set (a zone's name, or a path into the zone database), else the
zone ``/etc/localtime`` links to, else ``/etc/timezone``; failing those (a POSIX rule in ``TZ``
such as ``CET-1CEST``), the current offset from UTC (``+02:00``), which is right for today but
not across a change of daylight saving time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

LOCALTIME = Path("/etc/localtime")
TIMEZONE = Path("/etc/timezone")


def local_timezone() -> str:
    """An IANA name (``Europe/Paris``), or the offset from UTC now (``+02:00``)."""
    named = os.environ.get("TZ")
    if named is not None:
        named = named.lstrip(":")
        if "/zoneinfo/" in named:
            return named.split("/zoneinfo/", 1)[1]
        return named if named and _known(named) else _offset_now()
    try:
        target = os.readlink(LOCALTIME)
    except OSError:
        target = ""
    if "/zoneinfo/" in target:
        return target.split("/zoneinfo/", 1)[1]
    try:
        name = TIMEZONE.read_text(encoding="utf-8").strip()
    except OSError:
        name = ""
    return name if name and _known(name) else _offset_now()


def _known(name: str) -> bool:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(name)
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


def _offset_now() -> str:
    offset = time.localtime().tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    return f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
