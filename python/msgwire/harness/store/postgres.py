"""``PostgresStore``: the store for many workers on many machines (extra ``postgres``: psycopg 3
and psycopg_pool).

Connections come from a ``psycopg_pool.ConnectionPool`` that checks a connection before
lending it (a server or a pooler that closed an idle connection costs a reconnect, never an
error: langgraph #7304) and recycles idle ones. Every write is one transaction at READ
COMMITTED; an append locks its conversation's row (``SELECT ... FOR UPDATE``), so appends to
one conversation queue up and get gap-free ``seq`` values while appends to others run in
parallel. A transaction the server aborts for contention (serialization failure, deadlock)
is retried. Ids are ``BYTEA`` (PostgreSQL's text cannot hold NUL); the entries' canonical
bytes are ``BYTEA`` too, kept as they are, never re-encoded as ``jsonb``.

Mail wakes agents at once: ``post`` sends ``NOTIFY msgwire_mail`` inside its transaction and
``wait_mail`` LISTENs on a connection of its own.
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors

from .base import Cursor
from .schema import POSTGRES
from .sql import SQLStore

__all__ = ["PostgresStore"]

_CHANNEL = "msgwire_mail"
_MIGRATION_LOCK = zlib.crc32(b"msgwire schema")
_MAIL_LOCK = zlib.crc32(b"msgwire mail")


@lru_cache(maxsize=512)
def _placeholders(sql: str) -> str:
    return sql.replace("?", "%s")


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database (the schema is created on first use).

    ``conninfo``: a ``postgresql://`` URL or a libpq connection string; ``min_size`` /
    ``max_size``: the pool's connections; ``timeout``: seconds to wait for a free connection;
    ``max_idle``: seconds before an idle connection is closed.
    """

    types = POSTGRES
    _for_update = " FOR UPDATE"

    def __init__(
        self,
        conninfo: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout: float = 30.0,
        max_idle: float = 300.0,
    ) -> None:
        super().__init__()
        self.conninfo = conninfo
        self.url = _redacted(conninfo)
        self._pool = psycopg_pool.ConnectionPool(
            conninfo,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            max_idle=max_idle,
            check=psycopg_pool.ConnectionPool.check_connection,
            open=True,
            name="msgwire",
        )
        self._listener: psycopg.Connection[Any] | None = None
        self._listener_lock = threading.Lock()
        try:
            self._run(self._ensure_schema)
        except BaseException:
            self._pool.close()
            raise

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Cursor]:
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            yield Cursor(cur, _placeholders)

    def _transient(self, exc: BaseException) -> bool:
        return isinstance(
            exc, (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, pg_errors.LockNotAvailable)
        ) or (isinstance(exc, psycopg.OperationalError) and not isinstance(exc, pg_errors.QueryCanceled))

    def _db_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error, psycopg_pool.PoolTimeout)

    def _ensure_schema(self, cur: Cursor) -> None:
        cur.run("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        cur.run(
            "CREATE TABLE IF NOT EXISTS msgwire_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
        )
        row = cur.one("SELECT max(version) FROM msgwire_schema")
        self._migrate(cur, row[0] if row and row[0] is not None else 0)

    def _key(self, value: str) -> bytes:
        return value.encode("utf-8", "surrogatepass")

    def _unkey(self, value: Any) -> str:
        return bytes(value).decode("utf-8", "surrogatepass")

    def _time(self, value: Any) -> Any:
        return value

    def _in(self, n: int) -> str:
        return "(" + ",".join("?" * n) + ")"

    def _message_sql(self, alias: str) -> str:
        return f"convert_from(substring({alias}.body from {alias}.message_at + 1 for {alias}.message_len), 'UTF8')"

    def _lock_mail(self, cur: Cursor) -> None:
        cur.run("SELECT pg_advisory_xact_lock(?)", (_MAIL_LOCK,))

    def _notify(self, cur: Cursor) -> None:
        cur.run("SELECT pg_notify(?, '')", (_CHANNEL,))

    def _wait_remote(self, after: int, timeout: float) -> None:
        with self._listener_lock:
            if self._listener is None or self._listener.closed:
                self._listener = psycopg.connect(self.conninfo, autocommit=True)
                self._listener.execute(f"LISTEN {_CHANNEL}")
                if self.mail_seq() > after:  # posted while we were setting up
                    return
            listener = self._listener
            for _ in listener.notifies(timeout=timeout, stop_after=1):
                break

    def close(self) -> None:
        """Close the pool and the listening connection."""
        with self._listener_lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"


def _redacted(conninfo: str) -> str:
    """The connection string without its password (for messages and ``url``)."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "postgresql://?"
    host, port, db, user = (str(params.get(k) or "") for k in ("host", "port", "dbname", "user"))
    return f"postgresql://{user + '@' if user else ''}{host}{':' + port if port else ''}/{db}"
