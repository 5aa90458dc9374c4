"""The model server's side of the swarm benches (``wake.py``, ``swarm_throughput.py``): when the
first request carrying each marker (a message text with the given prefix) arrived."""

from __future__ import annotations

import threading
import time

from msgwire.testing import Received, Reply, reply


class Arrivals:
    """``respond`` for a ``ScriptedServer``: notes each marker's first arrival, answers "ok"."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: dict[str, float] = {}
        self.calls = 0  # requests answered
        self.cond = threading.Condition()

    def respond(self, received: Received) -> Reply:
        now = time.monotonic()
        with self.cond:
            self.calls += 1
            for message in received.json()["messages"]:
                content = message.get("content")
                text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
                if text.startswith(self.prefix):
                    self.seen.setdefault(text, now)
            self.cond.notify_all()
        return reply("ok")

    def wait(self, marker: str, timeout: float) -> float | None:
        """When ``marker`` arrived (``None``: not within ``timeout`` seconds)."""
        with self.cond:
            self.cond.wait_for(lambda: marker in self.seen, timeout)
            return self.seen.get(marker)

    def wait_all(self, markers: set[str], timeout: float) -> float:
        """When the last of ``markers`` arrived; ``TimeoutError`` if one did not in time."""
        with self.cond:
            if not self.cond.wait_for(lambda: markers <= self.seen.keys(), timeout):
                raise TimeoutError(f"{len(markers - self.seen.keys())} messages never reached the model")
            return max(self.seen[m] for m in markers)
