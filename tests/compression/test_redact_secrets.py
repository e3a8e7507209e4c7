"""daemon.redact on credentials, in the formats the secret scanners publish (gitleaks' default rules,
detect-secrets' plugins): service keys by their prefixes, AWS secret access keys, JWTs, private
key blocks, passwords in URLs and generic ``password=``/``secret:``/``"token": "…"`` assignments;
and, as much a part of the corpus, their near misses: what looks like them and must stay.

Every value here is made up (or AWS's own documentation example) and has the published shape.
"""

from __future__ import annotations

import json

import pytest

from daemon.redact import KINDS, redact

AWS_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documentation example
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ALNUM36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HEX40 = "e83c5163316f89bfbde7d9ab23ca2e25604af290"  # a git commit id
HEX64 = "9c36e1b0d1c2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012345"  # a blake3 digest

# (text, the secret it holds, the kind it is redacted as)
SECRETS: list[tuple[str, str, str]] = [
    # Service keys by prefix (gitleaks: aws-access-token, github-*, gitlab-*, slack-*, stripe-*, gcp-*, ...)
    (f"aws_access_key_id = {AWS_ID}", AWS_ID, "api_key"),
    ("session ASIAY34FZKBOKMUTVV7A expires", "ASIAY34FZKBOKMUTVV7A", "api_key"),
    (f"GITHUB_TOKEN=ghp_{ALNUM36}", f"ghp_{ALNUM36}", "api_key"),
    (f"oauth gho_{ALNUM36}", f"gho_{ALNUM36}", "api_key"),
    (f"app token ghs_{ALNUM36}", f"ghs_{ALNUM36}", "api_key"),
    ("github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 8, "github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 8, "api_key"),
    ("CI_JOB: glpat-Ab12Cd34Ef56Gh78Ij90", "glpat-Ab12Cd34Ef56Gh78Ij90", "api_key"),
    ("trigger glptt-" + HEX40, "glptt-" + HEX40, "api_key"),
    ("runner glrt-Ab12Cd34Ef56Gh78Ij90", "glrt-Ab12Cd34Ef56Gh78Ij90", "api_key"),
    ("register GR1348941Ab12Cd34Ef56Gh78Ij90", "GR1348941Ab12Cd34Ef56Gh78Ij90", "api_key"),
    ("slack xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890123", "api_key"),
    ("user xoxp-1234567890-1234567890-1234567890-abcdef0123456789abcdef0123456789", "xoxp-1234567890", "api_key"),
    ("socket xapp-1-A0123456789-1234567890123-abcdef0123456789", "xapp-1-A0123456789", "api_key"),
    (
        "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
        "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "api_key",
    ),
    ("STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "api_key"),
    ("restricted rk_test_51H8aBcDeFgHiJkLmNoPqRsT", "rk_test_51H8aBcDeFgHiJkLmNoPqRsT", "api_key"),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "api_key"),
    ("client 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", "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", "api_key"),
    ("access ya29.a0AfH6SMBx1y2z3-Ab12Cd34Ef56Gh78Ij90", "ya29.a0AfH6SMBx1y2z3-Ab12Cd34Ef56Gh78Ij90", "api_key"),
    ("OPENAI_API_KEY=sk-proj-" + "Ab1Cd2Ef3G" * 5 + "T3BlbkFJ" + "Hi4Jk5Lm6N" * 5, "T3BlbkFJ", "api_key"),
    ("legacy 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", "sk-Ab1Cd2Ef3G", "api_key"),
    ("x-api-key: sk-ant-api03-" + "Ab1_Cd2-Ef" * 9 + "ghiAA", "sk-ant-api03-", "api_key"),
    ("admin sk-ant-admin01-" + "Ab1_Cd2-Ef" * 9 + "ghiAA", "sk-ant-admin01-", "api_key"),
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "api_key"),
    ("//registry.npmjs.org/:_authToken=npm_" + ALNUM36, "npm_" + ALNUM36, "api_key"),
    ("password = pypi-AgEIcHlwaS5vcmc" + "Ab1Cd2Ef3G" * 6, "pypi-AgEIcHlwaS5vcmc", "api_key"),
    ("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", "SG.Ab12Cd34", "api_key"),
    ("do dop_v1_" + HEX64, "dop_v1_" + HEX64, "api_key"),
    ("shop shpat_0123456789abcdef0123456789abcdef", "shpat_0123456789abcdef0123456789abcdef", "api_key"),
    # AWS secret access keys: no prefix of their own, found by what stands before them
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws_secret"),
    (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET, "aws_secret"),
    (f'{{"AccessKeyId": "{AWS_ID}", "SecretAccessKey": "{AWS_SECRET}"}}', AWS_SECRET, "aws_secret"),
    (f"AWS Secret Access Key [None]: {AWS_SECRET}", AWS_SECRET, "aws_secret"),
    (f"Access key ID,Secret access key\n{AWS_ID},{AWS_SECRET}\n", AWS_SECRET, "aws_secret"),
    (f"aws.secretKey('{AWS_SECRET}')", AWS_SECRET, "aws_secret"),
    # JWTs and private key blocks
    (
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
        "jwt",
    ),
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----", "MHcCAQEEIBkg", "private_key"),
    (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkq\n-----END ENCRYPTED PRIVATE KEY-----",
        "MIIFHDBOBgkq",
        "private_key",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0abc\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF0abc",
        "private_key",
    ),
    # Passwords in URLs (detect-secrets: BasicAuthDetector)
    ("REDIS_URL=redis://:s3cr3t-Pw@cache.internal:6379/0", "s3cr3t-Pw", "url_password"),
    ("git clone https://deploy:hunter2@git.example.com/org/repo.git", "hunter2", "url_password"),
    ("postgres://app:Tr0ub4dor&3@db:5432/app", "Tr0ub4dor&3", "url_password"),
    ("mongodb+srv://admin:correcthorse@cluster0.example.mongodb.net/?retryWrites=true", "correcthorse", "url_password"),
    ("amqp://guest:guest@localhost:5672/", "guest@", "url_password"),
    ('{"url": "mysql://root:p%40ss@127.0.0.1/db"}', "p%40ss", "url_password"),
    # Generic assignments (gitleaks: generic-api-key; detect-secrets: KeywordDetector)
    ("password=hunter2", "hunter2", "secret"),
    ("DB_PASSWORD=changeme", "changeme", "secret"),
    ("PGPASSWORD=opensesame psql -h db", "opensesame", "secret"),
    ('{"username": "app", "password": "correct horse battery staple"}', "correct horse", "secret"),
    ("password: 'p@ss w0rd'", "p@ss w0rd", "secret"),
    ('passwd = "letmein"', "letmein", "secret"),
    ("client_secret: 8f7e6d5c4b3a", "8f7e6d5c4b3a", "secret"),
    ("Authentication failed with api_key: secret123", "secret123", "secret"),
    ("apiKey: 'sk_test_12345',", "sk_test_12345", "secret"),
    ("X-Auth-Token: 0f1e2d3c4b5a", "0f1e2d3c4b5a", "secret"),
    ("GET https://api.example.com/v1/users?api_key=topsecret&user=123", "topsecret", "secret"),
    ("curl 'https://api.example.com/items?page=2&access_token=abcdef'", "abcdef", "secret"),
    ("mysql -u root --password=rootpw app", "rootpw", "secret"),
    ("vault login --token s.Ab12Cd34Ef56", "s.Ab12Cd34Ef56", "secret"),
    ('token := "a1b2c3d4e5"', "a1b2c3d4e5", "secret"),
    ("'password' => 'hunter2',", "hunter2", "secret"),
    ("secret_key = 'django-insecure-7a#k2@x!9'", "django-insecure", "secret"),
    ("spring.datasource.password=Sup3rS3cret", "Sup3rS3cret", "secret"),
    ('[tool call Bash] {"command":"export API_TOKEN=\\"tok_9f8e7d\\" && ./deploy"}', "tok_9f8e7d", "secret"),
]

