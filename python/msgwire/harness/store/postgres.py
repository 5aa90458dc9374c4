"""``PostgresStore``: the store for many workers on many machines (extra ``postgres``: psycopg 3).

Every write is one transaction at READ COMMITTED; an append locks its conversation's row
(``SELECT ... FOR UPDATE``), so appends to one conversation queue up and get gap-free ``seq``
values while appends to others run in parallel. A transaction the server aborts for contention
(serialization failure, deadlock) is retried. Ids are ``BYTEA`` (PostgreSQL's text cannot hold
NUL); the entries' canonical bytes are ``BYTEA`` too, kept as they are, never re-encoded as
``jsonb``; timestamps come back in ``datetime.timezone.utc``, as SQLite's do.

Faults (``docs/guarantees.md``): connections come from ``pool.Pool``, made by the calling
thread. A server that cannot be reached now (nothing listening, starting up, shutting down,
too many clients) is tried again with a growing pause for ``connect_timeout`` seconds, then the
call raises ``StoreUnavailableError`` with the server's words; a refusal that another try
would not change (a wrong password, a database that does not exist, a bad option or
connection string) raises ``StoreError`` at once. A connection lost before the commit (the
server restarted) is replaced and the transaction run again; one lost while committing raises
``StoreUnavailableError`` saying it may have been stored. The first call after the server
returns reconnects. Nothing is logged.

Mail wakes agents at once: ``post`` sends ``NOTIFY msgwire_mail`` inside its transaction, its
payload the mail's seq and the mail table's oid (the channel is the database's: a store in
another schema ignores it); one thread per store LISTENs on a connection of its own and wakes
every waiting agent of the process together; it reconnects after the server went away.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import selectors
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from msgwire.errors import MissingExtraError, StoreError, StoreNotFoundError, StoreUnavailableError

from .base import Cursor
from .pool import Pool
from .redact import redacted_conninfo, scrubbed
from .schema import POSTGRES
from .sql import SQLStore

try:
    import psycopg
    from psycopg import errors as pg_errors
except ImportError as exc:
    raise MissingExtraError("msgwire's PostgreSQL store", "postgres", exc) from None

__all__ = ["PostgresStore"]

_CHANNEL = "msgwire_mail"
_MIGRATION_LOCK = zlib.crc32(b"msgwire schema")
_MAIL_LOCK = zlib.crc32(b"msgwire mail")
_CONTENTION = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, pg_errors.LockNotAvailable)
# The server's (and libpq's) words for a server that may answer a moment later; any other
# refusal to connect is permanent. libpq gives connection errors no SQLSTATE to match instead.
_NOT_NOW = (
    "connection refused",
    "no such file or directory",  # a Unix socket whose server is down
    "timeout expired",
    "is starting up",
    "is shutting down",
    "not yet accepting connections",
    "in recovery mode",
    "too many clients",
    "connection slots are reserved",
    "server closed the connection unexpectedly",
    "connection reset",
    "network is unreachable",
    "no route to host",
    "temporary failure in name resolution",
)
_LOST_STATES = ("57P01", "57P02", "57P03")  # admin shutdown, crash shutdown, cannot connect now
_TABLE = "'msgwire_mail'::regclass::oid"  # this store's mail table, as a NOTIFY names it
_IDLE = psycopg.pq.TransactionStatus.IDLE
_IN_ERROR = psycopg.pq.TransactionStatus.INERROR


@lru_cache(maxsize=512)
def _placeholders(sql: str) -> str:
    return sql.replace("?", "%s")


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database (the schema is created on first use).

    ``conninfo``: a ``postgresql://`` URL or a libpq connection string; ``connect_timeout``:
    seconds a call waits for a server it cannot reach (default: the conninfo's
    ``connect_timeout``, else 5; libpq gives one attempt whole seconds, at least 2);
    ``max_size``: connections open at most (each made when a call first needs it);
    ``timeout``: seconds a call waits for one when ``max_size`` are in use (then
    ``StoreError``); ``max_idle``: seconds before an idle connection is closed, except the
    ``min_size`` most recently used; ``create=False``: open a store that exists (msgwire's tables
    in the database's ``search_path``), else raise ``StoreNotFoundError`` and create nothing.

    ``url`` (in every message, and in ``repr``) is ``conninfo`` without its password (given in the
    URL's user part, as ``?password=`` or as a ``password=`` keyword); ``conninfo`` itself, which
    the store connects with, keeps it.
    """

    types = POSTGRES
    _for_update = " FOR UPDATE"

    def __init__(
        self,
        conninfo: str,
        *,
        connect_timeout: float | None = None,
        min_size: int = 1,
        max_size: int = 8,
        timeout: float = 30.0,
        max_idle: float = 300.0,
        create: bool = True,
    ) -> None:
        super().__init__()
        self.conninfo = conninfo
        self._create_missing = create
        self.url = redacted_conninfo(conninfo)
        try:
            params = psycopg.conninfo.conninfo_to_dict(conninfo)
        except psycopg.ProgrammingError as exc:  # libpq quotes what it cannot read: the password, maybe
            words = scrubbed(_words(exc), conninfo)
            raise StoreError(f"{self.url}: not a PostgreSQL connection string: {words}") from None
        self.connect_timeout = _connect_timeout(connect_timeout, params)
        self._pool: Pool[psycopg.Connection[Any]] = Pool(
            self._connect,
            _close,
            name=self.url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            max_idle=max_idle,
        )
        self._listener = _MailListener(self)
        try:
            self._run(self._ensure_schema)
        except BaseException:
            self._pool.close()
            raise

    # --- connections --------------------------------------------------------------------------

    def _connect_once(self, timeout: float, *, autocommit: bool = False) -> psycopg.Connection[Any]:
        return psycopg.connect(self.conninfo, autocommit=autocommit, connect_timeout=max(2, math.ceil(timeout)))

    def _connect(self) -> psycopg.Connection[Any]:
        """A new connection, the server tried for ``connect_timeout`` seconds while it cannot
        be reached (``StoreUnavailableError``); any other refusal raises at once (``StoreError``)."""
        deadline = time.monotonic() + self.connect_timeout
        pause = 0.05
        while True:
            try:
                return self._connect_once(deadline - time.monotonic())
            except psycopg.Error as exc:
                if not _not_now(exc):
                    raise StoreError(f"{self.url}: cannot connect: {_words(exc)}") from exc
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreUnavailableError(
                        f"{self.url}: no server for {self.connect_timeout:g} s: {_words(exc)}"
                    ) from exc
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.5)

    @contextlib.contextmanager
    def _transaction(
        self, *, pipelined: bool = False, read_only: bool = False, one_query: bool = False
    ) -> Iterator[Cursor]:
        conn = self._pool.take()
        try:
            if pipelined and one_query:
                with self._one_query(conn) as cur:
                    yield cur
                return
            if pipelined:
                with self._pipelined(conn) as cur:
                    yield cur
                return
            try:
                with conn.cursor() as raw:
                    yield _Cursor(raw, _placeholders, binary_results=True)
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    conn.rollback()
                raise
            try:
                conn.commit()
            except psycopg.Error as exc:
                if not _lost(exc):
                    raise
                raise self._lost_commit(exc) from exc
        finally:  # kept unless lost, or left mid-statement (an interrupt): no next caller inherits that
            self._pool.give(conn, keep=conn.info.transaction_status == _IDLE)

    @contextlib.contextmanager
    def _pipelined(self, conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
        """One transaction in one round trip: ``BEGIN``, the statements (which read nothing) and
        ``COMMIT`` leave together in pipeline mode, and one Sync brings every answer back. A
        statement the server refused aborts the rest: its error is raised, nothing is stored.
        A lost connection is raised as it is, the outcome unknown: the append that asked for
        this runs again the careful way, which finds out (appends are idempotent)."""
        conn.autocommit = True  # else psycopg begins the transaction with a round trip of its own
        failure: BaseException | None = None  # the first error: raised once the pipeline is closed
        try:
            with conn.cursor() as raw:
                try:
                    # Nothing raises out of this block: psycopg would log what closing it raised then.
                    with conn.pipeline():  # leaving it sends the Sync and reads every answer
                        try:
                            raw.execute("BEGIN")
                        except psycopg.Error as exc:
                            failure = exc
                        try:
                            yield _PipelinedCursor(raw, _placeholders, binary_results=True)
                        except BaseException as exc:
                            failure = failure or exc
                        try:
                            raw.execute("ROLLBACK" if failure else "COMMIT")
                        except psycopg.Error as exc:
                            failure = failure or exc
                except psycopg.Error as exc:
                    failure = failure or exc
            if conn.info.transaction_status == _IN_ERROR:
                with contextlib.suppress(psycopg.Error):
                    conn.rollback()  # a statement failed: the transaction stored nothing
            if failure is not None:
                raise failure
        finally:
            if conn.info.transaction_status == _IDLE:
                conn.autocommit = False

    @contextlib.contextmanager
    def _one_query(self, conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
        """One transaction in one round trip and one query: ``BEGIN``, the statements (which
        read nothing) and ``COMMIT`` leave together as one simple query (``_ScriptCursor``),
        whose answers come back together. For a few small statements (a post): the server
        parses and plans each one every time (none is prepared) and a bytea travels
        hex-encoded, so an append, whose statements repeat and carry the entries' bodies, keeps
        ``_pipelined`` (the swarm bench: the server's CPU a message 2.7 -> 5.0 ms when appends
        took this way). A statement the server refused aborts the rest: its error is raised,
        nothing is stored; a lost connection is raised as it is, the outcome unknown."""
        conn.autocommit = True  # else psycopg begins the transaction with a round trip of its own
        try:
            with psycopg.ClientCursor(conn) as raw:
                cur = _ScriptCursor(raw)
                try:
                    yield cur
                    cur.send(commit=True)
                except BaseException:
                    if conn.info.transaction_status != _IDLE:
                        with contextlib.suppress(psycopg.Error):
                            conn.rollback()  # a statement failed, or the work did: nothing is stored
                    raise
        finally:
            if conn.info.transaction_status == _IDLE:
                conn.autocommit = False

    def _lost_commit(self, exc: psycopg.Error) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"{self.url}: the connection was lost while committing, so the transaction may or may "
            f"not have been stored: {_words(exc)}"
        )

    def _transient(self, exc: BaseException) -> bool:
        return isinstance(exc, _CONTENTION) or _lost(exc)

    def _conflict(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.IntegrityError)

    def _db_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error,)

    def _failure(self, exc: BaseException) -> StoreError:
        if _lost(exc):
            return StoreUnavailableError(f"{self.url}: the connection was lost: {_words(exc)}")
        if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
            # Messages are bytes here and keep any character; the header's texts are TEXT columns.
            return StoreError(
                "PostgreSQL cannot store the character NUL (U+0000) in a conversation's text columns "
                "(its system prompt, mode, branch, agent name, or an entry's decision), so nothing was "
                f"stored; SQLite can ({type(exc).__name__}: {_words(exc)})"
            )
        return StoreError(f"{type(exc).__name__}: {_words(exc)}")

    # --- dialect ------------------------------------------------------------------------------

    def _ensure_schema(self, cur: Cursor) -> None:
        found = None if self._create_missing else cur.one("SELECT to_regclass('msgwire_schema')")
        if not self._create_missing and (found is None or found[0] is None):
            raise StoreNotFoundError(
                f"no store at {self.url}: the database holds no msgwire tables (in its search_path)"
            )
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

    def _untime(self, value: dt.datetime) -> dt.datetime:
        # psycopg gives the session's zone (ZoneInfo('Etc/UTC'), or the server's own): one tzinfo for both stores
        return value if value.tzinfo is dt.UTC else value.astimezone(dt.UTC)

    def _in(self, n: int) -> str:
        return "(" + ",".join("?" * n) + ")"

    # --- mail ---------------------------------------------------------------------------------

    def _lock_mail(self, cur: Cursor) -> None:
        cur.run("SELECT pg_advisory_xact_lock(?)", (_MAIL_LOCK,))

    def _notify(self, cur: Cursor) -> None:
        # "seq:table": the channel is the database's, shared by stores in other schemas
        cur.run(f"SELECT pg_notify(?, concat((SELECT max(seq) FROM msgwire_mail), ':', {_TABLE}))", (_CHANNEL,))

    def _wait_remote(self, after: int, timeout: float, wakes: int) -> None:
        self._listener.start()
        self._wait_local(after, timeout, wakes)

    def close(self) -> None:
        """Close the connections and stop the listening thread, once the appends queued are
        committed."""
        self._group.close()
        self._listener.close()
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"


