"""The kinds of data redacted, each one precompiled pattern, in the order they are applied.

docs/redaction.md lists every kind with what it takes and its near misses. Two things shape the
patterns besides what they match:

- Speed. Python's engine skips quickly to where a match can start only when a pattern starts
  with a literal or a set of characters; a lookbehind in first place makes it try every
  position. So the boundary checks stand after the first character (``\\d(?<![\\w.-]\\d)``: a
  digit with no word character, dot or dash before it). Patterns that need a word of context
  (``://``, ``password``) name it in ``anchors``: a text without one is not scanned, and a text
  with one has only the lines holding it scanned.
- The part replaced. A pattern with groups replaces the last group that took part (the value
  after ``password=``, the password in a URL); the rest of the match stays as it was.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from daemon.redact.checks import assignment, aws_secret, card, email, ipv4, ipv6, phone, url_password


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    # Substrings one of which every match contains: a text holding none is not scanned.
    anchors: tuple[str, ...] = ()
    folded: bool = False  # the anchors are lower case and looked for in the text lower-cased
    lines: bool = False  # no match crosses a line: only the lines holding an anchor are scanned
    check: Callable[[re.Match[str]], bool] | None = None  # whether a match is redacted


# The kinds, in the order they are applied: specific patterns before general ones.
KINDS: tuple[str, ...] = (
    "private_key",
    "jwt",
    "api_key",
    "aws_secret",
    "bearer",
    "url_password",
    "secret",
    "email",
    "ipv6",
    "ipv4",
    "card",
    "ssn",
    "nino",
    "phone",
)

# Service keys by the prefix their issuer gives them (gitleaks' rules of the same names): the
# substrings that anchor them, and the alternatives, each starting with its literal prefix.
_SERVICE_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("sk-",), r"sk-ant-[\w-]{20,}|sk-(?:proj-|svcacct-|admin-)?[\w-]{20,}"),  # Anthropic, OpenAI
    (("gh", "github_pat_"), r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,}"),  # GitHub
    (
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),  # AWS access key ids
        r"AKIA[0-9A-Z]{16}(?![0-9A-Z])|ASIA[0-9A-Z]{16}(?![0-9A-Z])|ABIA[0-9A-Z]{16}(?![0-9A-Z])"
        r"|ACCA[0-9A-Z]{16}(?![0-9A-Z])|A3T[A-Z0-9][0-9A-Z]{16}(?![0-9A-Z])",
    ),
    (
        ("gl", "GR1348941"),  # GitLab: personal, pipeline trigger, runner and deploy tokens, runner registration
        r"glpat-[\w-]{20,}|glptt-[0-9a-f]{40}|glrt-[\w-]{20,}|gldt-[\w-]{20,}|GR1348941[\w-]{20,}",
    ),
    (("xox", "xapp-"), r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"),  # Slack tokens
    (("hooks.slack.com",), r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}"),  # Slack webhooks
    (
        ("_live_", "_test_", "_prod_"),  # Stripe secret and restricted keys (publishable pk_ keys are public)
        r"sk_(?:live|test|prod)_[A-Za-z0-9]{10,}|rk_(?:live|test|prod)_[A-Za-z0-9]{10,}",
    ),
    (("AIza", "GOCSPX-", "ya29."), r"AIza[\w-]{35}|GOCSPX-[\w-]{24,}|ya29\.[\w-]{20,}"),  # Google
    (("hf_", "api_org_"), r"hf_[A-Za-z]{34}(?![A-Za-z0-9])|api_org_[A-Za-z]{34}(?![A-Za-z0-9])"),  # Hugging Face
    (("npm_",), r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),  # npm
    (("pypi-",), r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}"),  # PyPI upload tokens
    (("SG.",), r"SG\.[\w-]{22}\.[\w-]{43}"),  # SendGrid
    (("_v1_",), r"do[por]_v1_[a-f0-9]{64}"),  # DigitalOcean
    (("shp",), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),  # Shopify
)

# The end of a credential's name in an assignment: ``db_password``, ``clientSecret``,
# ``AWS_SECRET_ACCESS_KEY``, ``x-api-key``, ``access_token``. What comes before it is the rest of
# the name; what follows must be the assignment, so ``max_tokens`` and ``token_type`` are not one.
_CREDENTIAL_NAME = r"(?:passw(?:or)?d|passphrase|secret(?:[_-]?(?:access[_-]?)?key)?|token|api[_-]?key|access[_-]?key)"
# How a value is given: ``=``, ``:``, ``:=``, ``=>`` (not ``==``, ``=~``, ``::``); after a
# command-line flag (``--password``), a space will do.
_ASSIGN = r"(?P<sep>[ \t]*(?::=|=>|=(?![=~>])|:(?!:))[ \t]*|(?(flag)[ \t]+|(?!)))"
# The value: quoted (quotes may be escaped once more inside a JSON string), or bare up to a
# space, quote or bracket; a bare word followed by "(" or "[" is a call or an index, not a value.
_VALUE = (
    r"(?:\\*\"(?P<dq>[^\"\s][^\"\n]{0,255}?)\\*\""
    r"|\\*'(?P<sq>[^'\s][^'\n]{0,255}?)\\*'"
    r"|`(?P<bq>[^`\s][^`\n]{0,255}?)`"
    r"|(?P<bare>[^\s\"'`,;&|<>(){}\[\]\\]{1,256}+)(?![(\[]))"
)


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The rules, compiled on first use (the settings import the package for KINDS alone)."""
    compiled = _compile()
    assert tuple(rule.kind for rule in compiled) == KINDS
    return compiled


