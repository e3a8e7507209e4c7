"""Where spans are sent: an OTLP/HTTP endpoint checked and made whole, the headers sent with it,
and the one protocol spoken. Used by the ``[export.otlp]`` settings and by ``export.otel``'s
request alike, so both refuse the same things with the same words.

An endpoint is a base URL (``http://collector:4318``, ``https://host/api/public/otel``) to which
``/v1/traces`` is added, as OpenTelemetry's exporters do with ``OTEL_EXPORTER_OTLP_ENDPOINT``; a
URL that already ends in ``/v1/traces`` is used as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

TRACES_PATH = "/v1/traces"
# OTLP/HTTP with protobuf bodies: what toka sends. grpc and http/json are refused by name.
PROTOCOL = "http/protobuf"
ENDPOINT_EXAMPLE = "e.g. http://127.0.0.1:4318 (/v1/traces is added)"
HEADERS_EXAMPLE = 'e.g. [export.otlp] headers = { authorization = "Bearer ..." }; elsewhere authorization=Bearer%20...'
# An HTTP header name (RFC 9110's token).
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to; ValueError saying what is wrong with ``endpoint``."""
    text = endpoint.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{text!r} is not an http:// or https:// URL")
    if not parts.hostname:
        raise ValueError(f"{text!r} names no host")
    try:
        parts.port  # noqa: B018 - raises for a port out of range or not a number
    except ValueError:
        raise ValueError(f"{text!r} has no valid port") from None
    path = parts.path.rstrip("/")
    if not path.endswith(TRACES_PATH):
        path += TRACES_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def header_table(value: Any) -> dict[str, str]:
    """Headers from a table of strings, or from ``name=value,name=value`` text (the form of
    ``OTEL_EXPORTER_OTLP_HEADERS``, values URL-encoded); ValueError saying what is wrong."""
    if isinstance(value, str):
        pairs = [item.split("=", 1) for item in value.split(",") if item.strip()]
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError(f"{value!r} is not name=value pairs separated by commas")
        value = {name.strip(): unquote(text.strip()) for name, text in pairs}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{value!r} is not a table of header names to text")
    for name, text in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            raise ValueError(f"{name!r} is not a header name")
        if "\r" in text or "\n" in text:
            raise ValueError(f"the value of {name} holds a line break")
    return dict(value)


def check_protocol(protocol: str) -> str:
    if protocol != PROTOCOL:
        raise ValueError(f"{protocol!r} is not spoken: toka sends OTLP as protobuf over HTTP ({PROTOCOL}) only")
    return protocol