class _MailListener:
    """The store's LISTEN connection, read by a thread of its own (started by the first wait):
    each notification tells the store the mail's seq, which wakes every waiting thread at once.
    Whenever it (re)connects it reads the last seq, for the mail posted while it was away; a lost
    connection is made again after a pause growing to a second. ``close`` stops it."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake: tuple[socket.socket, socket.socket] | None = None  # close() writes a byte: select returns
        self._pid = os.getpid()

    def start(self) -> None:
        if self._thread is not None and self._pid == os.getpid():
            return
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here, its sockets not ours
                self._thread, self._wake, self._pid = None, None, os.getpid()
            if self._thread is None and not self._stop.is_set():
                self._wake = socket.socketpair()
                self._thread = threading.Thread(target=self._listen, args=(self._wake[0],), name="msgwire-listen")
                self._thread.daemon = True
                self._thread.start()

    def close(self) -> None:
        """Stop the thread (it is at most in one connection attempt: ``connect_timeout``)."""
        self._stop.set()
        with self._lock:
            thread, wake = (self._thread, self._wake) if self._pid == os.getpid() else (None, None)
            self._thread = self._wake = None
        if wake is None:
            return
        with contextlib.suppress(OSError):
            wake[1].send(b"x")
        if thread is not None:
            thread.join(self._store.connect_timeout + 1)
        for end in wake:
            end.close()

    def _listen(self, wake: socket.socket) -> None:
        pause = 0.05
        while not self._stop.is_set():
            conn = None
            try:
                conn = self._store._connect_once(self._store.connect_timeout, autocommit=True)
                conn.execute(f"LISTEN {_CHANNEL}")
                row = conn.execute(f"SELECT {_TABLE}::text").fetchone()
                table = str(row[0]) if row else ""
                self._arrived(conn, "", table)  # what came while nobody listened
                pause = 0.05
                self._read(conn, wake, table)
            except (psycopg.Error, OSError):
                pass  # the server went away (or is not there yet): connect again after a pause
            finally:
                if conn is not None:
                    _close(conn)
            _select(wake, pause)
            pause = min(pause * 2, 1.0)

    def _read(self, conn: psycopg.Connection[Any], wake: socket.socket, table: str) -> None:
        """Pass on notifications until the connection fails (raises) or ``close`` is called."""
        with selectors.DefaultSelector() as selector:
            selector.register(conn.fileno(), selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while not self._stop.is_set():
                selector.select()
                for note in conn.notifies(timeout=0.0):
                    self._arrived(conn, note.payload, table)

    def _arrived(self, conn: psycopg.Connection[Any], payload: str, table: str) -> None:
        """Tell the store of the mail a notification announces: its seq when it names this
        store's table (one in another schema is not ours), else the table's last seq (the
        first look, or a post of an older msgwire, whose payload is empty)."""
        seq, _, posted_to = payload.partition(":")
        if seq.isdigit() and posted_to:
            if posted_to != table:
                return
            self._store._mail_arrived(int(seq))
            return
        row = conn.execute("SELECT max(seq) FROM msgwire_mail").fetchone()
        self._store._mail_arrived(int(row[0]) if row and row[0] is not None else 0)


class _Cursor(Cursor):
    """A transaction's cursor outside pipeline mode, whose ``many`` opens the pipeline that
    psycopg's ``executemany`` would open itself, so that its closing is never logged: psycopg
    logs (a warning on its logger, printed to stderr by logging's last resort) what closing a
    pipeline raised when the block inside raised too, as a send to a server that crashed does.
    Here nothing raises out of the block: its error is raised once the pipeline is closed. (In
    the one-round-trip transaction, ``executemany`` joins that pipeline and opens none.)"""

    def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        if not params:
            return
        failure: BaseException | None = None
        try:
            with self._raw.connection.pipeline():  # leaving it sends the Sync and reads every answer
                try:
                    self._raw.executemany(self._sql(sql), params)
                except BaseException as exc:
                    failure = exc
        except psycopg.Error as exc:
            failure = failure or exc
        if failure is not None:
            raise failure


class _PipelinedCursor(Cursor):
    """The one-round-trip transaction's cursor: ``later`` sends its query on a cursor of its own
    (a cursor keeps the result of its last statement only), whose rows are read once the
    pipeline's Sync has brought every answer back."""

    def later(self, sql: str, params: Sequence[Any] = ()) -> Callable[[], list[tuple[Any, ...]]]:
        raw = self._raw.connection.cursor(binary=True)
        raw.execute(self._sql(sql), params)
        return lambda: list(raw.fetchall())


class _ScriptCursor(Cursor):
    """The one-round-trip transaction's cursor: each statement is bound here (psycopg's
    client-side binding: the values as SQL literals) and kept; ``send`` sends them, ``BEGIN``
    to ``COMMIT``, as one simple query, and reads every answer once. Pipeline mode, which this
    replaces, polled the socket before each statement it sent, and each poll gave up the GIL:
    17 for a post, each a wait to get it back in a process whose other threads are busy (a
    post then took 7-9 ms, 1 ms of it its own work). ``later``'s rows are read after the send;
    a read (``rows`` / ``one``) sends what is kept with it at once (the transaction stays open).
    ``run`` gives no row count (-1), as a pipeline did not."""

    def __init__(self, raw: psycopg.ClientCursor[Any]) -> None:
        super().__init__(raw, _placeholders)
        self._kept: list[str] = ["BEGIN"]
        self._answers: list[list[tuple[Any, ...]]] = []  # one per statement sent, in order

    def _keep(self, sql: str, params: Sequence[Any]) -> int:
        """Keep a statement; the index of its answer."""
        self._kept.append(self._raw.mogrify(self._sql(sql), params))
        return len(self._answers) + len(self._kept) - 1

    def send(self, *, commit: bool = False) -> None:
        """Send the statements kept (and ``COMMIT``) as one query; keep each one's rows."""
        if commit:
            self._kept.append("COMMIT")
        if not self._kept:
            return
        script, self._kept = ";\n".join(self._kept), []
        raw = self._raw
        raw.execute(script)
        while True:
            self._answers.append(list(raw.fetchall()) if raw.description is not None else [])
            if not raw.nextset():
                break

    def rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple[Any, ...]]:
        index = self._keep(sql, params)
        self.send()
        return self._answers[index]

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        found = self.rows(sql, params)
        return tuple(found[0]) if found else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._keep(sql, params)
        return -1

    def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        for row in params:
            self._keep(sql, row)

    def later(self, sql: str, params: Sequence[Any] = ()) -> Callable[[], list[tuple[Any, ...]]]:
        index = self._keep(sql, params)
        return lambda: self._answers[index]


