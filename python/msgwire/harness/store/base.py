"""What every SQL store is made of: a ``Cursor`` over one transaction, the dialect hooks a
backend fills in (``sqlite.py``, ``postgres.py``), the retry of a transaction rolled back for
contention, the schema's migrations, and the types the tables come back as.

The tables are read and written by three layers above this one, each a file: ``trail.py``
(entries and message rows: the append transaction), ``conversations.py`` (the conversation
store's calls) and ``swarm.py`` (agents and mail); ``sql.py`` joins them into ``SQLStore``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Self, TypeVar

import msgspec

from msgwire.errors import StoreError
from msgwire.types import now

from ..audit import Parent
from .rows import BadRow
from .schema import SCHEMA_VERSION, Types, migrations

__all__ = ["ConversationInfo", "Cursor", "OnError", "SQLBase", "report_bad_row"]

_log = logging.getLogger("msgwire.harness.store")
T = TypeVar("T")


OnError = Literal["raise", "skip"] | Callable[[BadRow], None]
"""What a load does with a row it cannot decode: ``"raise"`` a ``DecodeError`` naming the
conversation and seq; ``"skip"`` it (logged as a warning on the ``msgwire.harness.store``
logger); or a callable, given each ``BadRow``, after which the row is skipped."""


class ConversationInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation as ``conversations()`` lists it (no entries read)."""

    id: str
    agent: str | None
    system_prompt: str | None
    mode: str | None
    branch: str
    parent: Parent | None
    created_at: dt.datetime
    updated_at: dt.datetime
    entries: int
    head: str
    metadata: dict[str, Any]


