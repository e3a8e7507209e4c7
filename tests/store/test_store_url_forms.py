"""store/url.py's ``redacted``: a database URL as status, logs, errors and ``config show`` print it, with
the password hidden in each form libpq takes it, and anything without one left as it is."""

from __future__ import annotations

import pytest

from store.url import HIDDEN, redacted


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://toka:s3cr3t@db.example:5432/toka?sslmode=require",
            f"postgresql://toka:{HIDDEN}@db.example:5432/toka?sslmode=require",
        ),
        ("postgres://toka:s3cr3t@h1:5432,h2:5433/toka", f"postgres://toka:{HIDDEN}@h1:5432,h2:5433/toka"),
        ("postgresql://toka:p@ss:w0rd@db/toka", f"postgresql://toka:{HIDDEN}@db/toka"),  # @ and : in the password
        ("postgresql://toka:s3%40cr3t@db/toka", f"postgresql://toka:{HIDDEN}@db/toka"),  # percent-encoded
        ("postgresql://:s3cr3t@db/toka", f"postgresql://:{HIDDEN}@db/toka"),  # no user name
    ],
    ids=["user and password", "several hosts", "at sign in it", "percent-encoded", "no user"],
)
def test_the_password_of_a_url_is_hidden(url: str, shown: str) -> None:
    assert redacted(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://toka@db/toka?password=s3cr3t&sslmode=require",
            f"postgresql://toka@db/toka?password={HIDDEN}&sslmode=require",
        ),
        (
            "postgresql://toka@db/toka?sslmode=require&PASSWORD=s3cr3t",
            f"postgresql://toka@db/toka?sslmode=require&PASSWORD={HIDDEN}",
        ),
        (
            "postgresql://toka:one@db/toka?password=two&host=/run/postgresql",
            f"postgresql://toka:{HIDDEN}@db/toka?password={HIDDEN}&host=/run/postgresql",
        ),
    ],
    ids=["first parameter", "any case, last parameter", "both places"],
)
def test_a_password_parameter_of_a_url_is_hidden(url: str, shown: str) -> None:
    assert redacted(url) == shown


@pytest.mark.parametrize(
    ("conninfo", "shown"),
    [
        ("host=db user=toka password=s3cr3t dbname=toka", f"host=db user=toka password={HIDDEN} dbname=toka"),
        ("host=db password = s3cr3t", f"host=db password = {HIDDEN}"),
        (r"host=db password='s3 cr\'3t' dbname=toka", f"host=db password={HIDDEN} dbname=toka"),  # quoted, escaped
    ],
    ids=["plain", "spaces around =", "quoted"],
)
def test_the_password_of_a_key_value_string_is_hidden(conninfo: str, shown: str) -> None:
    assert redacted(conninfo) == shown


@pytest.mark.parametrize(
    "url",
    [
        "postgresql:///db",
        "postgresql://toka@db.example/toka",
        "postgresql://db/toka?sslmode=verify-full&host=/run/postgresql",
        "postgresql://toka@db/toka?passfile=/home/toka/.pgpass",
        "host=/run/postgresql dbname=toka user=toka",
        "",
    ],
)
def test_a_url_without_a_password_is_shown_unchanged(url: str) -> None:
    assert redacted(url) == url


def test_a_url_that_cannot_be_read_shows_only_its_scheme() -> None:
    assert redacted("postgresql://toka:s3cr3t@[::1/toka") == f"postgresql://{HIDDEN}"


@pytest.mark.parametrize("url", ["postgresql://toka@db/toka?sslpassword=s3cr3t", "host=db sslpassword=s3cr3t"])
def test_an_sslpassword_is_hidden(url: str) -> None:
    assert "s3cr3t" not in redacted(url)


def test_a_url_without_a_host_keeps_its_form_when_its_password_parameter_is_hidden() -> None:
    assert redacted("postgresql:///toka?password=s3cr3t") == f"postgresql:///toka?password={HIDDEN}"
