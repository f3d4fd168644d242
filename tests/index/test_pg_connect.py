"""index/pgconnect.py: a clear one-line error naming the index server (host, port, database),
never its password (a real PostgreSQL for the slow tests)."""

from __future__ import annotations

from typing import Any

import pytest

from vault_memory.errors import VaultError
from vault_memory.index.pgconnect import IndexServerError, connect, describe

psycopg = pytest.importorskip("psycopg")


def test_describe_names_the_server_never_the_password() -> None:
    assert describe("postgresql://bob:s3cret@db.example:6543/team") == "db.example:6543/team"
    assert describe("host=10.0.0.5 password=s3cret dbname=idx") == "10.0.0.5:5432/idx"
    assert describe("postgresql://bob:s3cret@[oops") == "the DSN given (it cannot be parsed)"


def test_an_unreadable_dsn_is_a_clear_error_without_it() -> None:
    with pytest.raises(VaultError, match="DSN cannot be read") as caught:
        connect("postgresql://bob:s3cret@[oops")
    assert "s3cret" not in str(caught.value)


@pytest.mark.slow
def test_a_server_that_is_not_there_is_named(pg_server: Any) -> None:
    with socket_closed() as port:
        dsn = f"postgresql://bob:s3cret@127.0.0.1:{port}/team"
        with pytest.raises(IndexServerError) as caught:
            connect(dsn)
    message = str(caught.value)
    assert f"127.0.0.1:{port}/team" in message and "refused" in message.lower()
    assert "s3cret" not in message and "\n" not in message


@pytest.mark.slow
def test_the_servers_own_refusal_is_given(pg_server: Any) -> None:
    dsn = f"postgresql://postgres:s3cret@127.0.0.1:{pg_server.port}/no_such_db"
    with pytest.raises(IndexServerError, match='database "no_such_db" does not exist') as caught:
        connect(dsn)
    assert "s3cret" not in str(caught.value)
    with connect(pg_server.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def socket_closed() -> Any:
    """A context giving a 127.0.0.1 port nothing listens on."""
    import contextlib
    import socket

    @contextlib.contextmanager
    def port() -> Any:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            number = sock.getsockname()[1]
        yield number

    return port()
