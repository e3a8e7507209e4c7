"""``otel.listen`` read: where the receiver binds. Kept apart from the server so that the
settings can check an address without importing aiohttp."""

from __future__ import annotations

import ipaddress

LOOPBACK = "127.0.0.1"


def listen_address(text: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT``, ``[IPv6]:PORT`` or a bare ``PORT`` (loopback); None for
    "" (off). ValueError says what is wrong."""
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        host, port = LOOPBACK, text
    elif text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        if not sep:
            raise ValueError(f"{text!r} is not [IPv6]:PORT")
        ipaddress.IPv6Address(host)
    else:
        host, sep, port = text.rpartition(":")
        if not sep or not host:
            raise ValueError(f"{text!r} is not HOST:PORT")
        if ":" in host:
            raise ValueError(f"{text!r}: write an IPv6 address in brackets, [::1]:4318")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{port!r} is not a port (0 to 65535)")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
