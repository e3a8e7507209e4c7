"""The hand-written header and timestamp formats are byte for byte the canonical ones."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from store.events import canonical_json, digest, format_ts, header_id, parse_ts

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "fields",
    [
        ("s", "a", "k", 1, (), "d" * 64, None),
        ('séß"\\ü😀', "a\u2028b\u00a0", "x.y", 12_345_678, ("a" * 64, "b" * 64), "f" * 64, 'k"ey\\'),
        ("s", None, "k", -5_000_000, (), "0" * 64, ""),
        ("日本語のセッション", "代理", "tool.call", 1_795_322_147_933_347, ("c" * 64,), "e" * 64, "\x7f"),
    ],
)
def test_header_id_hashes_the_canonical_json_of_the_header(fields: tuple) -> None:  # type: ignore[type-arg]
    session, agent, kind, ts, parents, payload, key = fields
    header = {
        "session": session,
        "agent": agent,
        "kind": kind,
        "ts": format_ts(ts),
        "parents": list(parents),
        "payload": payload,
        "key": key,
    }
    assert header_id(*fields) == digest(canonical_json(header))


def test_format_ts_matches_strftime_and_round_trips() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        ts = rng.randint(parse_ts("1000-01-01T00:00:00Z"), parse_ts("9999-12-29T00:00:00Z"))
        text = format_ts(ts)
        assert text == (EPOCH + timedelta(microseconds=ts)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert parse_ts(text) == ts


def test_format_ts_always_writes_four_digit_years() -> None:
    assert format_ts(parse_ts("0042-03-04T05:06:07.000008Z")) == "0042-03-04T05:06:07.000008Z"
