"""The ``[redaction]`` section of config.toml: which kinds of data are redacted from text handed on
(docs/redaction.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.redact.patterns import KINDS as REDACT_KINDS
from daemon.setting import setting


@dataclass(frozen=True)
class RedactionSettings:
    table: ClassVar[str] = "redaction"

    kinds: tuple[str, ...] = setting(
        REDACT_KINDS,
        "what is redacted from text handed on (summaries, handoffs, external summarizers, toka context)",
        REDACT_KINDS,
        env="TOKA_REDACT",
    )
