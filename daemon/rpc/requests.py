"""Typed requests: each op declares its arguments as a frozen dataclass, and :func:`parse`
checks a request's ``args`` against it in one place, so no handler reads ``args.get(...)``.

A field's annotation says what it takes: ``str``, ``int`` (not a bool), ``float`` (an int too),
``bool``, ``list[str]``, ``list[Any]``, ``dict[str, Any]``, ``Any`` (any JSON, null included),
each optionally ``| None``. A field without a default is required. ``Annotated[T, Check(...)]``
adds what the type cannot say: other JSON types it accepts and a conversion (a timestamp given
as text or a number becomes microseconds; a seq is checked against the store's range).
Arguments a request does not declare are ignored, as they always were. A number given as an
argument is finite: NaN and Infinity, which Python's JSON reads though JSON has no words for
them, are refused (inside a JSON value, they are for its op to refuse).

Dataclasses rather than msgspec: the checks are the ones the protocol always made, with the
same messages (docs/protocol.md), and a request has a handful of fields, so a faster decoder
would save nothing measurable on a daemon whose cost is the store.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from store.errors import UsageError
from store.events import parse_ts

R = TypeVar("R")
# Seqs are SQLite INTEGERs: a number past them names no event and cannot even be compared.
MAX_SEQ = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Check:
    """More than the annotation says: JSON types accepted besides it, and a conversion of the
    value (raising UsageError with a message that does not name the argument)."""

    accepts: tuple[type, ...] = ()
    convert: Callable[[Any], Any] | None = None


def _seq(value: int) -> int:
    if not 0 <= value <= MAX_SEQ:
        raise UsageError(f"must be a seq, from 0 to {MAX_SEQ}")
    return value


def _non_empty(value: str) -> str:
    if not value:
        raise UsageError("must not be empty")
    return value


Seq = Annotated[int, Check(convert=_seq)]
# A time as ISO-8601 text, seconds since the epoch, or microseconds: microseconds after parsing.
Timestamp = Annotated[int, Check(accepts=(str, float), convert=parse_ts)]
NonEmpty = Annotated[str, Check(convert=_non_empty)]


@dataclass(frozen=True, slots=True)
class NoArgs:
    """The request of an op that takes no arguments."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kinds: tuple[type, ...]  # the JSON types accepted; empty for Any
    items: type | None  # for a list: the type of its items, when checked
    required: bool
    check: Check | None
    described: str  # the type as messages name it


def parse(cls: type[R], args: dict[str, Any]) -> R:
    """``args`` as a ``cls``, or UsageError naming the first argument that does not fit."""
    values: dict[str, Any] = {}
    specs: tuple[_Field, ...] = _fields(cast(Hashable, cls))
    for spec in specs:
        if spec.name not in args or (args[spec.name] is None and spec.kinds):  # null is absent, but for Any
            if spec.required:
                raise UsageError(f"argument {spec.name!r} is required")
            continue
        values[spec.name] = _value(spec, args[spec.name])
    return cls(**values)


def _value(spec: _Field, value: Any) -> Any:
    if spec.kinds and not _fits(value, spec.kinds):
        raise UsageError(f"argument {spec.name!r} must be {spec.described}, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise UsageError(
            f"argument {spec.name!r} must be a finite number, got {value!r}", "JSON has no NaN or Infinity"
        )
    if spec.items is not None and isinstance(value, list) and not all(isinstance(i, spec.items) for i in value):
        raise UsageError(f"argument {spec.name!r} must be a list of {_PLURALS.get(spec.items, 'values')}")
    if spec.check is not None and spec.check.convert is not None:
        try:
            value = spec.check.convert(value)
        except UsageError as exc:
            joint = " " if exc.message.startswith("must") else ": "
            raise UsageError(f"argument {spec.name!r}{joint}{exc.message}", exc.hint) from None
    return value


def _fits(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int) and float in kinds:
        return True
    return isinstance(value, kinds)


_NAMES = {str: "str", int: "int", float: "int or float", bool: "bool", list: "list", dict: "dict"}
_PLURALS = {str: "strings", int: "integers", dict: "objects"}


@cache
def _fields(cls: Any) -> tuple[_Field, ...]:
    hints = get_type_hints(cls, include_extras=True)
    specs = []
    for field in dataclasses.fields(cls):
        kinds: list[type] = []
        items, check = None, None
        for member in _members(hints[field.name]):
            if get_origin(member) is Annotated:
                member, *extras = get_args(member)
                check = next((e for e in extras if isinstance(e, Check)), check)
            if get_origin(member) is list:
                item = (get_args(member) or (Any,))[0]
                items = None if item is Any else item
            if member is Any:
                kinds = []
                break
            kinds.append(get_origin(member) or member)
        if check is not None and kinds:
            kinds += check.accepts
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        described = " or ".join(dict.fromkeys(_NAMES.get(k, k.__name__) for k in kinds))
        specs.append(_Field(field.name, tuple(kinds), items, required, check, described))
    return tuple(specs)


def _members(annotation: Any) -> list[Any]:
    """The types of a union but None; the annotation itself otherwise."""
    if get_origin(annotation) is Annotated and get_origin(get_args(annotation)[0]) in (Union, types.UnionType):
        return _members(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return [a for a in get_args(annotation) if a is not type(None)]
    return [annotation]
