"""The PostgreSQL server the tests get (tests/postgres_server.py): a new, empty database per test, on a
server that runs without fsync."""

from __future__ import annotations

import postgres_server
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

PUBLIC_TABLES = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_gets_an_empty_database_of_its_own(postgres_database: str, turn: int) -> None:
    # Two tests make the same table: had they one database, the second would find the first's.
    with psycopg.connect(postgres_database) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        assert name is not None and name[0].startswith(postgres_server.DATABASE_PREFIX)
        assert conn.execute(PUBLIC_TABLES).fetchone() == (0,)
        conn.execute("CREATE TABLE marker (turn integer NOT NULL)")
        conn.execute("INSERT INTO marker VALUES (%s)", [turn])
        assert conn.execute("SELECT turn FROM marker").fetchall() == [(turn,)]
        assert conn.execute(PUBLIC_TABLES).fetchone() == (1,)


def test_a_second_database_is_separate_and_dropped_afterwards(postgres_url: str, postgres_database: str) -> None:
    with postgres_server.database(postgres_url) as other:
        assert other != postgres_database
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute("CREATE TABLE only_here (id integer)")
        with psycopg.connect(other) as conn:
            other_name = conn.execute("SELECT current_database()").fetchone()
            assert conn.execute(PUBLIC_TABLES).fetchone() == (0,)
    assert other_name is not None
    with psycopg.connect(postgres_url) as admin:
        names = {row[0] for row in admin.execute("SELECT datname FROM pg_database").fetchall()}
    assert other_name[0] not in names


def test_a_database_url_is_the_admin_url_with_another_name(postgres_url: str, postgres_database: str) -> None:
    assert str(conninfo_to_dict(postgres_database)["dbname"]).startswith(postgres_server.DATABASE_PREFIX)
    assert postgres_server.with_dbname(postgres_database, "postgres") == postgres_url


def test_the_server_runs_without_fsync(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:

        def show(setting: str) -> str:
            row = conn.execute(f"SHOW {setting}").fetchone()
            assert row is not None
            return str(row[0])

        if show("cluster_name") != postgres_server.CLUSTER_NAME:
            pytest.skip("TOKATEST_POSTGRES_URL names a server the tests did not start; its settings are its own")
        assert [show(name) for name in ("fsync", "synchronous_commit", "full_page_writes")] == ["off", "off", "off"]
        assert show("listen_addresses") == ""
        assert int(show("max_connections")) == 300
