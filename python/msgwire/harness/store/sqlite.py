"""``SQLiteStore``: the default store, one SQLite file through the standard library's ``sqlite3``.

Settings (every connection): WAL journal (readers never wait for the writer), ``synchronous``
NORMAL by default (a committed transaction survives a crash of the process; one of the
machine may lose the last transactions, never corrupt the file; ``synchronous="FULL"`` makes
every commit durable against power loss too), a busy timeout, ``foreign_keys`` on. Every write
is one ``BEGIN IMMEDIATE`` transaction: it takes the write lock at its start, so two writers
never deadlock upgrading a read lock, and a writer that finds the lock taken waits (busy
timeout) and is retried with a pause when the wait runs out: "database is locked" never
reaches the caller. Each thread (and each process, after a fork) has its own connection.

Waking idle agents across processes: SQLite has no notifications, so ``wait_mail`` polls the
mail table every ``poll_interval`` seconds (0.2 by default); within one process, posting wakes
waiters at once.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
from pathlib import Path
from types import TracebackType
from typing import Literal

from msgwire.errors import StoreNotFoundError

from .base import Cursor
from .schema import SQLITE
from .sql import SQLStore

__all__ = ["SQLiteStore", "sqlite_url"]

_TRANSIENT = ("locked", "busy")


def sqlite_url(path: Path) -> str:
    """The ``url`` of the store in the file ``path`` (``sqlite:////abs.db`` for an absolute path)."""
    return f"sqlite:///{path}"


class _Transaction:
    """``BEGIN IMMEDIATE``, the statements, ``COMMIT`` (``ROLLBACK`` when they raised). A class,
    not a generator under ``contextlib.contextmanager``, whose machinery cost a fifth of the
    Python of a one-message append; its cursor is the thread's own, made with its connection
    (BEGIN and COMMIT run on it too: ``conn.execute`` makes a cursor each time)."""

    __slots__ = ("_cursor", "_read_only")

    def __init__(self, cursor: Cursor, *, read_only: bool = False) -> None:
        self._cursor = cursor
        self._read_only = read_only

    def __enter__(self) -> Cursor:
        # a reader sees a snapshot (WAL) and locks nothing
        self._cursor._raw.execute("BEGIN" if self._read_only else "BEGIN IMMEDIATE")
        return self._cursor

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._cursor._raw.execute("COMMIT" if exc_type is None else "ROLLBACK")


class SQLiteStore(SQLStore):
    """A store in one SQLite file (created with its schema when missing).

    ``path``: the file; ``busy_timeout``: seconds a writer waits for the lock before a retry;
    ``synchronous``: ``"NORMAL"`` (default) or ``"FULL"``; ``poll_interval``: seconds between
    looks at the mail table while an agent waits for mail posted by another process;
    ``create=False``: open a store that exists, else raise ``StoreNotFoundError`` (no such
    file, or a database without msgwire's tables) and create nothing (the file is opened
    ``mode=rw``). An older schema is brought up to date all the same.
    """

    types = SQLITE

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        synchronous: Literal["NORMAL", "FULL", "EXTRA"] = "NORMAL",
        poll_interval: float = 0.2,
        create: bool = True,
    ) -> None:
        super().__init__()
        if synchronous not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(
                f"synchronous must be NORMAL, FULL or EXTRA (a crash must not lose commits), got {synchronous!r}"
            )
        self.path = Path(path)
        self.url = sqlite_url(self.path)
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous
        self.poll_interval = poll_interval
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._closed = False
        self._create_missing = create
        if not create:
            self._check_exists()
        try:
            self._run(self._ensure_schema)
        except BaseException:
            self.close()
            raise

    def _check_exists(self) -> None:
        """The file exists and holds msgwire's tables, looked at before a connection changes any
        setting (WAL mode is written to the file: not to someone else's database)."""
        if not self.path.is_file():
            raise StoreNotFoundError(f"no store at {self.url}: no such file")
        try:
            with contextlib.closing(sqlite3.connect(self._rw_uri(), uri=True, timeout=self.busy_timeout)) as conn:
                found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'msgwire_schema'").fetchone()
        except sqlite3.Error as exc:  # not a database, say
            raise self._failure(exc) from exc
        if found is None:
            raise StoreNotFoundError(f"no store at {self.url}: the database holds no msgwire tables")

    def _rw_uri(self) -> str:
        """The file opened read-write but never created (``mode=rw``)."""
        return f"file:{urllib.parse.quote(str(self.path))}?mode=rw"

    # --- connections --------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise ValueError(f"{self.url} is closed")
        local = self._local
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            return conn
        # create=False: mode=rw, so that a file removed since the check is not made again, empty
        target = self.path if self._create_missing else self._rw_uri()
        conn = sqlite3.connect(
            target,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            cached_statements=256,
            uri=not self._create_missing,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        self._set_wal(conn)
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        self._local.conn, self._local.pid = conn, os.getpid()
        self._local.cursor = Cursor(conn.cursor(), str)
        with self._all_lock:
            self._all.append(conn)
        return conn

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        """WAL mode, which the first connection of a new file switches to: many processes doing
        that at once see "database is locked" (openai-agents #4987), so wait and retry."""
        delay = 0.005
        for _ in range(200):
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() == "wal":
                    return
            except sqlite3.OperationalError as exc:
                if not self._transient(exc):
                    raise
            threading.Event().wait(delay)
            delay = min(delay * 2, 0.1)
        raise sqlite3.OperationalError(f"could not switch {self.path} to WAL mode")

    def _transaction(
        self, *, pipelined: bool = False, read_only: bool = False, one_query: bool = False
    ) -> _Transaction:
        self._connection()
        return _Transaction(self._local.cursor, read_only=read_only)

    def _transient(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and any(word in str(exc) for word in _TRANSIENT)

    def _conflict(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError)

    def _db_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def _ensure_schema(self, cur: Cursor) -> None:
        cur.run("CREATE TABLE IF NOT EXISTS msgwire_schema (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        row = cur.one("SELECT max(version) FROM msgwire_schema")
        self._migrate(cur, row[0] if row and row[0] is not None else 0)

    def _wait_remote(self, after: int, timeout: float, wakes: int) -> None:
        self._wait_local(after, min(timeout, self.poll_interval), wakes)

    def close(self) -> None:
        """Close every connection this store opened (in any thread), once the appends queued
        are committed."""
        self._group.close()
        self._closed = True
        with self._all_lock:
            conns, self._all = self._all, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"
