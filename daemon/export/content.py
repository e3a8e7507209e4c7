"""Payload text sent with spans, only when asked (``export.otlp.include_content``, or
``--include-content``): redacted by the configured kinds (daemon/redact) and cut to a size a
collector keeps, on a character boundary."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from daemon.redact import redact

# Bytes of one attribute's text: collectors and backends commonly cut attribute values near
# here, and a span that carries a whole file's output helps no one read a trace.
CONTENT_BYTES = 16 * 1024
# Message events on one agent span: the SDKs' default span-event limit is 128.
MESSAGE_EVENTS = 128


@dataclass(frozen=True, slots=True)
class Content:
    """How payload text is made fit to leave: the redaction kinds applied."""

    kinds: tuple[str, ...]

    def text(self, value: Any) -> str:
        """``value`` (text, or anything as JSON) redacted and cut to CONTENT_BYTES."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        text = redact(text, self.kinds).text if self.kinds else text
        raw = text.encode()
        if len(raw) <= CONTENT_BYTES:
            return text
        kept = raw[:CONTENT_BYTES].decode(errors="ignore")
        return f"{kept}…[{len(raw) - len(kept.encode())} more bytes]"


def content_of(include: bool, kinds: Collection[str]) -> Content | None:
    return Content(tuple(kinds)) if include else None
