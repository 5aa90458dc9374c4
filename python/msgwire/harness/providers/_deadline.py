"""A call's total deadline (a provider's ``deadline=``), beside the per-read ``timeout=``.

``timeout`` bounds each wait for the network (connecting, one read): a server that sends a
keep-alive comment every few seconds never trips it, however long the call lasts. ``deadline``
bounds the whole call, from sending the request to the last byte of the reply: retries and
their waits, the headers, every read. The transport shortens each wait to the time left and
checks the clock between reads; a read blocked past the deadline is ended by shutting its socket
down (``watch``, sync calls) or by cancelling it (async calls).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Deadline", "DeadlineExceeded"]


class DeadlineExceeded(TimeoutError):
    """The call took longer than its provider's ``deadline``: the ``__cause__`` of the
    ``msgwire.TransportError`` the call raises (which keeps the partial message)."""


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

    def watch(self, action: Callable[[], None]) -> threading.Timer:
        """Call ``action`` (from another thread) when the deadline passes, unless the returned
        timer is cancelled first."""
        timer = threading.Timer(max(0.0, self.left()), action)
        timer.daemon = True
        timer.start()
        return timer
