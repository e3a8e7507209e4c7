"""The ``[handoff]`` section of config.toml: whether handoffs are also written as markdown files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.setting import setting


@dataclass(frozen=True)
class HandoffSettings:
    table: ClassVar[str] = "handoff"

    save_markdown: bool = setting(
        False, "also write each handoff's markdown to handoffs/<trace>/<id>.md in the data dir"
    )
