"""Events: the one kind of fact toka stores, and how each is named by its content.

An event's ``id`` is the blake3 of its *canonical header*: the canonical JSON (sorted keys, no
whitespace, UTF-8) of its session, agent, kind, timestamp, parents, payload digest and key.
The payload itself is named by the blake3 of its canonical bytes alone, so the same tool output
recorded a thousand times is one blob. Because each event's parents include the previous event
of its session, a session is a hash chain: changing any stored byte of an earlier event breaks
either that event's id, its payload digest, or the parent link of the event after it.

Timestamps are integers of microseconds since the epoch (UTC) inside toka, and ISO-8601 strings
with six fractional digits and a ``Z`` in every header, export and JSON output, so the bytes that
are hashed do not depend on the platform's float formatting.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) uses for strings
from typing import Any

from blake3 import blake3

from store.errors import InvalidEvent

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Times any ISO-8601 string can be formatted back to, whatever its UTC offset was.
_MIN_TS_US = (datetime(1, 1, 2, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_MAX_TS_US = (datetime(9999, 12, 30, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_KIND = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
# Control characters, and lone surrogates (which have no UTF-8 form), have no place in a name.
_UNFIT = re.compile("[\x00-\x1f\ud800-\udfff]")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# Limits that keep one event a reasonable row; far above anything an agent produces.
MAX_NAME_CHARS = 256
MAX_KEY_CHARS = 1024
MAX_PARENTS = 64

Payload = dict[str, Any]


# One encoder for every canonical serialisation: json.dumps builds a new one on each call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(value: Any) -> bytes:
    """The bytes that are hashed: sorted keys, no whitespace, UTF-8, no NaN."""
    return _CANONICAL.encode(value).encode("utf-8")


def digest(data: bytes) -> str:
    return blake3(data).hexdigest()


def now_us() -> int:
    return time.time_ns() // 1000


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=days)).isoformat()


@lru_cache(maxsize=4096)
def _second(epoch_s: int) -> str:
    days, seconds = divmod(epoch_s, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_day(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}."


def format_ts(ts_us: int) -> str:
    """2026-01-31T12:00:00.000000Z. Hashed in every header, so written out by hand: the same on
    every platform (a four-digit year, always). Events come in runs of nearby times, so the text
    of each second is kept: a third of the time of formatting it afresh."""
    seconds, micros = divmod(ts_us, 1_000_000)
    return f"{_second(seconds)}{micros:06d}Z"


def _in_range(ts_us: int | float, value: object) -> int:
    """``ts_us`` as an int, once it is within the years 1 to 9999 (checked first: a float as large
    as 1e308 cannot even become an int)."""
    if not _MIN_TS_US <= ts_us <= _MAX_TS_US:
        raise InvalidEvent(f"ts {value!r} is outside the years 1 to 9999", "give epoch seconds, not ms or ns")
    return int(round(ts_us))


def parse_ts(value: str | int | float) -> int:
    """An ISO-8601 string (naive means UTC) or epoch seconds, as UTC microseconds."""
    if isinstance(value, bool):
        raise InvalidEvent("ts must be an ISO-8601 string or epoch seconds, not a boolean")
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidEvent(f"ts {value!r} is not a time")
        return _in_range(value * 1_000_000, value)
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidEvent(f"ts {value!r} is not an ISO-8601 timestamp", "use e.g. 2026-01-31T12:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return _in_range((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds, value)


def header_id(
    session: str,
    agent: str | None,
    kind: str,
    ts_us: int,
    parents: tuple[str, ...],
    payload_digest: str,
    key: str | None,
) -> str:
    # canonical_json of {session, agent, kind, ts, parents, payload, key}, spelled out in sorted
    # key order: the same bytes (a test holds them equal), at a quarter of the cost.
    header = (
        f'{{"agent":{"null" if agent is None else encode_basestring(agent)},'
        f'"key":{"null" if key is None else encode_basestring(key)},'
        f'"kind":{encode_basestring(kind)},'
        f'"parents":[{",".join(encode_basestring(p) for p in parents)}],'
        f'"payload":{encode_basestring(payload_digest)},'
        f'"session":{encode_basestring(session)},'
        f'"ts":"{format_ts(ts_us)}"}}'
    )
    return digest(header.encode("utf-8"))


def event_json_text(
    seq: int,
    event_id: str,
    session: str,
    agent: str | None,
    kind: str,
    ts_us: int,
    parents: tuple[str, ...],
    payload_digest: str,
    key: str | None,
    payload_text: str,
) -> str:
    """An event in the shape of ``Event.to_json()``, as JSON text around a payload that is JSON
    text already: answering a query this way never parses and re-encodes the payloads."""
    parent_list = ",".join(f'"{p}"' for p in parents)
    return (
        f'{{"seq":{seq},"id":"{event_id}","session":{encode_basestring(session)},'
        f'"agent":{"null" if agent is None else encode_basestring(agent)},'
        f'"kind":{encode_basestring(kind)},"ts":"{format_ts(ts_us)}","parents":[{parent_list}],'
        f'"digest":"{payload_digest}","key":{"null" if key is None else encode_basestring(key)},'
        f'"payload":{payload_text}}}'
    )


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event as a writer hands it over: the store assigns seq and id, and parents by default."""

    session: str
    kind: str
    payload: Payload
    agent: str | None = None
    ts: int | None = None
    parents: tuple[str, ...] | None = None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """A committed event, as read back from the log."""

    seq: int
    id: str
    session: str
    agent: str | None
    kind: str
    ts: int
    parents: tuple[str, ...]
    digest: str
    key: str | None
    payload: Payload

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (docs/json.md); also toka's export format."""
        return {
            "seq": self.seq,
            "id": self.id,
            "session": self.session,
            "agent": self.agent,
            "kind": self.kind,
            "ts": format_ts(self.ts),
            "parents": list(self.parents),
            "digest": self.digest,
            "key": self.key,
            "payload": self.payload,
        }

    def to_json_text(self) -> str:
        """``to_json()`` as JSON text, with the payload's canonical form."""
        return event_json_text(
            self.seq,
            self.id,
            self.session,
            self.agent,
            self.kind,
            self.ts,
            self.parents,
            self.digest,
            self.key,
            _CANONICAL.encode(self.payload),
        )