def _select(wake: socket.socket, seconds: float) -> None:
    """Sleep ``seconds``, or until ``wake`` is written to."""
    with selectors.DefaultSelector() as selector:
        selector.register(wake, selectors.EVENT_READ)
        selector.select(seconds)


def _not_now(exc: BaseException) -> bool:
    """A connection attempt that failed because the server cannot answer now."""
    text = str(exc).lower()
    return any(words in text for words in _NOT_NOW)


def _lost(exc: BaseException) -> bool:
    """The connection broke (the server went away or ended the session): the transaction did
    not commit, unless this came from the commit itself."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, pg_errors.QueryCanceled):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _LOST_STATES


def _words(exc: BaseException) -> str:
    """The driver's message on one line (libpq's spans several)."""
    return " ".join(str(exc).split())


def _close(conn: psycopg.Connection[Any]) -> None:
    with contextlib.suppress(psycopg.Error, OSError):
        conn.close()


def _connect_timeout(given: float | None, params: dict[str, Any]) -> float:
    """``connect_timeout`` given, else the conninfo's (libpq's 0: none, so ours), else 5 s."""
    if given is None:
        try:
            given = float(params.get("connect_timeout") or 0) or 5.0
        except ValueError as exc:
            raise StoreError(f"connect_timeout of the connection string is not seconds: {_words(exc)}") from exc
    if not given > 0:
        raise ValueError(f"connect_timeout is seconds above 0, got {given!r}")
    return float(given)
