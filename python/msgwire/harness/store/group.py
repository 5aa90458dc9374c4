"""Group commit: appends that threads send at the same time share one transaction.

While one thread's transaction is under way (on PostgreSQL mostly waiting for the server to
flush its log), appends that other threads send queue up; when it ends, one of them commits
every queued append in one transaction (``TrailTables._commit_batch``), and each thread gets
its own result or error. An append that meets no other waits for nobody: it is a batch of one.
Each caller returns once its transaction committed, as before: what is acknowledged is stored;
what a batch shares is its commit (one log flush, one round trip), not its outcome (a batch the
database refuses is committed again one append at a time, so that each caller gets the error
of its own append only).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["GroupCommit", "Pending"]

R = TypeVar("R")


class Pending(Generic[R]):
    """One caller's append, queued: what the batch gives it back (``result``) or raises to it."""

    __slots__ = ("error", "finished", "request", "result")

    def __init__(self, request: Any) -> None:
        self.request = request
        self.finished = False
        self.result: R | None = None
        self.error: BaseException | None = None

    def outcome(self) -> R:
        if self.error is not None:
            raise self.error
        assert self.finished
        return self.result  # type: ignore[return-value]


class GroupCommit(Generic[R]):
    """``run(request)``: ``commit(batch)`` gets every ``Pending`` queued meanwhile (one thread at a
    time commits; the others wait for their outcome or for their turn to commit), sets each
    one's ``result`` or ``error``, and returns those it left for the next batch (unfinished)."""

    def __init__(self, commit: Callable[[Sequence[Pending[R]]], Sequence[Pending[R]]]) -> None:
        self._commit = commit
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[Pending[R]] = []
        self._leading = False  # a thread is committing a batch

    def run(self, request: Any) -> R:
        mine: Pending[R] = Pending(request)
        with self._cond:
            self._queue.append(mine)
        while True:
            with self._cond:
                while self._leading and not mine.finished:
                    self._cond.wait()
                if mine.finished:
                    return mine.outcome()
                self._leading = True
                batch, self._queue = self._queue, []
            later: Sequence[Pending[R]] = ()
            try:
                later = self._commit(batch)
            except BaseException as exc:  # the batch's own failure (commit sets each one's): none left unfinished
                for pending in batch:
                    if not pending.finished:
                        pending.error = exc
            finally:
                with self._cond:
                    left = [p for p in later if not p.finished]
                    self._queue[:0] = left  # first in the next batch
                    kept = {id(p) for p in left}
                    for pending in batch:
                        pending.finished = id(pending) not in kept
                    self._leading = False
                    self._cond.notify_all()  # the outcomes, and the next batch's turn
