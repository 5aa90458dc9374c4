"""The MCP servers the resource tests run (written with the official SDK, in
tests/harness/resources/), as command lines, and what the tests watch them with: a clock the test
moves, a record of change notifications, and a streamable HTTP server process the fault tests kill
and start again on the same port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

SERVERS = Path(__file__).resolve().parents[1] / "harness" / "resources"
LOWLEVEL = [sys.executable, str(SERVERS / "mcp_lowlevel_server.py")]
"""The SDK's low-level ``Server``: no listen handler unless ``--listen`` (see its docstring)."""
HIGHLEVEL = [sys.executable, str(SERVERS / "mcp_highlevel_server.py")]
"""The SDK's ``MCPServer``: serves ``subscriptions/listen`` unless ``--no-listen``."""
WAIT = 60.0
"""How long a test waits for something that should happen at once (a loaded 2-core machine)."""


class Clock:
    """The manager's clock, moved by the test (freshness without sleeping)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Changes:
    """``on_change`` for ``MCPResources``: every (server, uri) it is called with, and an event
    per call a test can wait on."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self._cond = threading.Condition()

    def __call__(self, server: str, uri: str) -> None:
        with self._cond:
            self.seen.append((server, uri))
            self._cond.notify_all()

    def wait_for(self, server: str, uri: str, timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: (server, uri) in self.seen, timeout)


def wait_until(check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    """Poll ``check`` until it holds; ``AssertionError`` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(0.02)


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


class HttpServer:
    """``HIGHLEVEL`` over streamable HTTP on a port of 127.0.0.1 that stays the same across
    ``kill()`` and ``start()``, so a client's URL finds the restarted server."""

    def __init__(self, *flags: str) -> None:
        self.flags = flags
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [*HIGHLEVEL, "--http", str(self.port), *self.flags]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self._accepts, f"the MCP server on port {self.port} to accept connections")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def _accepts(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"the MCP server exited with {self.process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def __enter__(self) -> HttpServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
