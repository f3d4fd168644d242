"""Connecting to the PostgreSQL index server (docs/postgres-design.md §7).

A connection that fails is a `IndexServerError` (a `VaultError`: one line, what to check)
naming the server as host, port and database, never the password nor the DSN as written (it
may hold one). psycopg is an optional dependency (`pip install vault-memory[postgres]`),
imported here on first use.
"""

from __future__ import annotations

from typing import Any

from ..config import hide_password
from ..errors import VaultError

CONNECT_TIMEOUT = 10  # seconds
#: What a user without a server runs, said by every "cannot reach" error.
HOW_TO_START = (
    "start one with `vault postgres start` (or `docker compose -f deploy/compose.yaml up -d`)"
    " or set [index] dsn (or the variable dsn_env names) to a running server"
)


class IndexServerError(VaultError):
    """The PostgreSQL index server cannot be reached or refuses this vault's connection."""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise IndexServerError(
            "the postgres index backend needs psycopg: pip install 'vault-memory[postgres]'"
        ) from exc
    return psycopg


def describe(dsn: str) -> str:
    """The server a DSN names, safe to show: `host:port/dbname` (the password and other
    options left out; "the DSN given" when it cannot be read)."""
    psycopg = _psycopg()
    try:
        parts = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "the DSN given (it cannot be parsed)"
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or "5432")
    where = f"{host}:{port}" if not host.startswith("/") else f"socket {host} port {port}"
    return f"{where}/{parts.get('dbname') or parts.get('user') or 'postgres'}"


def shown_dsn(dsn: str) -> str:
    """`dsn` as written, with its password (URL or `password=`) replaced by ***."""
    return hide_password(dsn.strip())


def connect(dsn: str, **options: Any) -> Any:
    """A psycopg connection to `dsn`, or an `IndexServerError` naming the server."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT, **options)
    except psycopg.ProgrammingError as exc:  # a DSN that cannot be parsed
        raise IndexServerError(
            "the index server DSN cannot be read; check [index] dsn or the variable dsn_env names."
        ) from exc
    except psycopg.OperationalError as exc:
        reason = _reason(str(exc), dsn)
        raise IndexServerError(
            f"cannot reach the index server at {describe(dsn)} ({shown_dsn(dsn)}): {reason}; "
            f"{HOW_TO_START}."
        ) from exc


def _reason(message: str, dsn: str) -> str:
    """The server's or libpq's reason, on one line, with any password of `dsn` blanked."""
    psycopg = _psycopg()
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    # libpq: 'connection failed: connection to server at "h", port p failed: <why>' first
    reason = lines[0].rsplit(": ", 1)[-1].strip() if lines else "connection failed"
    try:
        password = psycopg.conninfo.conninfo_to_dict(dsn).get("password")
    except psycopg.ProgrammingError:
        password = None
    return reason.replace(str(password), "***") if password else reason