def fit_name(value: Any, limit: int = MAX_NAME_CHARS) -> str | None:
    """``value`` when the store accepts it as a session, agent or key, else None (for importers,
    which drop what does not fit rather than fail the record)."""
    if isinstance(value, str) and value and len(value) <= limit and not _UNFIT.search(value):
        return value
    return None


# Sessions, agents and kinds seen to hold no character unfit for a name: an import names the same
# few in every event, and checking each again took a regex search apiece. Bounded: cleared when
# full.
_FIT_NAMES: dict[str, None] = {}
_FIT_NAMES_MAX = 4096


def _name(data: dict[str, Any], field: str, *, required: bool, limit: int = MAX_NAME_CHARS) -> Any:
    value = data.get(field)
    if value is None:
        if required:
            raise InvalidEvent(f"event needs a {field!r}", f"give {field} as a non-empty string")
        return None
    if value.__class__ is str and value in _FIT_NAMES and len(value) <= limit:
        return value
    if not isinstance(value, str) or not value or len(value) > limit:
        raise InvalidEvent(
            f"{field} must be a non-empty string of at most {limit} characters",
            f"got {type(value).__name__}",
        )
    if _UNFIT.search(value):
        raise InvalidEvent(f"{field} must not contain control characters or lone surrogates")
    if limit != MAX_KEY_CHARS:  # a key names one event: no use keeping it
        if len(_FIT_NAMES) >= _FIT_NAMES_MAX:
            _FIT_NAMES.clear()
        _FIT_NAMES[value] = None
    return str(value)  # a str subclass (a StrEnum's member) is kept as the plain string


def parse_new_event(data: Any, *, session: str | None = None) -> NewEvent:
    """Validate one event as it arrives as JSON; ``session`` fills in a missing session.

    Unknown fields are ignored so that a record exported by toka (which carries ``seq``,
    ``id`` and ``digest``) appends as it is.
    """
    if not isinstance(data, dict):
        raise InvalidEvent(f"an event must be a JSON object, not {type(data).__name__}")
    if session is not None and data.get("session") is None:
        data = {**data, "session": session}
    session_name = _name(data, "session", required=True)
    kind = _name(data, "kind", required=True, limit=128)
    if not _KIND.match(kind):
        raise InvalidEvent(f"kind {kind!r} is not a dotted name", "use letters, digits, - and _, e.g. tool.call")
    agent = _name(data, "agent", required=False)
    key = _name(data, "key", required=False, limit=MAX_KEY_CHARS)
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        raise InvalidEvent(
            f"payload must be a JSON object, not {type(payload).__name__}",
            'wrap the value, e.g. {"text": ...}',
        )
    ts = data.get("ts")
    if ts is not None:
        if not isinstance(ts, (str, int, float)):
            raise InvalidEvent("ts must be an ISO-8601 string or epoch seconds")
        ts = parse_ts(ts)
    parents = data.get("parents")
    if parents is not None:
        if (
            not isinstance(parents, list)
            or len(parents) > MAX_PARENTS
            or not all(isinstance(p, str) and _HEX64.match(p) for p in parents)
        ):
            raise InvalidEvent(
                "parents must be a list of event ids (64 lowercase hex digits)",
                "leave parents out to chain to the session's previous event",
            )
        parents = tuple(parents)
    return NewEvent(session_name, kind, payload, agent, ts, parents, key)
