"""The price table toka ships is genai-prices' own at the pinned version, toka prices every model of
it as genai-prices does, and the config's prices go over it; a model nobody prices is unpriced."""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from daemon.config_file import load_settings
from daemon.cost.generate import build_table
from daemon.cost.prices import TABLE, ModelPrices, PriceTable, Tokens, _entry, load_table
from daemon.cost.settings import ModelSettings
from daemon.sections import SECTIONS
from store.errors import ConfigError
from store.usage import PROMPT_CLASSES

# Moments on both sides of the price changes the table holds (claude-opus-4-6 dropped its
# long-context tier on 2026-03-13), and at off-peak and peak hours (DeepSeek's).
MOMENTS = [datetime(2025, 6, 1, 3, 0, tzinfo=UTC), datetime(2026, 4, 1, 17, 0, tzinfo=UTC)]
USAGES = [
    Tokens(input=1000, output=200, cache_write=300, cache_write_1h=100, cache_read=5000),
    Tokens(input=150_000, output=2000, cache_write=60_000, cache_write_1h=20_000, cache_read=100_000),  # above 200k
    Tokens(input=10, output=5),
]


def genai_usage(tokens: Tokens) -> Any:
    from genai_prices import Usage

    return Usage(
        input_tokens=tokens.prompt,
        cache_read_tokens=tokens.cache_read,
        cache_write_tokens=tokens.cache_write,
        cache_write_1h_tokens=tokens.cache_write_1h,
        output_tokens=tokens.output,
    )


def test_the_shipped_table_is_what_the_pinned_genai_prices_gives() -> None:
    shipped = json.loads(TABLE.read_text(encoding="utf-8"))
    assert shipped == build_table(), "regenerate it: python -m daemon.cost.generate"
    assert load_table().source == "genai-prices 0.2.3"


def test_every_model_is_priced_as_genai_prices_prices_it() -> None:
    """Every model and price entry of the table, for usage below and above the long-context
    tiers, with one-hour cache writes, at two moments; genai-prices adds a fee per request for a
    few models, which no transcript counts, so those are left out (and named)."""
    from genai_prices.data import providers

    shipped = {(p["id"], m["id"]): m for p in load_table().providers for m in p["models"]}
    compared, per_request, different = 0, set(), []
    for provider in providers:
        for model in provider.models:
            raw = shipped.get((provider.id, model.id))
            if raw is None:
                continue
            entries = model.prices if isinstance(model.prices, list) else [model]
            if any(getattr(entry.prices, "requests_kcount", None) is not None for entry in entries):
                per_request.add(model.id)
                continue
            ours = ModelPrices(model.id, provider.id, "table", tuple(_entry(e) for e in raw["prices"]))
            for tokens in USAGES:
                for moment in MOMENTS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        theirs = model.calc_price(genai_usage(tokens), provider, genai_request_timestamp=moment)
                    compared += 1
                    if ours.rates(moment).cost(tokens) != theirs.total_price:
                        different.append((provider.id, model.id, tokens, moment))
    assert different == []
    assert compared > 10_000
    assert per_request == {"sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro"}


def test_names_find_the_model_genai_prices_finds() -> None:
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    table = PriceTable()
    names = [
        "claude-opus-4-6",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-1-20250805",
        "claude-sonnet-4-20250514",
        "gpt-5.3-codex",
        "gpt-5.5",
        "gpt-5.1",
        "gemini-2.5-pro",
        "deepseek-chat",
    ]
    for name in names:
        provider, model = snapshot.find_provider_model(name, None, None, None)
        found = table.find(name)
        assert found is not None and (found.provider, found.model) == (provider.id, model.id), name