# Text that looks like a credential, or talks about one, and must come out unchanged.
NEAR_MISSES: list[str] = [
    # Ids and digests toka and git print
    "uuid 4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe",
    f"commit {HEX40}",
    f"[blob {HEX64} 10806]",
    f"digest: {HEX64}",
    f'{{"id": "{HEX64}", "parents": ["{HEX64}"]}}',
    f"secret access key rotated at commit {HEX40}",
    # Empty, masked, placeholder and referenced values
    "password=",
    "password= ",
    'password = ""',
    '{"password": ""}',
    "password: null",
    "password=None",
    '"token": null',
    "password: ********",
    "Token: gho_************************************",
    "password=$DB_PASSWORD",
    'TOKEN="${SPOTTER_REVIEW_TOKEN:-}"',
    "ATTIO_API_KEY: ${{ secrets.ATTIO_API_KEY }}",
    "ATTIO_API_KEY=$ATTIO_API_KEY node test.js",
    "password: <your-password>",
    "password: '{{ db_password }}'",
    "postgresql://app:***@db.example.com:5432/app",
    "https://user:****@git.example.com/repo",
    "redis://${REDIS_USER}:${REDIS_PASSWORD}@cache:6379",
    # Code that names a credential without holding one
    "password = password;",
    "password = getpass.getpass()",
    "apiKey = process.env.ATTIO_API_KEY!;",
    "token = ReviewTokenStore.mint(project.id)",
    "token = Base.url_encode64(:crypto.strong_rand_bytes(32))",
    "params: { _csrf_token: csrfToken },",
    "env.CODEMIE_API_KEY = apiKeyValue;",
    "if password == stored_password:",
    "if (token === undefined) return",
    "def login(user: str, password: str) -> bool:",
    "password: Optional[str] = None",
    "x.json: %Jason.DecodeError{position: 0, token: nil, data: x}",
    'password = os.environ["DB_PASSWORD"]',
    # Prose about passwords
    "Enter your password to continue.",
    "The password: it must be long and never reused.",
    "Rotate the secret: see the runbook.",
    "a token: one word of the input",
    # Token counts and other keys that end nearby
    '{"max_tokens": 4096, "input_tokens": 12, "cache_read_input_tokens": 27000}',
    "tokens_before: 183555, tokens_after: 57310",
    "password_min_length = 12",
    "token_type: Bearer",
    "max_token=4096",
    "secret_count: 3",
    # URLs and addresses that hold no password
    "https://example.com:8443/path?page=2&sort=asc",
    "ssh://git@github.com:22/org/repo.git",
    "git@github.com:org/repo.git",
    "http://localhost:8080/",
    "see https://docs.example.com/auth#token=",
    # Prefixes without their key
    "pk_live_4eC39HqLyjWDarjtT1zdp7dc",  # a Stripe publishable key: public by design
    "sk_live_short",
    "glpat-short",
    "hf_short",
    "npm_install",
    "xoxo and hugs",
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[f"{k}:{t[:30]}" for t, _, k in SECRETS])
def test_published_secret_formats_are_redacted(text: str, secret: str, kind: str) -> None:
    result = redact(text)
    assert secret not in result.text, result.text
    assert f"[redacted:{kind}]" in result.text, result.text
    assert kind in result.counts


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.counts == {}


