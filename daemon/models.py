"""Context windows of known models, by name.

A model's window comes from, in order: what the provider reported with the usage (Codex's
``model_context_window``), the agent's own setting, the ``[models] windows`` table of the
config, the built-in table below, and last a default of 200,000 tokens that ``toka usage`` marks
as assumed. Names match by prefix, longest first, after dropping a date suffix; a ``[1m]``
suffix (Claude Code's one-million-token variants) means 1,000,000 whatever the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

DEFAULT_WINDOW = 200_000
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_WINDOW = 1_000_000

# Prefix -> window, as the providers document them. Claude models take 200k unless run as a
# 1M variant; GPT-5 models in Codex report their own window, which wins over this table.
KNOWN_WINDOWS: dict[str, int] = {
    "claude": 200_000,  # every Claude model, Opus, Sonnet and Haiku, 3.x and 4.x
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "o4-mini": 200_000,
    "o3": 200_000,
    "o1": 200_000,
    "codex-mini": 200_000,
}
_DATE = re.compile(r"-\d{8}$")


def known_window(model: str | None, overrides: Mapping[str, int] | None = None) -> tuple[int, str]:
    """The window of ``model`` and where it came from: ``model`` (the 1M suffix), ``config``,
    ``table``, or ``default`` (assumed)."""
    if model:
        if model.endswith(LONG_CONTEXT_SUFFIX):
            return LONG_WINDOW, "model"
        name = _DATE.sub("", model.lower())
        for table, source in ((overrides or {}, "config"), (KNOWN_WINDOWS, "table")):
            for prefix in sorted(table, key=len, reverse=True):  # the most specific first
                if name.startswith(prefix.lower()):
                    return table[prefix], source
    return DEFAULT_WINDOW, "default"
