"""Redaction of personal data and secrets from text before it leaves the process.

Whatever toka hands to something outside itself (an external summarizer, a handoff sent to
another agent) goes through ``redact`` first. Each kind of data is one precompiled pattern,
replaced by ``[redacted:<kind>]``; ``KINDS`` lists them in the order they are applied, and the
order matters: specific patterns run before general ones, so that what a specific one takes is
already a marker when a general one looks. A card number written ``4111 1111 1111 1111`` is a
``card`` before ``phone`` ever sees it, an address like ``192.168.1.20`` is an ``ipv4`` before
``phone``, a JWT after ``Bearer`` is a ``jwt`` and the bearer pattern finds nothing left to take,
and an email address is gone before the IP and phone patterns look at its digits. Markers
contain no digit, ``@`` or key prefix, so redacting twice changes nothing more.

Where a pattern alone would take ordinary text, a check follows the match: card numbers must
pass the Luhn check and start like a card issuer's; IPv6 candidates must parse as an address;
SSNs must use their dashes and avoid the numbers never issued. Dates, times, git SHAs, UUIDs,
port numbers, version strings of one to three dots and plain numbers are left alone. A dotted
quad of four numbers up to 255 is an address even after the word "version": the two cannot be
told apart, and here a false positive costs less than a leak (``v1.2.3.4`` and ``1.2.3.4.5`` are
left alone). docs/redaction.md lists every pattern with its near misses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Redacted:
    """Text with its personal data and secrets replaced, and how many of each kind were."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)  # kind -> replacements, kinds found only

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def marker(kind: str) -> str:
    return f"[redacted:{kind}]"


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# Issuer prefixes and lengths (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro):
# with the Luhn check, they keep 13- to 19-digit ids, timestamps and counters out.
_CARD_ISSUER = re.compile(
    r"4\d{12}(?:\d{3}){0,2}|5[1-5]\d{14}|2(?:2[2-9]\d|[3-6]\d\d|7[01]\d|720)\d{12}|3[47]\d{13}"
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12}(?:\d{3})?|35(?:2[89]|[3-8]\d)\d{12}(?:\d{3})?|3(?:0[0-5]|[689]\d)\d{11}"
    r"|62\d{14,17}|(?:50|5[6-9]|6\d)\d{10,17}"
)


def _is_card(candidate: str) -> bool:
    digits = candidate.replace(" ", "").replace("-", "")
    return _CARD_ISSUER.fullmatch(digits) is not None and _luhn(digits)


def _is_ipv6(candidate: str) -> bool:
    # "::1", "::" and two-group forms are left alone: too short to be anyone's, and too close to
    # times and C++ or Rust paths.
    groups = [g for g in re.split(r"[:.]", candidate) if g]
    if len(groups) < 3:
        return False
    try:
        import ipaddress  # here, not at import: the settings import this module for KINDS

        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hint: str | None = None  # a substring every match contains: no scan when the text lacks it
    check: Callable[[str], bool] | None = None  # applied to the replaced group
    group: int = 0  # the part of the match replaced; the rest stays


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"

# The kinds, in the order they are applied: specific patterns before general ones.
KINDS: tuple[str, ...] = (
    "private_key",
    "jwt",
    "api_key",
    "bearer",
    "email",
    "ipv6",
    "ipv4",
    "card",
    "ssn",
    "nino",
    "phone",
)


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    """The rules, compiled on first use (the settings import this module for KINDS alone)."""
    rules = _compile()
    assert tuple(rule.kind for rule in rules) == KINDS
    return rules


def _compile() -> tuple[_Rule, ...]:
    return (
        _Rule(
            "private_key",
            # The whole PEM block; a block cut short (a truncated output) up to where its base64 stops.
            re.compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
                r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,-]*)",
                re.DOTALL,
            ),
            hint="PRIVATE KEY-----",
        ),
        _Rule("jwt", re.compile(r"(?<![\w-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"), hint="eyJ"),
        _Rule(
            "api_key",
            re.compile(
                r"(?<![\w-])(?:"
                r"sk-ant-[\w-]{20,}"  # Anthropic
                r"|sk-(?:proj-|svcacct-|admin-)?[\w-]{20,}"  # OpenAI
                r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,}"  # GitHub
                r"|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"  # AWS access key ids
                r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
                r"|AIza[\w-]{35}"  # Google
                r")"
            ),
        ),
        _Rule(
            "bearer",
            # The credential after an Authorization scheme or a bare "Bearer"; the words stay.
            re.compile(r"(?i:\bauthorization\s*[:=]\s*(?:bearer|basic|token)\s+|\bbearer\s+)([\w.~+/-]{8,}=*)"),
            group=1,
        ),
        _Rule(
            "email",
            re.compile(
                r"(?<![\w.%+-])(?!git@)[A-Za-z0-9][\w.%+-]*@(?!\dx\.)(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}(?![\w-])",
            ),
            hint="@",
        ),
        _Rule(
            "ipv6",
            # Candidates are loose (two to seven colons, an IPv4 tail); _is_ipv6 parses each.
            re.compile(
                r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)"
            ),
            hint=":",
            check=_is_ipv6,
        ),
        _Rule("ipv4", re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.\d)")),
        _Rule("card", re.compile(r"(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)"), check=_is_card),
        _Rule("ssn", re.compile(r"(?<![\w.-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-]|\.\d)")),
        _Rule(
            "nino",
            # UK National Insurance number: two letters (not D, F, I, Q, U, V; second not O; not the
            # unused pairs), six digits, a suffix A to D.
            re.compile(
                r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
            ),
        ),
        _Rule(
            "phone",
            re.compile(
                r"(?<![\w.+-])(?:"
                r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}"  # international
                r"|(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}"  # North American
                r")(?![\w-]|\.\d)"
            ),
        ),
    )


def redact(text: str, kinds: Collection[str] | None = None) -> Redacted:
    """``text`` with every kind in ``kinds`` (all of ``KINDS`` by default) replaced by
    ``[redacted:<kind>]``, applied in the order of ``KINDS``; ValueError for an unknown kind."""
    if kinds is not None:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown redaction kinds {sorted(unknown)}: use some of {', '.join(KINDS)}")
    counts: dict[str, int] = {}
    for rule in _rules():
        if kinds is not None and rule.kind not in kinds:
            continue
        if rule.hint is not None and rule.hint not in text:
            continue
        text, found = _apply(rule, text)
        if found:
            counts[rule.kind] = found
    return Redacted(text, counts)


def _apply(rule: _Rule, text: str) -> tuple[str, int]:
    found = 0
    replacement = marker(rule.kind)

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        whole = match.group(0)
        if rule.check is not None and not rule.check(match.group(rule.group)):
            return whole
        found += 1
        if rule.group == 0:
            return replacement
        start, end = match.span(rule.group)
        offset = match.start()
        return whole[: start - offset] + replacement + whole[end - offset :]

    return rule.pattern.sub(replace, text), found
