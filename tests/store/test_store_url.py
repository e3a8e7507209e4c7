"""store/url.py: a database URL's password hidden in what toka shows, and scrubbed from the errors
libpq writes, which may quote the URL or the part of it that it could not read."""

from __future__ import annotations

import psycopg
import pytest

from store.url import HIDDEN, redacted, scrubbed, secrets_in

SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://toka:{SECRET}@db/toka", "postgresql://toka:***@db/toka"),
        (
            f"postgresql://toka@db/toka?sslmode=require&password={SECRET}",
            "postgresql://toka@db/toka?sslmode=require&password=***",
        ),
        (f"host=db password={SECRET} dbname=toka", "host=db password=*** dbname=toka"),
        (f"host=db password='{SECRET} x' dbname=toka", "host=db password=*** dbname=toka"),
        (f"postgresql://toka:{SECRET}/x@db/toka", "postgresql://toka:***@db/toka"),  # a "/" urlsplit misreads
        ("postgresql://toka@db/toka", "postgresql://toka@db/toka"),
    ],
)
def test_the_password_is_hidden_whatever_form_it_takes(url: str, shown: str) -> None:
    assert redacted(url) == shown


def test_secrets_are_found_as_written_and_percent_decoded() -> None:
    assert secrets_in("postgresql://toka:p%40ss@db/toka") == ["p%40ss", "p@ss"]
    assert secrets_in("postgresql://toka@db:5432/toka") == []
    assert secrets_in(f"postgresql://toka:{SECRET}@[::1/toka") == [SECRET]  # unparseable all the same


@pytest.mark.parametrize(
    "url", [f"postgresql://toka:{SECRET}%zz@/toka?host=/tmp", f"postgresql://toka:{SECRET}@[::1/toka"]
)
def test_libpq_errors_that_quote_the_password_are_scrubbed_of_it(url: str) -> None:
    with pytest.raises(psycopg.Error) as raised:
        psycopg.connect(url, connect_timeout=1)
    assert SECRET in str(raised.value)  # libpq quotes what it could not read
    assert SECRET not in scrubbed(str(raised.value), url)
    assert HIDDEN in scrubbed(str(raised.value), url)


def test_a_message_quoting_the_whole_url_shows_it_redacted() -> None:
    url = f"postgresql://toka:{SECRET}@db/toka"
    assert scrubbed(f"cannot use {url}: no", url) == "cannot use postgresql://toka:***@db/toka: no"


def test_the_backend_keeps_no_password_in_what_it_reports_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    from store.postgres.connect import Reachability

    url = f"postgresql://toka:{SECRET}@[::1/toka"
    reach = Reachability(url)
    reach.failed(psycopg.ProgrammingError(f'end of string reached in URI: "{url}"'))
    assert reach.location == "postgresql://***"
    assert SECRET not in str(reach.to_json()) + reach.unavailable().message + caplog.text
    assert "unreachable" in caplog.text
