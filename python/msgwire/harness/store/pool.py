"""``Pool``: a store's database connections, made on demand by the thread that needs one and kept
for reuse, at most ``max_size`` at once (driver-neutral: the backend gives ``connect`` and
``close``).

The calling thread connects, not a worker of the pool's (as psycopg_pool's do): so a connection
that cannot be made fails the call at once with the server's own words (a wrong password, a
database that does not exist), the backend decides what is worth another try and for how long,
and the first call after the server comes back connects again, with no backoff of minutes and
no log lines in between. A connection the backend found lost is closed and so is every idle one
(they were made before the same outage); idle ones past ``max_idle`` are closed when the pool
is next used, down to ``min_size``. After a fork the child starts with no connections and never
touches its parent's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from msgwire.errors import StoreError

__all__ = ["Pool"]

C = TypeVar("C")


class Pool(Generic[C]):
    """``take()`` a connection (an idle one, else a new one from ``connect()``), ``give(conn,
    keep)`` it back; ``timeout``: seconds ``take`` waits when ``max_size`` connections are lent
    (then ``StoreError``); ``name``: what messages call the database."""

    def __init__(
        self,
        connect: Callable[[], C],
        close: Callable[[C], None],
        *,
        name: str,
        min_size: int,
        max_size: int,
        timeout: float,
        max_idle: float,
    ) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError(f"a pool needs 0 <= min_size <= max_size and max_size >= 1, got {min_size} and {max_size}")
        if timeout <= 0 or max_idle <= 0:
            raise ValueError(f"timeout and max_idle are seconds above 0, got {timeout} and {max_idle}")
        self._connect, self._close = connect, close
        self.name, self.min_size, self.max_size = name, min_size, max_size
        self.timeout, self.max_idle = timeout, max_idle
        self._lock = threading.Lock()
        self._idle: list[tuple[C, float]] = []  # (connection, when it came back), the most recent last
        self._slots = threading.BoundedSemaphore(max_size)
        self._pid = os.getpid()
        self._inherited: list[tuple[C, float]] = []  # a forked child's: its parent's idle connections
        self._closed = False

    def take(self) -> C:
        """A connection for one transaction; ``give`` it back when done."""
        if self._closed:
            raise ValueError(f"{self.name} is closed")
        if self._pid != os.getpid():
            self._forget_parent()
        if not self._slots.acquire(timeout=self.timeout):
            raise StoreError(
                f"{self.name}: all {self.max_size} connections stayed in use for {self.timeout:g} s "
                "(a larger max_size, or shorter transactions)"
            )
        try:
            conn = self._reuse()
            return conn if conn is not None else self._connect()
        except BaseException:
            self._slots.release()
            raise

    def give(self, conn: C, *, keep: bool) -> None:
        """Take back a connection ``take`` lent: kept for the next one, or closed (``keep``
        False: it was lost, and so, likely, are the idle ones: they are closed too)."""
        if self._pid != os.getpid():  # lent before a fork: the parent's, left alone
            return
        stale: list[C] = []
        with self._lock:
            if keep and not self._closed:
                self._idle.append((conn, time.monotonic()))
            else:
                stale.append(conn)
                if not keep:
                    stale.extend(c for c, _ in self._idle)
                    self._idle.clear()
        self._slots.release()
        for c in stale:
            self._close(c)

    def close(self) -> None:
        """Close the idle connections; those lent are closed as they come back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            self._close(conn)

    def _reuse(self) -> C | None:
        """The most recently returned idle connection (the others may expire), or ``None``."""
        now = time.monotonic()
        with self._lock:
            expired = 0
            while expired < len(self._idle) - self.min_size and now - self._idle[expired][1] > self.max_idle:
                expired += 1
            stale, self._idle = self._idle[:expired], self._idle[expired:]
            conn = self._idle.pop()[0] if self._idle else None
        for c, _ in stale:
            self._close(c)
        return conn

    def _forget_parent(self) -> None:
        """In a forked child: the parent's connections are not ours to use or to close (nor its
        lock, which a thread of the parent may have held at the fork). They stay referenced:
        dropped, a driver could finalize them here."""
        self._lock = threading.Lock()
        self._inherited.extend(self._idle)
        self._idle = []
        self._slots = threading.BoundedSemaphore(self.max_size)
        self._pid = os.getpid()
