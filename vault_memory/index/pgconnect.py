"""Connecting to the PostgreSQL index server (docs/postgres-design.md §7).

A connection that fails is a `IndexServerError` (a `VaultError`: one line, what to check)
naming the server as host, port and database, never the password nor the DSN as written (it
may hold one). psycopg is an optional dependency (`pip install vault-memory[postgres]`),
imported here on first use.
"""

from __future__ import annotations

from typing import Any

from ..errors import VaultError

CONNECT_TIMEOUT = 10  # seconds


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
            f"cannot reach the index server at {describe(dsn)}: {reason}; check that it is "
            "running and that [index] dsn (or dsn_env) is right."
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
