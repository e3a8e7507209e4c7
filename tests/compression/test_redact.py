"""daemon.redact: each pattern with its near misses, the order of the patterns, and configuration."""

from __future__ import annotations

import pytest

from daemon.redact import KINDS, redact

# kind -> (text that must be redacted, texts of the same look that must not be)
CASES: dict[str, tuple[list[str], list[str]]] = {
    "email": (
        ["mail jane.doe+work@example.co.uk today", "a.b@mail-server.example.org"],
        ["icon@2x.png", "@decorator", "user@localhost", "pkg@1.2.3", "git@github.com:org/repo.git"],
    ),
    "phone": (
        ["call +44 20 7946 0958", "call (415) 555-0132", "call 415-555-0132", "call +1-415-555-0132"],
        [
            "2026-11-22",
            "12:30:45",
            "port 8080",
            "1234567",
            "3.14159",
            "ids 415 555",
            "+4096",  # a signed count, not a number anyone can call
            "diff +1234 -56",
            "at 10:00+0100",
        ],
    ),
    "card": (
        ["pay 4111 1111 1111 1111 now", "5500-0000-0000-0004", "378282246310005", "6011111111111117"],
        ["4111 1111 1111 1112", "1763798400000000", "1732252800000", "1234567890123456"],
    ),
    "ssn": (["ssn 123-45-6789."], ["000-12-3456", "666-12-3456", "123-00-6789", "2026-11-22", "123-456-7890"]),
    "nino": (["NINO AB 12 34 56 C", "JG103759A"], ["AB123456E", "GB123456A", "DA123456A", "AB1234567"]),
    "ipv4": (
        ["from 192.168.1.20:8080", "host 8.8.8.8.", "version 1.2.3.4"],
        ["v1.2.3.4", "1.2.3.4.5", "3.11.7", "256.1.1.1", "1.2.3"],
    ),
    "ipv6": (
        ["at 2001:db8:85a3::8a2e:370:7334", "2001:0db8:0000:0000:0000:ff00:0042:8329", "[::ffff:192.0.2.1]:443"],
        ["::1", "fe80::1", "12:30:45", "std::vector", "a::b", "10:30", "de:ad:be"],
    ),
    "api_key": (
        [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx",
            "sk-abcdefghijklmnopqrstuvwxyz0123",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-1234567890-abcdefghij",
        ],
        ["sk-learn", "risk-ant-thing", "ghp_short", "AKIAIOSFODNN7EXAMPL", "xoxo", "task-abcdefghijklmnopqrstuvwxyz"],
    ),
    "aws_secret": (
        [
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ],
        ["secret access key of commit 4f65f1980c0c47a2b6ab5f2e30ae5cbe12345678", "aws_secret_access_key = short"],
    ),
    "url_password": (
        ["redis://:pw@cache:6379", "https://user:pass@host.example.com/x"],
        ["https://host.example.com:8443/x", "ssh://git@host:22/repo", "postgresql://u:***@db/app"],
    ),
    "secret": (
        ["password=hunter2", '"password": "hunter2"', "api_key: secret123", "?token=abc&page=2"],
        ["password=", "password: null", "password = password;", "max_tokens: 4096", "Enter your password: "],
    ),
    "bearer": (
        ["Authorization: Bearer abc.def-ghi_jkl~123", "authorization=token 0123456789abcdef", "bearer Zm9vYmFyYmF6"],
        ["Bearer of bad news", "the bearer short"],
    ),
    "jwt": (
        ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
        ["eyJhbGciOiJIUzI1NiJ9", "eyJ.eyJ.abc"],
    ),
    "private_key": (
        [
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc==\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",  # cut short
        ],
        ["-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----"],
    ),
}

# What must never be redacted, whatever is enabled.
ORDINARY = [
    "2026-11-22T07:31:00.000000Z",
    "12:30:45.123",
    "commit 4f65f1980c0c47a2b6ab5f2e30ae5cbe12345678",
    "uuid 4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe",
    "listening on :8080 and localhost:5432",
    "1,234,567 tokens; 3.14; -42; 100000000",
    "Python 3.11.7, SQLite 3.40.1",
    "ts 1763798400000000",
]


