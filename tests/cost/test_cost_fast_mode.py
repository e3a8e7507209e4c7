"""Fast mode is priced: a call Claude Code records with ``usage.speed: "fast"`` pays the model's
fast-mode prices, from genai-prices where it has them and from the reviewed additions where it does
not; models genai-prices lacks are priced from the additions, and an addition it has come to cover
is refused."""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from test_cost_prices import MOMENTS, USAGES, genai_usage

from daemon.client.sync import Client
from daemon.client.transfer import import_files
from daemon.cost.generate import add, genai_table
from daemon.cost.prices import ModelPrices, PriceTable, Tokens, _entry, load_table
from store.usage import FAST, class_speed, prompt_class, usage_row

SPRING = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)


def test_a_fast_call_costs_what_genai_prices_gives_for_speed_fast() -> None:
    from genai_prices.data import providers

    shipped = {(p["id"], m["id"]): m for p in load_table().providers for m in p["models"]}
    compared = []
    for provider in providers:
        for model in provider.models:
            if not any(dict(v.when) == {"speed": "fast"} for v in getattr(model, "price_variants", None) or ()):
                continue
            raw = shipped[(provider.id, model.id)]
            ours = ModelPrices(model.id, provider.id, "table", tuple(_entry(e) for e in raw["prices"]),
                               tuple(_entry(e) for e in raw["fast"]))  # fmt: skip
            for tokens in USAGES:
                for moment in MOMENTS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        theirs = model.calc_price(
                            genai_usage(tokens), provider, genai_request_timestamp=moment, price_context={"speed": FAST}
                        )
                    assert ours.rates(moment, FAST).cost(tokens) == theirs.total_price, (model.id, tokens, moment)
                    compared.append(model.id)
    assert {"claude-opus-4-8", "claude-opus-5", "claude-opus-5-5"} <= set(compared)


def test_opus_4_8_in_fast_mode_costs_twice_its_standard_rate() -> None:
    opus = PriceTable().find("claude-opus-4-8")
    assert opus is not None
    tokens = Tokens(input=1000, output=2000, cache_write=3000, cache_read=40_000)
    standard = Decimal("0.005") + Decimal("0.05") + Decimal("0.01875") + Decimal("0.02")
    assert opus.rates(SPRING).cost(tokens) == standard
    assert opus.rates(SPRING, FAST).cost(tokens) == 2 * standard


def test_opus_4_6_in_fast_mode_is_six_times_the_standard_rate_of_its_prompt_size() -> None:
    """Anthropic's fast-mode prices for Opus 4.6 (price_additions.json): $30/$150 per million
    input/output tokens up to a 200k prompt, $60/$225 above, while the long-context tier stood."""
    opus = PriceTable().find("claude-opus-4-6")
    assert opus is not None and opus.fast_multiplier == Decimal(6)
    small, large = Tokens(input=1000, output=1000), Tokens(input=250_000, output=1000)
    before = datetime(2026, 2, 1, tzinfo=UTC)  # the long-context tier still stood
    assert opus.rates(before, FAST).cost(small) == Decimal("0.03") + Decimal("0.15")
    assert opus.rates(before, FAST).cost(large) == Decimal(60) * 250_000 / 1_000_000 + Decimal("0.225")
    assert opus.rates(SPRING, FAST).cost(large) == Decimal(30) * 250_000 / 1_000_000 + Decimal("0.15")


def test_a_model_without_fast_prices_pays_its_standard_ones_in_fast_mode() -> None:
    sonnet = PriceTable().find("claude-sonnet-4-6")
    assert sonnet is not None and not sonnet.has_fast
    tokens = Tokens(input=1000, output=1000)
    assert sonnet.rates(SPRING, FAST).cost(tokens) == sonnet.rates(SPRING).cost(tokens)