class Cursor:
    """One transaction's statements: ``rows`` / ``one`` / ``run`` / ``many`` over the driver's
    cursor, the SQL written with ``?`` placeholders (the dialect's replace them).

    ``rows(binary=True)`` asks a driver that has one (psycopg: ``binary_results``) for its binary
    result format, whose Python values are the same: a bytea then travels as it is, not
    hex-encoded (half the bytes, no decode), which is what reading many messages wants."""

    def __init__(self, raw: Any, placeholder: Callable[[str], str], *, binary_results: bool = False) -> None:
        self._raw = raw
        self._sql = placeholder
        self._binary = binary_results

    def rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple[Any, ...]]:
        if binary and self._binary:
            self._raw.execute(self._sql(sql), params, binary=True)
        else:
            self._raw.execute(self._sql(sql), params)
        return list(self._raw.fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        self._raw.execute(self._sql(sql), params)
        row = self._raw.fetchone()
        return tuple(row) if row is not None else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._raw.execute(self._sql(sql), params)
        return int(self._raw.rowcount)

    def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        if params:
            self._raw.executemany(self._sql(sql), params)

    def later(self, sql: str, params: Sequence[Any] = ()) -> Callable[[], list[tuple[Any, ...]]]:
        """A query whose rows are wanted only once the transaction is over: here it runs now; a
        pipelined transaction (PostgreSQL) sends it with the rest and gives its rows after."""
        found = self.rows(sql, params)
        return lambda: found


class SQLBase:
    """A store over one SQL database: its transactions and dialect words.

    A backend gives: ``_transaction(pipelined, read_only)`` (a context manager: a ``Cursor``
    inside one transaction that takes the write lock; ``pipelined``: its statements read nothing,
    or only through ``Cursor.later``, so they may be sent together with the commit;
    ``read_only``: it writes nothing, so it need not take the write lock; ``one_query``, with
    ``pipelined``: its few small statements may be sent as one query), ``_transient(exc)`` (an error after which the
    transaction was rolled back and may be retried), ``_conflict(exc)`` (a constraint refused a
    statement), ``_db_errors()``, ``_failure(exc)`` (the ``StoreError`` of one that is not
    retried), ``_key`` / ``_unkey`` (an id to its column value and back), ``_time`` /
    ``_untime``, ``_in(n)`` (a placeholder list for ``IN``) and ``_for_update``.
    """

    url: str
    types: Types
    _for_update = ""
    _retries = 8

    # --- dialect hooks (subclasses) -----------------------------------------------------------

    def _transaction(
        self, *, pipelined: bool = False, read_only: bool = False, one_query: bool = False
    ) -> contextlib.AbstractContextManager[Cursor]:
        raise NotImplementedError

    def _transient(self, exc: BaseException) -> bool:
        raise NotImplementedError

    def _conflict(self, exc: BaseException) -> bool:
        raise NotImplementedError

    def _db_errors(self) -> tuple[type[BaseException], ...]:
        raise NotImplementedError

    def _failure(self, exc: BaseException) -> StoreError:
        """The error a caller gets for ``exc``, a database error not retried (or retried enough)."""
        return StoreError(f"{type(exc).__name__}: {exc}")

    def _key(self, value: str) -> Any:
        return value

    def _unkey(self, value: Any) -> str:
        return str(value)

    def _time(self, value: dt.datetime) -> Any:
        """``value.isoformat()``; for a UTC datetime (every one msgwire makes or reads), the same
        text at a fifth of the cost: msgspec writes it (RFC 3339, the microseconds when there
        are any) with ``Z`` for the offset, where isoformat asks the tzinfo for it through a
        Python call and formats it with printf."""
        if value.tzinfo is dt.UTC and type(value) is dt.datetime:
            return _rfc3339(value)[1:-2].decode() + "+00:00"
        return value.isoformat()

    def _untime(self, value: Any) -> dt.datetime:
        return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value)

    def _in(self, n: int) -> str:
        return "(" + ",".join("?" * n) + ")"

    def _message_sql(self, alias: str) -> str:
        """The message's bytes inside the body of entry ``alias``, as text."""
        return self.types.message_sql(alias)

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- running a transaction ----------------------------------------------------------------

    def _run(self, work: Callable[[Cursor], T], *, read_only: bool = False) -> T:
        """``work`` in one transaction, retried (with a growing pause) when the database
        rolled it back for contention, so "database is locked" never reaches the caller, or
        when the connection was lost before the commit (PostgreSQL: the next try reconnects).
        ``read_only``: ``work`` writes nothing (SQLite then takes no write lock)."""
        delay = 0.005
        for attempt in range(self._retries + 1):
            try:
                with self._transaction(read_only=read_only) as cur:
                    return work(cur)
            except self._db_errors() as exc:
                if attempt < self._retries and self._transient(exc):
                    time.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                raise self._failure(exc) from exc
        raise AssertionError("unreachable")

    def _run_once(self, work: Callable[[Cursor], T], *, one_query: bool = False) -> T | None:
        """``work`` once, in a pipelined transaction (it reads nothing; ``one_query``: its few
        small statements may leave as one query); ``None`` when a
        constraint refused a statement, the database rolled it back for contention or the
        connection was lost: the caller then takes its careful path, which must find out what
        was stored (an append: its drafts are recognised, never written twice)."""
        try:
            with self._transaction(pipelined=True, one_query=one_query) as cur:
                return work(cur)
        except self._db_errors() as exc:
            if self._conflict(exc) or self._transient(exc):
                return None
            raise self._failure(exc) from exc

    def _migrate(self, cur: Cursor, current: int) -> None:
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the database's msgwire schema is version {current}; this msgwire knows "
                f"{SCHEMA_VERSION}: upgrade msgwire"
            )
        for version, statements in migrations(self.types, current):
            for statement in statements:
                cur.run(statement)
            cur.run("INSERT INTO msgwire_schema (version, applied_at) VALUES (?, ?)", (version, self._time(now())))


_rfc3339 = msgspec.json.Encoder().encode


def report_bad_row(bad: BadRow, on_error: OnError) -> None:
    """Tell ``on_error`` of a row a load skips (a warning on the store's logger for ``"skip"``)."""
    if on_error == "skip":
        _log.warning(
            "skipped a bad %s row of conversation %r at seq %d: %s", bad.table, bad.conversation_id, bad.seq, bad.error
        )
    elif callable(on_error):
        on_error(bad)
