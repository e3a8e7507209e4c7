"""Context windows of models, by name.

A model's window comes from, in order: what the agent itself reported (Codex's
``model_context_window`` with its usage, Claude Code's status line), the agent's own setting, a
``[1m]`` suffix (Claude Code's one-million-token variants: 1,000,000 whatever the model), the
``[models] windows`` table of the config, and the model's default window. A model none of these
knows gets 200,000 tokens, which every command marks as assumed. (usage.py adds the evidence of
the session itself: a prompt, or a compaction, larger than the default window means the model ran
with its largest.)

A model's default window is the window an agent gives it unless asked for more, which is not
always the most the model can take: Claude Code runs the Claude 4 models (Sonnet 4 to 4.6, Opus 4
to 4.8) at 200,000 tokens, though most of them can take 1,000,000, unless the user picks the 1M
option (the model then reads ``claude-sonnet-4-6[1m]`` in hooks and settings), and auto-compacts
them at about 83% of that; the models after them (Opus 5, Claude Code's default Opus 5.5) it
runs at their full window. :data:`DEFAULT_WINDOWS` holds those defaults, reviewed by hand; every
other model's default is its largest window.

The model table, ``model_windows.json`` beside this module, is not written by hand: it is the
windows of `genai-prices`_, a maintained table of models, their prices and their windows, at the
version the test extra pins. ``python -m daemon.agents.windows`` writes it again from the installed
genai-prices (run it after raising the pin); a test checks that the file is what the pinned
version gives. The file is read instead of genai-prices itself because genai-prices takes 0.4 s
to import (pydantic), where the JSON takes a millisecond.

Names match by prefix, longest first, after dropping a date suffix (``-20250929``).

.. _genai-prices: https://github.com/pydantic/genai-prices
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_WINDOW = 200_000
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_WINDOW = 1_000_000
# Windows agents give models by default where the model can take more (by name prefix, after the
# date suffix is dropped): Claude Code's Claude 4 generation, 200k without the 1M option (its
# model configuration docs: "sonnet[1m]"; a session of claude-sonnet-4-6 auto-compacted at 173k).
DEFAULT_WINDOWS = {"claude-sonnet-4": DEFAULT_WINDOW, "claude-opus-4": DEFAULT_WINDOW}
TABLE = Path(__file__).with_name("model_windows.json")
_DATE = re.compile(r"-\d{8}$")


def known_window(model: str | None, overrides: Mapping[str, int] | None = None) -> tuple[int, str]:
    """The window of ``model`` and where it came from: ``model`` (the 1M suffix), ``config``,
    ``table`` (the model's default window), or ``default`` (assumed)."""
    if model:
        if model.endswith(LONG_CONTEXT_SUFFIX):
            return LONG_WINDOW, "model"
        name = _DATE.sub("", model.lower())
        if overrides and (window := _by_prefix(name, overrides)):
            return window, "config"
        if window := table_window(name):
            # Bedrock's and Vertex's names of a Claude model end in Anthropic's own name.
            bare = name.rsplit("anthropic.", 1)[-1]
            return min(window, _by_prefix(bare, DEFAULT_WINDOWS) or window), "table"
    return DEFAULT_WINDOW, "default"


def largest_window(model: str | None) -> int | None:
    """The most ``model`` can take, by the model table; None for a model it does not know."""
    if not model:
        return None
    return table_window(_DATE.sub("", model.lower().removesuffix(LONG_CONTEXT_SUFFIX)))


@cache
def table_window(name: str) -> int | None:
    """The model table's window for ``name`` (lower case, no date suffix), or None."""
    return _by_prefix(name, _table()["windows"])


def _by_prefix(name: str, windows: Mapping[str, int]) -> int | None:
    for prefix in sorted(windows, key=len, reverse=True):  # the most specific first
        if name.startswith(prefix.lower()):
            return windows[prefix]
    return None


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return table


def table_source() -> str:
    """Where the model table came from, e.g. ``genai-prices 0.2.3``."""
    return str(_table()["source"])


def build_table() -> dict[str, Any]:
    """The table from the installed genai-prices: every model's name and the names it is matched
    by (exactly or as a prefix), with its window. A name several providers list takes the window
    of the provider genai-prices itself would pick for it (the maker: OpenAI for ``gpt-*``, not a
    reseller), else of the first."""
    from importlib.metadata import version

    from genai_prices.data import providers

    windows: dict[str, int] = {}
    for makers_only in (True, False):
        for provider in providers:
            for model in provider.models:
                for name in (model.id, *_names(model.match)):
                    name = name.lower()
                    maker = provider.model_match is not None and provider.model_match.is_match(name)
                    if model.context_window and (maker or not makers_only):
                        windows.setdefault(name, model.context_window)
    return {"source": f"genai-prices {version('genai-prices')}", "windows": dict(sorted(windows.items()))}


def _names(clause: Any) -> Iterator[str]:
    """The literal names of a genai-prices match clause (regexes and substrings are left out:
    the date suffixes they cover are dropped before matching)."""
    for attribute in ("equals", "starts_with"):
        if isinstance(getattr(clause, attribute, None), str):
            yield getattr(clause, attribute)
    for child in getattr(clause, "or_", None) or ():
        yield from _names(child)


if __name__ == "__main__":
    TABLE.write_text(json.dumps(build_table(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {TABLE} from {table_source()}", file=sys.stderr)