def test_fast_calls_are_a_class_of_their_own_in_the_usage_projection() -> None:
    payload = {"model": "claude-opus-4-8", "input_tokens": 5, "cache_read_tokens": 20_000, "output_tokens": 9}
    standard = usage_row(0, "s", None, payload | {"speed": "standard"})
    fast = usage_row(0, "s", None, payload | {"speed": FAST})
    assert standard.prompt_class == prompt_class(20_005) and class_speed(standard.prompt_class) is None
    assert fast.prompt_class != standard.prompt_class and class_speed(fast.prompt_class) == FAST


def transcript_record(uuid: str, message: str, speed: str) -> dict[str, Any]:
    """An assistant record as Claude Code 2.1.170 and later writes it, ``usage.speed`` included."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s-fast",
        "timestamp": "2026-11-02T10:00:00.000Z",
        "requestId": f"req-{message}",
        "cwd": "/work/app",
        "version": "2.1.332",
        "message": {
            "id": message,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [{"type": "text", "text": "done"}],
            "usage": {
                "input_tokens": 1000,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 100_000,
                "output_tokens": 2000,
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
                "inference_geo": "not_available",
                "speed": speed,
            },
        },
    }


def test_a_fast_session_imported_from_its_transcript_costs_the_fast_rate(daemon: object, tmp_path: Path) -> None:
    path = tmp_path / "s-fast.jsonl"
    records = [transcript_record("u1", "msg-1", "fast"), transcript_record("u2", "msg-2", "standard")]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    with Client() as client:
        import_files(client, [path])
        sessions = client.call("report", kind="session")
    [row] = sessions["rows"]
    standard = Decimal("0.005") + Decimal("0.05") + Decimal("0.05")  # input, cache reads, output
    assert Decimal(str(row["cost_usd"])) == 2 * standard + standard
    assert row["calls"] == 2 and row["unpriced_calls"] == 0


def test_gpt_5_3_codex_spark_is_priced_from_the_additions() -> None:
    spark = PriceTable().find("gpt-5.3-codex-spark")
    assert spark is not None and (spark.provider, spark.model) == ("openai", "gpt-5.3-codex-spark")
    tokens = Tokens(input=100_000, output=10_000, cache_read=900_000)
    assert spark.rates(SPRING).cost(tokens) == Decimal("0.175") + Decimal("0.14") + Decimal("0.1575")


@pytest.mark.parametrize(
    ("additions", "message"),
    [
        (
            {
                "models": [
                    {"provider": "openai", "id": "gpt-5.3-codex", "match": {"equals": "gpt-5.3-codex"}, "prices": []}
                ]
            },
            "genai-prices 0.2.3 prices gpt-5.3-codex",
        ),
        (
            {"fast_multipliers": [{"provider": "anthropic", "model": "claude-opus-4-8", "multiplier": "2"}]},
            "genai-prices 0.2.3 prices claude-opus-4-8 in fast mode",
        ),
    ],
)
def test_an_addition_genai_prices_covers_is_refused(additions: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        add(genai_table(), additions)


def test_more_output_of_a_fast_response_is_priced_as_fast_too() -> None:
    """A response still being written when its file was read: the revision that adds its later
    output carries its speed, so that output pays the fast price as well."""
    from daemon.ingest.claude_code import ClaudeCodeParser
    from daemon.ingest.lines import ParseStats

    parser = ClaudeCodeParser(Path("s-fast.jsonl"), ParseStats())
    first = transcript_record("u1", "msg-1", "fast")
    later = transcript_record("u2", "msg-1", "fast")
    later["message"]["usage"]["output_tokens"] = 5000
    list(parser.feed(1, b"", first))
    list(parser.flush(end=False))
    [revision] = [e for e in parser.feed(2, b"", later) if e["kind"] == "usage"]
    assert revision["payload"]["revision"] is True
    assert (revision["payload"]["output_tokens"], revision["payload"]["speed"]) == (3000, FAST)
    row = usage_row(0, "s-fast", None, revision["payload"])
    assert class_speed(row.prompt_class) == FAST
