"""An independent reading of the fixtures' usage, for checking toka's reports against: the raw
transcript lines (not toka's parsers), deduplicated as ccusage does, priced by genai-prices itself.

- Claude Code: every ``assistant`` record with ``message.usage`` in every file (subagent files
  included), but model ``<synthetic>`` and API errors; one response per ``message.id`` +
  ``requestId``, across all files, keeping the record with the largest output; its time is the
  time of its first record.
- Codex: per rollout, the growth of ``total_token_usage`` (the cumulative count) from one
  ``token_count`` to the next, with the model of the latest ``turn_context``; a repeated total
  adds nothing, and a smaller one (the count started over) adds nothing either.

Prices: ``genai_prices.calc_price`` at the call's time, the model looked up as genai-prices does
and, when its maker's provider does not list it, in each provider in turn.
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

MICRODOLLAR = Decimal("0.000001")


@dataclass
class Call:
    session: str
    agent: str
    model: str | None
    ts: datetime
    input: int  # uncached
    output: int
    cache_write: int
    cache_write_1h: int
    cache_read: int


@dataclass
class Totals:
    calls: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cost: Decimal = field(default_factory=Decimal)
    unpriced: int = 0

    def add(self, call: Call, cost: Decimal | None) -> None:
        self.calls += 1
        self.input += call.input
        self.output += call.output
        self.cache_write += call.cache_write
        self.cache_read += call.cache_read
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost

    def as_report(self) -> dict[str, Any]:
        """In the terms of a report row."""
        return {
            "calls": self.calls,
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_creation_tokens": self.cache_write,
            "cache_read_tokens": self.cache_read,
            "cost_usd": float(self.cost.quantize(MICRODOLLAR)),
            "unpriced_calls": self.unpriced,
        }


def _records(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return None


class _Clock:
    """A file's records' times: a record without a readable one takes the time of the record
    before it, or the file's modification time (as toka's importers do)."""

    def __init__(self, path: Path) -> None:
        self.last = datetime.fromtimestamp(path.stat().st_mtime_ns // 1000 / 1_000_000, UTC)

    def of(self, record: dict[str, Any]) -> datetime:
        self.last = _time(record.get("timestamp")) or self.last
        return self.last


def claude_calls(folder: Path) -> list[Call]:
    responses: dict[tuple[str, str], tuple[Call, int]] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        file_agent = path.stem.removeprefix("agent-") if path.name.startswith("agent-") else None
        session_of_file = None
        clock = _Clock(path)
        for record in _records(path):
            ts = clock.of(record)
            if isinstance(record.get("sessionId"), str):
                session_of_file = session_of_file or record["sessionId"]
            message = record.get("message")
            if record.get("type") != "assistant" or not isinstance(message, dict):
                continue
            usage = message.get("usage")
            if not isinstance(usage, dict) or message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
                continue
            key = (message.get("id") or f"uuid:{record.get('uuid')}", record.get("requestId") or "")
            output = usage.get("output_tokens") or 0
            held = responses.get(key)
            if held is not None and held[1] >= output:
                continue
            split = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else {}
            sidechain = record.get("isSidechain") is True or file_agent is not None
            call = Call(
                session=record.get("sessionId") or session_of_file or path.stem,
                agent=(record.get("agentId") or file_agent or "sidechain") if sidechain else "main",
                model=message.get("model"),
                ts=held[0].ts if held is not None else ts,
                input=usage.get("input_tokens") or 0,
                output=output,
                cache_write=usage.get("cache_creation_input_tokens") or 0,
                cache_write_1h=split.get("ephemeral_1h_input_tokens") or 0,
                cache_read=usage.get("cache_read_input_tokens") or 0,
            )
            responses[key] = (call, output)
    return [call for call, _ in responses.values()]


def codex_calls(folder: Path) -> list[Call]:
    calls = []
    names = ("input_tokens", "cached_input_tokens", "output_tokens")
    for path in sorted(folder.glob("*.jsonl")):
        session, model, before = path.stem, None, dict.fromkeys(names, 0)
        clock = _Clock(path)
        for record in _records(path):
            ts = clock.of(record)
            payload = record.get("payload")
            if not isinstance(payload, dict):
                continue
            if record.get("type") == "session_meta" and session == path.stem:
                session = payload.get("id") or session
            elif record.get("type") == "turn_context" and payload.get("model"):
                model = payload["model"]
            elif record.get("type") == "event_msg" and payload.get("type") == "token_count":
                info = payload.get("info")
                total = info.get("total_token_usage") if isinstance(info, dict) else None
                if not isinstance(total, dict):
                    continue
                grown = {name: (total.get(name) or 0) - before[name] for name in names}
                before = {name: total.get(name) or 0 for name in names}
                if not any(grown.values()) or min(grown.values()) < 0:
                    continue  # nothing new, or the count started over
                whole, cached = grown["input_tokens"], grown["cached_input_tokens"]
                calls.append(Call(session, "main", model, ts, whole - cached, grown["output_tokens"], 0, 0, cached))
    return calls


def genai_cost(call: Call) -> Decimal | None:
    from genai_prices import Usage, calc_price
    from genai_prices.data import providers

    if not call.model:
        return None
    usage = Usage(
        input_tokens=call.input + call.cache_write + call.cache_read,
        cache_write_tokens=call.cache_write,
        cache_write_1h_tokens=call.cache_write_1h,
        cache_read_tokens=call.cache_read,
        output_tokens=call.output,
    )
    model = call.model.removesuffix("[1m]")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for provider_id in (None, *(p.id for p in providers)):
            try:
                return calc_price(usage, model, provider_id=provider_id, genai_request_timestamp=call.ts).total_price
            except LookupError:
                continue
    return None


def totals_by(calls: list[Call], label: Any) -> dict[Any, Totals]:
    found: dict[Any, Totals] = defaultdict(Totals)
    for call in calls:
        found[label(call)].add(call, genai_cost(call))
    return dict(found)


def local_day(zone: tzinfo) -> Any:
    return lambda call: call.ts.astimezone(zone).date().isoformat()
