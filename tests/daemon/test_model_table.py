"""The model table toka ships is genai-prices' own, at the pinned version, and answers for the
names agents report (dated, suffixed, unknown) with the window the agent gives the model by
default; the largest only for a `[1m]` model."""

from __future__ import annotations

import json

import pytest

from daemon.agents.windows import TABLE, build_table, known_window, largest_window


def test_the_shipped_table_is_what_the_pinned_genai_prices_gives() -> None:
    shipped = json.loads(TABLE.read_text(encoding="utf-8"))
    assert shipped == build_table(), "regenerate it: python -m daemon.agents.windows"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-opus-5-5", (1_000_000, "table")),  # Claude Code's default model
        ("claude-sonnet-4-5-20250929", (200_000, "table")),  # the date suffix is dropped
        ("gpt-5.3-codex", (400_000, "table")),
        ("gpt-5.6-sol", (1_050_000, "table")),  # OpenAI's own entry, not a reseller's
        ("claude-sonnet-4-6", (200_000, "table")),  # 1M only with Claude Code's 1M option
        ("claude-opus-4-6", (200_000, "table")),
        ("anthropic.claude-opus-4-6-v1:0", (200_000, "table")),  # Bedrock's name of it
        ("claude-sonnet-4-6[1m]", (1_000_000, "model")),
        ("claude-sonnet-4-5[1m]", (1_000_000, "model")),
        ("house-model-7", (200_000, "default")),
        (None, (200_000, "default")),
    ],
)
def test_windows_by_model_name(model: str | None, expected: tuple[int, str]) -> None:
    assert known_window(model) == expected


def test_the_config_wins_over_the_table_by_longest_prefix() -> None:
    overrides = {"claude": 100_000, "claude-opus": 300_000}
    assert known_window("claude-opus-5-5", overrides) == (300_000, "config")
    assert known_window("claude-sonnet-4-5", overrides) == (100_000, "config")


def test_the_largest_window_is_kept_apart_from_the_default() -> None:
    assert (known_window("claude-sonnet-4-6")[0], largest_window("claude-sonnet-4-6")) == (200_000, 1_000_000)
    assert (known_window("claude-opus-5-5")[0], largest_window("claude-opus-5-5")) == (1_000_000, 1_000_000)
    assert largest_window("claude-sonnet-4-6[1m]") == 1_000_000
    assert largest_window("house-model-7") is None
