"""The ``[otel]`` section of config.toml: where the receiver listens and what it accepts
(docs/otel.md). Declared here, with the component, and listed with every section in
daemon/sections.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from daemon.otel.address import listen_address
from daemon.setting import setting
from store.errors import ConfigError


def parse_listen(key: str, value: Any, source: str) -> str:
    """``otel.listen``: ``HOST:PORT``, ``[IPv6]:PORT`` or a bare port (loopback), or "" for off."""
    if not isinstance(value, str):
        raise ConfigError(f"{key} from {source} must be HOST:PORT, got {value!r}", "e.g. 127.0.0.1:4318")
    try:
        listen_address(value)
    except ValueError as exc:
        raise ConfigError(f"{key} from {source}: {exc}", "e.g. 127.0.0.1:4318, [::1]:4318, or 4318") from None
    return value.strip()


@dataclass(frozen=True)
class OtelSettings:
    table: ClassVar[str] = "otel"

    listen: str = setting(
        "",
        "where the daemon receives OpenTelemetry (OTLP/HTTP) from Claude Code and Codex, e.g. 127.0.0.1:4318;"
        " a bare port listens on loopback only; off when empty (docs/otel.md)",
        env="TOKA_OTEL_LISTEN",
        parse=parse_listen,
    )
    token: str = setting(
        "",
        "the bearer token the receiver requires (Authorization: Bearer ...); when empty, the one the daemon makes"
        " on its first start, otel.token in the config dir, 0600",
        env="TOKA_OTEL_TOKEN",
        secret="whole",
    )
    require_token: bool = setting(
        True,
        "whether the receiver requires a bearer token; false (with otel.token empty) lets every process that reaches"
        " the port write into the log: unsafe on a machine shared with other users",
        env="TOKA_OTEL_REQUIRE_TOKEN",
    )
    connection_limit: int = setting(
        64,
        "connections the receiver holds at once; more are answered 503 and closed, so that they cannot take the"
        " daemon's files",
        env="TOKA_OTEL_CONNECTION_LIMIT",
        bounds=(1, 4096),
    )
    read_timeout_s: float = setting(
        10.0,
        "seconds a connection may take to send a request's headers, and then its body, before it is closed",
        env="TOKA_OTEL_READ_TIMEOUT_S",
        bounds=(0.5, 600),
    )
    max_body_bytes: int = setting(
        16 * 1024 * 1024,
        "largest OTLP request body the receiver accepts, in bytes, once decompressed",
        env="TOKA_OTEL_MAX_BODY_BYTES",
        bounds=(64 * 1024, 1 << 30),
    )
    max_output_bytes: int = setting(
        64 * 1024,
        "tool output, tool input and raw API bodies in received telemetry are cut to this many bytes (after redaction)",
        env="TOKA_OTEL_MAX_OUTPUT_BYTES",
        bounds=(256, 64 * 1024 * 1024),
    )