def test_the_corpus_covers_every_secret_kind() -> None:
    assert {kind for _, _, kind in SECRETS} == {"api_key", "aws_secret", "jwt", "private_key", "url_password", "secret"}
    assert {"api_key", "aws_secret", "jwt", "private_key", "url_password", "secret"} <= set(KINDS)


def test_a_url_keeps_its_user_and_host_and_loses_only_the_password() -> None:
    assert (
        redact("https://user:pass@host.example.com/x").text == "https://user:[redacted:url_password]@host.example.com/x"
    )
    assert redact("redis://:pw@cache:6379").text == "redis://:[redacted:url_password]@cache:6379"


def test_an_assignment_keeps_its_key_and_quotes() -> None:
    assert redact("password=hunter2").text == "password=[redacted:secret]"
    assert redact('"password": "hunter2"').text == '"password": "[redacted:secret]"'
    assert redact(f"aws_secret_access_key = {AWS_SECRET}").text == "aws_secret_access_key = [redacted:aws_secret]"


def test_an_aws_key_pair_is_two_redactions() -> None:
    result = redact(f"{AWS_ID},{AWS_SECRET}")
    assert result.text == "[redacted:api_key],[redacted:aws_secret]"
    assert result.counts == {"api_key": 1, "aws_secret": 1}


def test_secrets_inside_json_encoded_text_are_redacted() -> None:
    # A tool call's input as the context shows it: JSON, its quotes escaped once more inside strings.
    inner = json.dumps({"password": "hunter2", "url": "redis://:pw1@h:6379"})
    outer = json.dumps({"command": f"echo '{inner}' > config.json"})
    result = redact(outer)
    assert "hunter2" not in result.text and "pw1@" not in result.text
    assert result.counts == {"secret": 1, "url_password": 1}


def test_the_whole_corpus_redacted_twice_changes_nothing_more() -> None:
    once = redact("\n".join(text for text, _, _ in SECRETS))
    twice = redact(once.text)
    assert twice.text == once.text and twice.counts == {}


def test_secret_kinds_can_be_turned_off_one_by_one() -> None:
    text = f"password=hunter2 redis://:pw@h {AWS_ID},{AWS_SECRET}"
    assert redact(text, kinds={"api_key"}).text == f"password=hunter2 redis://:pw@h [redacted:api_key],{AWS_SECRET}"
    assert (
        redact(text, kinds={"url_password"}).text
        == f"password=hunter2 redis://:[redacted:url_password]@h {AWS_ID},{AWS_SECRET}"
    )