def test_a_bedrock_name_is_found_under_aws() -> None:
    found = PriceTable().find("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert found is not None and found.provider == "aws"
    assert found.model == "regional.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_every_tier_of_the_table_starts_at_a_prompt_class_of_the_projection() -> None:
    starts = {
        tier[0]
        for provider in load_table().providers
        for model in provider["models"]
        for entry in model["prices"]
        for rate in entry.values()
        if isinstance(rate, dict) and "tiers" in rate
        for tier in rate["tiers"]
    }
    assert starts and starts <= set(PROMPT_CLASSES)


def test_each_kind_of_token_at_its_own_price() -> None:
    sonnet = PriceTable().find("claude-sonnet-4-5")
    assert sonnet is not None
    rates = sonnet.rates(MOMENTS[1])
    million = 1_000_000
    tokens = Tokens(input=million, output=million, cache_write=million, cache_write_1h=400_000, cache_read=million)
    # $3 input, $15 output, $3.75 per 5-minute write (600k), $6 per 1-hour write (400k), $0.3 read
    expected = Decimal("3") + 15 + Decimal("3.75") * Decimal("0.6") + 6 * Decimal("0.4") + Decimal("0.3")
    assert rates.cost(tokens, prompt=1000) == expected


def test_a_prompt_above_the_tier_pays_the_tier_for_all_its_tokens() -> None:
    sonnet = PriceTable().find("claude-sonnet-4-5")
    assert sonnet is not None
    rates = sonnet.rates(MOMENTS[1])
    small, large = Tokens(input=200_000, output=1000), Tokens(input=200_001, output=1000)
    assert rates.cost(small) == Decimal("0.6") + Decimal("0.015")
    assert rates.cost(large) == Decimal("6") * Decimal("0.200001") + Decimal("0.0225")


def test_a_price_that_changed_is_taken_at_the_time_of_the_call() -> None:
    opus = PriceTable().find("claude-opus-4-6")
    assert opus is not None
    long_prompt = Tokens(input=300_000)
    assert opus.rates(datetime(2026, 3, 1, tzinfo=UTC)).cost(long_prompt) == Decimal("3")  # $10 above 200k
    assert opus.rates(datetime(2026, 3, 14, tzinfo=UTC)).cost(long_prompt) == Decimal("1.5")  # flat $5


def test_no_price_no_model() -> None:
    table = PriceTable()
    assert table.find("house-model-7") is None
    assert table.find(None) is None
    assert table.find("") is None


def test_the_long_context_suffix_and_date_are_dropped() -> None:
    table = PriceTable()
    assert table.find("claude-sonnet-4-5[1m]") == table.find("claude-sonnet-4-5")


def write_config(home: Path, text: str) -> dict[str, Any]:
    (home / "config.toml").write_text(text)
    prices: dict[str, Any] = load_settings(SECTIONS, home / "config.toml").settings[ModelSettings].prices
    return prices


def test_config_prices_add_and_override_models_by_longest_prefix(toka_home: Path) -> None:
    prices = write_config(
        toka_home,
        '[models.prices."house"]\ninput = 1.0\noutput = 2.0\n'
        '[models.prices."house-model"]\ninput = 0.5\noutput = 1.5\n'
        '[models.prices."claude-sonnet-4-5"]\ninput = 2.0\noutput = 10.0\n'
        "tiers = [{ above = 200000, input = 4.0, output = 20.0 }]\n",
    )
    table = PriceTable(prices)
    house = table.find("house-model-7")
    assert house is not None and (house.model, house.origin) == ("house-model", "config")
    assert house.rates(MOMENTS[0]).cost(Tokens(input=1_000_000, output=1_000_000)) == Decimal("2.0")
    sonnet = table.find("claude-sonnet-4-5-20250929")
    assert sonnet is not None and sonnet.origin == "config"
    rates = sonnet.rates(MOMENTS[0])
    assert rates.cost(Tokens(input=1_000_000), prompt=1000) == Decimal("2")
    assert rates.cost(Tokens(input=1_000_000), prompt=300_000) == Decimal("4")
    # cache tokens of a model priced without cache prices pay its input price
    assert rates.cost(Tokens(cache_read=1_000_000), prompt=1000) == Decimal("2")
    assert table.describe() == {"table": "genai-prices 0.2.3", "config": ["claude-sonnet-4-5", "house", "house-model"]}


def test_config_prices_from_the_environment_as_json(toka_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKA_MODEL_PRICES", '{"house": {"input": 1, "output": 2}}')
    prices = load_settings(SECTIONS, toka_home / "config.toml").settings[ModelSettings].prices
    assert prices == {"house": {"input": 1, "output": 2}}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("input = -1.0\noutput = 2.0", "must be a non-negative number"),
        ("input = 1.0\nouptut = 2.0", "unknown price 'ouptut'"),
        ("cache_read = 1.0", "needs an input or an output price"),
        ('input = "cheap"', "must be a non-negative number"),
        ("input = 1.0\ntiers = [{ above = 150000, input = 2.0 }]", "each tier needs `above`, one of 32000"),
        ("input = 1.0\ntiers = [{ above = 200000, output = 2.0 }]", "which the model has no price for"),
    ],
)
def test_bad_config_prices_are_refused_with_the_reason(toka_home: Path, table: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        write_config(toka_home, f'[models.prices."house"]\n{table}\n')
    assert message in caught.value.message
    assert "models.prices.house" in caught.value.message