def test_kinds_are_all_covered_and_ordered_specific_first() -> None:
    assert set(CASES) == set(KINDS)
    assert KINDS.index("private_key") < KINDS.index("jwt") < KINDS.index("bearer")
    assert KINDS.index("ipv4") < KINDS.index("card") < KINDS.index("phone")
    assert KINDS.index("email") < KINDS.index("phone")
    # A key with a prefix before the assignment holding it; a URL's password before the email
    # pattern takes "pass@host" for an address.
    assert KINDS.index("api_key") < KINDS.index("aws_secret") < KINDS.index("secret")
    assert KINDS.index("url_password") < KINDS.index("email") and KINDS.index("secret") < KINDS.index("email")


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_pattern_redacts_its_kind(kind: str) -> None:
    for text in CASES[kind][0]:
        result = redact(text)
        assert f"[redacted:{kind}]" in result.text, text
        assert result.counts.get(kind) == 1, (text, result.counts)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_near_misses_are_left_alone(kind: str) -> None:
    for text in CASES[kind][1]:
        result = redact(text)
        assert kind not in result.counts, (text, result.text)


@pytest.mark.parametrize("text", ORDINARY)
def test_dates_shas_uuids_ports_and_numbers_are_left_alone(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "the output… [+4096 chars]",  # the handoff's own marker for a text it cut
        "a request… [+12 chars] and an output… [+1048576 chars]",
        "[blob 9c36e1 10806]",
        "a summary quoting a result… [2731 chars]",
    ],
)
def test_toka_elision_markers_are_not_phone_numbers(text: str) -> None:
    assert redact(text).text == text


def test_card_with_spaces_or_dashes_is_a_card_not_a_phone() -> None:
    for text in ("4111 1111 1111 1111", "4111-1111-1111-1111", "+ 5500 0000 0000 0004"):
        assert redact(text).counts == {"card": 1}, text


def test_ipv4_is_not_a_phone() -> None:
    assert redact("ping 192.168.100.200").counts == {"ipv4": 1}
    assert redact("ping 192.168.100.200").text == "ping [redacted:ipv4]"


def test_jwt_after_bearer_is_labelled_jwt() -> None:
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    result = redact(f"Authorization: Bearer {token}")
    assert result.text == "Authorization: Bearer [redacted:jwt]"
    assert result.counts == {"jwt": 1}


def test_text_mixing_several_kinds() -> None:
    text = (
        "From jane@example.com (tel. +1 415 555 0132) on 10.0.0.7, card 4111-1111-1111-1111,\n"
        "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 at 2026-11-22 12:00, commit 4f65f19."
    )
    result = redact(text)
    assert result.text == (
        "From [redacted:email] (tel. [redacted:phone]) on [redacted:ipv4], card [redacted:card],\n"
        "key [redacted:api_key] at 2026-11-22 12:00, commit 4f65f19."
    )
    assert result.counts == {"email": 1, "phone": 1, "ipv4": 1, "card": 1, "api_key": 1}
    assert result.total == 5


def test_redacting_twice_changes_nothing_more() -> None:
    text = " ".join(sample for positives, _ in CASES.values() for sample in positives)
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


def test_disabled_kinds_are_left_alone() -> None:
    text = "jane@example.com 10.0.0.7 4111 1111 1111 1111"
    result = redact(text, kinds={"ipv4"})
    assert result.text == "jane@example.com [redacted:ipv4] 4111 1111 1111 1111"
    assert redact(text, kinds=()).text == text


def test_disabling_the_specific_kind_leaves_the_text_to_the_general_one_only_when_it_fits() -> None:
    # Without "card", a card number is not taken for a phone: phone patterns want phone shapes.
    assert redact("4111 1111 1111 1111", kinds={"phone"}).counts == {}


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown redaction kinds"):
        redact("text", kinds={"passport"})


def test_large_text_is_redacted_in_one_pass_per_kind() -> None:
    block = "line 42: GET /api/v1/items?id=1234 200 OK in 3.2 ms from 10.1.2.3 user jane@example.com\n"
    text = block * 20_000  # ~1.8 MB
    result = redact(text)
    assert result.counts == {"email": 20_000, "ipv4": 20_000}
    assert "1234 200" in result.text


def test_long_runs_of_near_matches_are_left_alone() -> None:
    # Runs that each pattern starts on at every position: a pattern that backtracks badly hangs here.
    for text in ("1" * 50_000, "a:" * 50_000, "1 " * 50_000, "a@" * 20_000, "-" * 50_000, "eyJ." * 20_000):
        assert redact(text).text == text, text[:10]
