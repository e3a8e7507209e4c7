"""The ``[export.otlp]`` section of config.toml: the forwarder that sends the log to a collector as
OpenTelemetry traces while it is written (docs/otel.md, "Export"). Declared here, with the
component, and listed with every section in daemon/sections.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from daemon.export.target import ENDPOINT_EXAMPLE, HEADERS_EXAMPLE, PROTOCOL, check_protocol, header_table, traces_url
from daemon.setting import setting
from store.errors import ConfigError

DAY_S = 86400.0


def _checked(check: Callable[[Any], Any], hint: str) -> Callable[[str, Any, str], Any]:
    def parse(key: str, value: Any, source: str) -> Any:
        try:
            return check(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{key} from {source}: {exc}", hint) from None

    return parse


def _endpoint(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a URL")
    if value.strip():
        traces_url(value)
    return value.strip()


def _protocol(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a protocol name")
    return check_protocol(value.strip())


@dataclass(frozen=True)
class OtlpExportSettings:
    table: ClassVar[str] = "export.otlp"

    endpoint: str = setting(
        "",
        "the collector the daemon forwards the log to as OpenTelemetry traces (OTLP/HTTP), e.g."
        " http://127.0.0.1:4318 (/v1/traces is added); off when empty (docs/otel.md)",
        env="TOKA_EXPORT_OTLP_ENDPOINT",
        parse=_checked(_endpoint, ENDPOINT_EXAMPLE),
    )
    headers: dict[str, str] = setting(
        {},
        "HTTP headers sent with every export (an API key); their values are never shown",
        env="TOKA_EXPORT_OTLP_HEADERS",
        secret="whole",
        parse=_checked(header_table, HEADERS_EXAMPLE),
        shape="a table of header names to text",
    )
    protocol: str = setting(
        PROTOCOL,
        "how spans are sent: http/protobuf (grpc and http/json are not spoken)",
        env="TOKA_EXPORT_OTLP_PROTOCOL",
        parse=_checked(_protocol, f"set it to {PROTOCOL}, or leave it out"),
        shape=PROTOCOL,
    )
    include_content: bool = setting(
        False,
        "also send prompts, messages and tool input and output (redacted by redaction.kinds); off: only names,"
        " times, tokens and costs",
        env="TOKA_EXPORT_OTLP_INCLUDE_CONTENT",
    )
    session_idle_s: float = setting(
        300.0,
        "seconds without a new event after which a session's agent spans are sent (at once when it ends)",
        env="TOKA_EXPORT_OTLP_SESSION_IDLE_S",
        bounds=(0.01, 30 * DAY_S),
    )
    queue_events: int = setting(
        10_000,
        "committed events the forwarder holds in memory; past it, it reads them back from the log later",
        env="TOKA_EXPORT_OTLP_QUEUE_EVENTS",
        bounds=(16, 10_000_000),
    )
    batch_spans: int = setting(
        512, "spans sent in one request to the collector", env="TOKA_EXPORT_OTLP_BATCH_SPANS", bounds=(1, 100_000)
    )
    retry_max_s: float = setting(
        60.0,
        "longest wait between two tries while the collector cannot be reached or refuses",
        env="TOKA_EXPORT_OTLP_RETRY_MAX_S",
        bounds=(0.01, DAY_S),
    )
    request_timeout_s: float = setting(
        10.0,
        "seconds a request to the collector may take before it is tried again",
        env="TOKA_EXPORT_OTLP_REQUEST_TIMEOUT_S",
        bounds=(0.1, 600.0),
    )
