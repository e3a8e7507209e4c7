"""The checks that follow a pattern's match where the pattern alone would take ordinary text.

Each takes the match and says whether it is redacted. A pattern finds candidates cheaply; the
check decides with what a regular expression cannot say well: a card number's Luhn digit, an
IPv6 address that parses, how many digits a phone number has, whether a value after
``password=`` is a credential or code that names one.
"""

from __future__ import annotations

import re

# Every marker starts so (``[redacted:<kind>]``); a value that is already one is left alone.
MARKER_OPEN = "[redacted:"


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


def card(match: re.Match[str]) -> bool:
    digits = match.group(0).replace(" ", "").replace("-", "")
    return _CARD_ISSUER.fullmatch(digits) is not None and _luhn(digits)


def ipv6(match: re.Match[str]) -> bool:
    # "::1", "::" and two-group forms are left alone: too short to be anyone's, and too close to
    # times and C++ or Rust paths.
    candidate = match.group(0)
    groups = [g for g in re.split(r"[:.]", candidate) if g]
    if len(groups) < 3:
        return False
    try:
        import ipaddress  # here, not at import: the settings import the package for KINDS

        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


def ipv4(match: re.Match[str]) -> bool:
    """Four numbers from 0 to 255, none with a leading zero."""
    return all(len(octet) == 1 or (octet[0] != "0" and int(octet) <= 255) for octet in match.group(0).split("."))


# E.164 allows at most 15 digits; no number in use has fewer than 7 with its country code.
PHONE_DIGITS = range(7, 16)
# "+" and digits with no separator is a phone number only at a length E.164 numbers written so
# reach nearly everywhere; shorter, it is a signed count: a diff's "+1234", an elision's
# "[+4096 chars]", a time zone's "+0100".
UNSEPARATED_MIN_DIGITS = 9


def phone(match: re.Match[str]) -> bool:
    text = match.group(0)
    digits = sum(char.isdigit() for char in text)
    if digits not in PHONE_DIGITS:
        return False
    return not (text.startswith("+") and text[1:].isdigit() and digits < UNSEPARATED_MIN_DIGITS)


def aws_secret(match: re.Match[str]) -> bool:
    """A secret access key is 40 characters of base64 with upper and lower case letters and
    digits or ``/+``: a git SHA or a hex digest is never one, nor is a long identifier."""
    value = match.group(match.lastindex or 0)
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() or c in "/+" for c in value)
    )


# Values that stand for a credential without being one: literals of the languages, and masks.
_LITERALS = frozenset({"null", "nil", "none", "undefined", "true", "false", "void"})
_MASKS = ("***", "•••", "xxxx", "XXXX", "...", "…")
# A name in code: dotted identifiers with no digit (``password``, ``process.env.API_KEY!``).
_CODE_NAME = re.compile(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)*[!?]?")
# The key names whose numbers are credentials (a PIN); for a token or key a number is a count.
_PASSWORD_KEY = re.compile(r"(?i)passw|passphrase|secret")
# The characters of a key's name, read backwards from where the pattern matched its end.
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def url_password(match: re.Match[str]) -> bool:
    return not _placeholder(match.group(match.lastindex or 0))


def assignment(match: re.Match[str]) -> bool:
    """Whether the value assigned to a credential's name is one (``daemon.redact.patterns``
    names the groups). A quoted value is, unless it is empty, a placeholder, a mask or the
    key's own name. An unquoted one is in a credential's place: a command-line flag
    (``--password x``), a URL query (``?token=x``), an environment assignment (``DB_PASSWORD=x``);
    elsewhere it is code naming a variable (``password = password``, ``token: nil``) unless it
    holds a digit or a symbol."""
    value = match.group(match.lastindex or 0)
    if _placeholder(value):
        return False
    text, start = match.string, match.start()
    key_start = start
    while key_start > 0 and text[key_start - 1] in _KEY_CHARS:
        key_start -= 1
    key = text[key_start : match.end("name")]
    if match.lastgroup != "bare":
        return _squashed(value) != _squashed(key) and _squashed(value) != _squashed(match.group("name"))
    if match.group("flag") is not None:
        return True
    separator = match.group("sep")
    before = text[key_start - 1] if key_start > 0 else ""
    if separator == "=" and (before in ("?", "&") or (key.isupper() and not before.isalnum())):
        return True  # a URL's query, or an environment variable
    if _CODE_NAME.fullmatch(value):
        return False
    return not value.isdigit() or _PASSWORD_KEY.search(key) is not None


def _placeholder(value: str) -> bool:
    """Empty, masked, a reference to something else (``$VAR``, ``${VAR}``, ``{{ var }}``,
    ``%(var)s``, ``<your-password>``), a language's literal, or already redacted."""
    stripped = value.strip()
    return (
        not stripped
        or stripped[0] in "$%{<"
        or stripped.startswith(MARKER_OPEN)
        or stripped.lower() in _LITERALS
        or any(mask in stripped for mask in _MASKS)
    )


def _squashed(name: str) -> str:
    return "".join(char for char in name.lower() if char.isalnum())


def email(match: re.Match[str]) -> bool:
    """``git@host:repo`` is a git remote, not a person."""
    return not match.group(0).startswith("git@")
