"""A call's total deadline (a provider's ``deadline=``), beside the per-read ``timeout=``.

``timeout`` bounds each wait for the network (connecting, one read): a server that sends a
keep-alive comment every few seconds never trips it, however long the call lasts. ``deadline``
bounds the whole call, from sending the request to the last byte of the reply: retries and
their waits, the headers, every read. The transport shortens each wait to the time left and
checks the clock between reads; a read blocked past the deadline is ended by shutting its socket
down (``Deadline.watch``, sync calls: one thread of the process watches every deadline) or by
cancelling it (async calls). (An HTTP/2 connection carries other requests too: its socket is
left alone, and a sync read on it ends at its timeout, which the deadline cut to the time left
when the request went out.)
"""

from __future__ import annotations

import heapq
import logging
import os
import threading
import time
from collections.abc import Callable

__all__ = ["Deadline", "DeadlineExceeded", "Watch"]

log = logging.getLogger("msgwire.harness.providers")


class DeadlineExceeded(TimeoutError):
    """The call took longer than its provider's ``deadline``: the ``__cause__`` of the
    ``msgwire.TransportError`` the call raises (which keeps the partial message)."""


class Watch:
    """An action due at a time, until ``cancel()``."""

    __slots__ = ("action", "at")

    def __init__(self, at: float, action: Callable[[], None]) -> None:
        self.at = at
        self.action: Callable[[], None] | None = action

    def cancel(self) -> None:
        if self.action is not None:
            self.action = None
            _watcher.cancelled()

    def __lt__(self, other: Watch) -> bool:
        return self.at < other.at


class _Watcher:
    """One daemon thread that runs each watch's action when it is due (started when first
    needed, again in a forked child). Cancelled watches are dropped when they come up, or all
    at once when they are most of the heap (as asyncio does with its timers), so a process
    making many short calls with a long deadline keeps no more than twice its live watches."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._heap: list[Watch] = []
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        with self._lock:
            heapq.heappush(self._heap, watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="msgwire-deadline", daemon=True)
                self._thread.start()
            if self._heap[0] is watch:
                self._lock.notify()

    def cancelled(self) -> None:
        with self._lock:
            self._cancelled += 1
            if self._cancelled > 16 and 2 * self._cancelled > len(self._heap):
                self._heap = [w for w in self._heap if w.action is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._lock:
                action = self._due()
            if action is not None:
                try:
                    action()
                except Exception:  # the watcher serves every call: it outlives one failure
                    log.exception("a deadline's action failed")

    def _due(self) -> Callable[[], None] | None:
        """The next action due, once it is (waits for it; the lock held)."""
        while True:
            while self._heap and self._heap[0].action is None:
                heapq.heappop(self._heap)
                self._cancelled = max(0, self._cancelled - 1)
            if not self._heap:
                self._lock.wait()
                continue
            left = self._heap[0].at - time.monotonic()
            if left > 0:
                self._lock.wait(left)
                continue
            watch = heapq.heappop(self._heap)
            action, watch.action = watch.action, None
            return action

    def forked(self) -> None:
        """In a forked child: the parent's thread is not there, nor are its calls."""
        self._lock = threading.Condition()
        self._heap, self._cancelled, self._thread = [], 0, None


_watcher = _Watcher()
os.register_at_fork(after_in_child=_watcher.forked)


class Deadline:
    """The clock of one call: ``seconds`` from when it was made."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left (0 or less once passed)."""
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def exceeded(self) -> DeadlineExceeded:
        return DeadlineExceeded(f"the call took longer than deadline={self.seconds:g} s")

    def check(self) -> None:
        """Raise ``DeadlineExceeded`` once the deadline passed."""
        if self.passed():
            raise self.exceeded()

    def watch(self, action: Callable[[], None]) -> Watch:
        """Call ``action`` (from the watcher's thread) when the deadline passes, unless the
        returned watch is cancelled first."""
        watch = Watch(self.at, action)
        _watcher.add(watch)
        return watch
