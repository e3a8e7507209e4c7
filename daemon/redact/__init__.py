"""Redaction of personal data and secrets from text before it is handed on.

Whatever toka hands to something outside itself or to a model (an external summarizer, a
handoff sent to another agent, a working context) goes through ``redact`` first; docs/redaction.md
lists exactly which outputs are redacted and which show the log as recorded. Each kind of data
is one precompiled pattern (``daemon.redact.patterns``), replaced by ``[redacted:<kind>]``;
``KINDS`` lists them in the order they are applied, and the order matters: specific patterns run
before general ones, so that what a specific one takes is already a marker when a general one
looks. A card number written ``4111 1111 1111 1111`` is a ``card`` before ``phone`` ever sees it,
an address like ``192.168.1.20`` is an ``ipv4`` before ``phone``, a JWT after ``Bearer`` is a
``jwt`` and the bearer pattern finds nothing left to take, a key with its service's prefix is an
``api_key`` before the assignment holding it (``GITHUB_TOKEN=ghp_…``) is looked at, and a URL's
password is gone before the email pattern takes ``pass@host`` for an address. Markers contain no
digit, ``@`` or key prefix, and a value that is already a marker is left alone, so redacting
twice changes nothing more.

Where a pattern alone would take ordinary text, a check follows the match
(``daemon.redact.checks``): card numbers must pass the Luhn check and start like a card issuer's;
IPv6 candidates must parse as an address; phone numbers must have as many digits as one;
a value assigned to ``password`` or ``token`` must not be code naming a variable. Dates, times,
git SHAs, UUIDs, digests, port numbers, version strings of one to three dots, plain numbers and
toka's own elision markers (``[+4096 chars]``) are left alone. A dotted quad of four numbers up to
255 is an address even after the word "version": the two cannot be told apart, and here a false
positive costs less than a leak (``v1.2.3.4`` and ``1.2.3.4.5`` are left alone).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from daemon.redact.checks import MARKER_OPEN
from daemon.redact.patterns import KINDS, Rule, rules

__all__ = ["KINDS", "Redacted", "marker", "redact"]

# Past this share of the text, the lines holding an anchor are scanned as one: cutting them out
# would cost more than it saves.
LINES_SHARE = 0.5


@dataclass(frozen=True)
class Redacted:
    """Text with its personal data and secrets replaced, and how many of each kind were."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)  # kind -> replacements, kinds found only

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def marker(kind: str) -> str:
    return f"{MARKER_OPEN}{kind}]"


def redact(text: str, kinds: Collection[str] | None = None) -> Redacted:
    """``text`` with every kind in ``kinds`` (all of ``KINDS`` by default) replaced by
    ``[redacted:<kind>]``, applied in the order of ``KINDS``; ValueError for an unknown kind."""
    if kinds is not None:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown redaction kinds {sorted(unknown)}: use some of {', '.join(KINDS)}")
    counts: dict[str, int] = {}
    lowered: str | None = None  # the text lower-cased, for the rules whose anchors are; None once it changed
    for rule in rules():
        if kinds is not None and rule.kind not in kinds:
            continue
        haystack = text
        if rule.folded:
            lowered = text.lower() if lowered is None else lowered
            # Lower-casing changes the length of a few characters (İ): then offsets do not carry over.
            haystack = lowered if len(lowered) == len(text) else text
        if rule.anchors and not any(anchor in haystack for anchor in rule.anchors):
            continue
        text, found = _apply(rule, text, haystack)
        if found:
            counts[rule.kind] = found
            lowered = None
    return Redacted(text, counts)


def _apply(rule: Rule, text: str, haystack: str) -> tuple[str, int]:
    """``text`` with the matches of ``rule`` replaced, and how many were; ``haystack`` is where
    its anchors are looked for (``text`` itself, or lower-cased)."""
    found = 0
    replacement = marker(rule.kind)

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        whole = match.group(0)
        if rule.check is not None and not rule.check(match):
            return whole
        found += 1
        group = match.lastindex or 0  # the last group that took part is the part replaced
        if group == 0:
            return replacement
        start, end = match.span(group)
        offset = match.start()
        return whole[: start - offset] + replacement + whole[end - offset :]

    spans = _lines_holding(haystack, rule.anchors) if rule.lines else None
    if spans is None or sum(end - start for start, end in spans) > LINES_SHARE * len(text):
        return rule.pattern.sub(replace, text), found
    parts, done = [], 0
    for start, end in spans:
        parts.append(text[done:start])
        parts.append(rule.pattern.sub(replace, text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts), found


def _lines_holding(haystack: str, anchors: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (start, end) of every line of ``haystack`` holding one of ``anchors``, in order,
    each line once."""
    starts: dict[int, int] = {}
    for anchor in anchors:
        at = haystack.find(anchor)
        while at != -1:
            start = haystack.rfind("\n", 0, at) + 1
            end = haystack.find("\n", at)
            end = len(haystack) if end == -1 else end
            starts[start] = end
            at = haystack.find(anchor, end)
    return sorted(starts.items())