def _compile() -> tuple[Rule, ...]:
    return (
        Rule(
            "private_key",
            # The whole PEM (or PGP) block; a block cut short (a truncated output) up to where its base64 stops.
            re.compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)",
                re.DOTALL,
            ),
            anchors=("PRIVATE KEY",),
        ),
        Rule("jwt", re.compile(r"eyJ(?<![\w-]eyJ)[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"), anchors=("eyJ",)),
        Rule(
            "api_key",
            re.compile("|".join(pattern for _, pattern in _SERVICE_KEYS)),
            anchors=tuple(anchor for anchors, _ in _SERVICE_KEYS for anchor in anchors),
            lines=True,
            check=_after_boundary,
        ),
        Rule(
            "aws_secret",
            # 40 characters of base64 after the key's name (``aws_secret_access_key = …``,
            # ``"SecretAccessKey": "…"``, ``Secret Access Key [None]: …``) or after its access key id.
            re.compile(
                r"(?:(?i:secret[ _-]?(?:access[ _-]?)?key)[^\n]{0,30}?"
                r"|(?:(?:AKIA|ASIA)[0-9A-Z]{16}|\[redacted:api_key\])[ \t]*[,;:|][ \t]*)"
                r"(?<![A-Za-z0-9/+])(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
            ),
            anchors=("secret", "akia", "asia", "[redacted:api_key]"),
            folded=True,
            lines=True,
            check=aws_secret,
        ),
        Rule(
            "bearer",
            # The credential after an Authorization scheme or a bare "Bearer"; the words stay.
            re.compile(r"(?i:\bauthorization\s*[:=]\s*(?:bearer|basic|token)\s+|\bbearer\s+)([\w.~+/-]{8,}=*)"),
            anchors=("bearer", "authorization"),
            folded=True,
        ),
        Rule(
            "url_password",
            # scheme://user:PASSWORD@host; the user and the host stay.
            re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:@/?#\[\]\"'<>\\]*:(?P<value>[^\s@/?#\[\]\"'<>\\]+)@"),
            anchors=("://",),
            lines=True,
            check=url_password,
        ),
        Rule(
            "secret",
            re.compile(
                r"(?P<flag>--(?:[A-Za-z0-9]+-){0,4})?(?P<name>(?i:"
                + _CREDENTIAL_NAME
                + r"))(?:\\*[\"'`])?"
                + _ASSIGN
                + _VALUE
            ),
            anchors=("pass", "secret", "token", "key"),
            folded=True,
            lines=True,
            check=assignment,
        ),
        Rule(
            "email",
            re.compile(
                r"[A-Za-z0-9](?<![\w.%+-][A-Za-z0-9])[\w.%+-]*@(?!\dx\.)(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}(?![\w-])",
            ),
            anchors=("@",),
            lines=True,
            check=email,
        ),
        Rule(
            "ipv6",
            # Candidates are loose (two to seven colons, an IPv4 tail); checks.ipv6 parses each.
            re.compile(
                # The first character read apart, so that the engine skips to where one can start.
                r"[0-9A-Fa-f:](?<![\w:.][0-9A-Fa-f:])"
                r"(?:(?<=:)|[0-9A-Fa-f]{0,3}:)(?:[0-9A-Fa-f]{0,4}:){1,6}"
                r"(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)"
            ),
            anchors=(":",),
            lines=True,
            check=ipv6,
        ),
        Rule(
            "ipv4",
            re.compile(r"\d(?<![\w.]\d)\d{0,2}(?:\.\d{1,3}){3}(?![\w]|\.\d)"),
            anchors=(".",),
            check=ipv4,
        ),
        Rule("card", re.compile(r"\d(?<![\w.-]\d)(?:[ -]?\d){12,18}(?![\w-]|\.\d)"), check=card),
        Rule(
            "ssn",
            re.compile(r"\d(?<![\w.-]\d)\d\d(?<!000)(?<!666)(?<!9\d\d)-(?!00)\d{2}-(?!0000)\d{4}(?![\w-]|\.\d)"),
            anchors=("-",),
        ),
        Rule(
            "nino",
            # UK National Insurance number: two letters (not D, F, I, Q, U, V; second not O; not the
            # unused pairs), six digits, a suffix A to D.
            re.compile(
                r"[A-CEGHJ-PR-TW-Z](?<!\w[A-CEGHJ-PR-TW-Z])[A-CEGHJ-NPR-TW-Z](?<!BG|GB|NK|KN|TN|NT|ZZ)"
                r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
            ),
        ),
        Rule(
            "phone",
            # The shapes of phone numbers; phone counts their digits.
            re.compile(
                r"[+(\d](?<![\w.+-][+(\d])(?:"
                r"(?<=\+)\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}"  # international
                r"|(?<=\()\d{3}\) ?\d{3}[-. ]\d{4}"  # North American, (415) 555-0132
                r"|(?<=\d)\d\d[-. ]\d{3}[-. ]\d{4}"  # North American, 415-555-0132
                r")(?![\w-]|\.\d)"
            ),
            check=phone,
        ),
    )


def _after_boundary(match: re.Match[str]) -> bool:
    """A key's prefix starts a word: ``risk-ant-…`` and ``task-…`` are not keys."""
    start = match.start()
    return start == 0 or not (match.string[start - 1].isalnum() or match.string[start - 1] in "_-")
