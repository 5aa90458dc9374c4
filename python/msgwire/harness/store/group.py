"""Group commit: appends sent at the same time share one transaction.

While one transaction is under way (on PostgreSQL mostly waiting for the server to flush its
log), the appends sent meanwhile queue up; when it ends, every queued append is committed in
one transaction (``TrailTables._commit_batch``), and each caller gets its own result or error.
An append that meets no other waits for nobody: it is a batch of one.

Two kinds of callers: a thread (``run``: it waits, and commits a batch itself when its turn
comes, so an uncontended append costs no hand-off), and an event loop (``submit``: it is told
the outcome by a callback and never waits; a thread of the store's own commits what no waiting
thread will). Each caller learns its outcome once its transaction committed, as before: what
is acknowledged is stored. A batch shares its commit (one log flush, one round trip), not its
outcome: a batch the database refuses is committed again one append at a time, so that each
caller gets the error of its own append only.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

__all__ = ["GroupCommit", "Pending"]

R = TypeVar("R")


class Pending(Generic[R]):
    """One caller's append, queued: what the batch gives it back (``result``) or raises to it;
    ``done``: the callback of a caller that does not wait (``None``: a thread waits for it)."""

    __slots__ = ("done", "error", "finished", "request", "result")

    def __init__(self, request: Any, done: Callable[[Pending[R]], None] | None = None) -> None:
        self.request = request
        self.done = done
        self.finished = False
        self.result: R | None = None
        self.error: BaseException | None = None

    def outcome(self) -> R:
        if self.error is not None:
            raise self.error
        assert self.finished
        return self.result  # type: ignore[return-value]


class GroupCommit(Generic[R]):
    """``commit(batch)`` gets the ``Pending`` queued together (one batch at a time), sets each
    one's ``result`` or ``error`` (and ``finished``), and returns those it leaves for the next
    batch (unfinished)."""

    def __init__(self, commit: Callable[[Sequence[Pending[R]]], Sequence[Pending[R]]], one: Callable[[Any], R]) -> None:
        self._commit = commit
        self._one = one  # commit one request alone: its result, or it raises (an append nobody else sent)
        # The lock is taken directly (a C call) where nobody waits; Condition's own enter, exit and
        # notify_all are Python code, and notify_all only runs when a thread waits (``_waiting``).
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiting = 0  # threads in self._cond.wait()
        self._queue: list[Pending[R]] = []
        self._leading = False  # a batch is being committed, or the store's thread is about to
        self._thread: ThreadPoolExecutor | None = None
        self._pid = os.getpid()

    def run(self, request: Any) -> R:
        """Commit ``request`` (with whatever else is queued) in this thread, or wait while
        another commits it; its result."""
        with self._lock:
            self._after_fork()
            alone = not self._leading and not self._queue
            if alone:  # the usual case: nobody else commits or waits, so this thread commits it at once
                self._leading = True
            else:
                mine: Pending[R] = Pending(request)
                self._queue.append(mine)
        if alone:
            try:
                return self._one(request)
            finally:
                self._release()
        while True:
            with self._lock:
                while self._leading and not mine.finished:
                    self._waiting += 1
                    try:
                        self._cond.wait()
                    finally:
                        self._waiting -= 1
                if mine.finished:
                    return mine.outcome()
                self._leading = True
                batch, self._queue = self._queue, []
            if self._commit_and_release(batch):
                self._start_thread()

    def submit(self, request: Any, done: Callable[[Pending[R]], None]) -> None:
        """Queue ``request`` and return at once; ``done(pending)`` is called (in the committing
        thread) once its outcome is known."""
        with self._lock:
            self._after_fork()
            self._queue.append(Pending(request, done))
            if self._leading:
                return  # the batch under way's committer takes it next
            self._leading = True
        self._start_thread()

    def close(self) -> None:
        """Stop the store's committing thread once it has committed what is queued."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=True)

    # --- internals --------------------------------------------------------------------------

    def _after_fork(self) -> None:
        """In a forked child the parent's committing threads and batch are not here: start over."""
        if self._pid != os.getpid():
            self._queue, self._leading, self._thread, self._pid = [], False, None, os.getpid()

    def _start_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="msgwire-commit")
            thread = self._thread
        thread.submit(self._lead)

    def _lead(self) -> None:
        """The store's thread: commit batches while nobody else will (``_leading`` is ours)."""
        while True:
            with self._lock:
                batch, self._queue = self._queue, []
            if not self._commit_and_release(batch):
                return

    def _release(self) -> None:
        """Give the lead back after a request committed alone (``run``)."""
        with self._lock:
            # a waiting thread commits the next batch; with none queued, the store's thread does
            self._leading = stays = bool(self._queue) and all(p.done is not None for p in self._queue)
            if self._waiting:
                self._cond.notify_all()  # the next batch's turn
        if stays:
            self._start_thread()

    def _commit_and_release(self, batch: list[Pending[R]]) -> bool:
        """Commit ``batch`` (``_leading`` is the caller's), tell its callers, and give the lead
        back; whether it stays with the store's thread (only callers that do not wait are left)."""
        later: Sequence[Pending[R]] = ()
        try:
            if batch:
                later = self._commit(batch)
        except BaseException as exc:  # the batch's own failure (commit sets each one's): none left unfinished
            for pending in batch:
                if not pending.finished:
                    pending.error = exc
        finally:
            with self._lock:
                if later:
                    left = [p for p in later if not p.finished]
                    self._queue[:0] = left  # first in the next batch
                    kept = {id(p) for p in left}
                    for pending in batch:
                        pending.finished = id(pending) not in kept
                else:
                    for pending in batch:
                        pending.finished = True
                # a waiting thread commits the next batch; with none queued, the store's thread does
                self._leading = bool(self._queue) and all(p.done is not None for p in self._queue)
                stays = self._leading
                if self._waiting:
                    self._cond.notify_all()  # the outcomes, and the next batch's turn
        for pending in batch:
            if pending.finished and pending.done is not None:
                pending.done(pending)
        return stays
