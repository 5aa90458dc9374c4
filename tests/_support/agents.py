"""What the agent tests share: a scripted model server per test, providers pointed at it, and a
small tool registry whose tools count their runs (a side effect a test can see)."""

from __future__ import annotations

from typing import Any

from msgwire.harness import Approve, Deny, ToolRegistry
from msgwire.harness.providers import PROVIDERS, HTTPProvider, Retry
from msgwire.testing import ScriptedServer

FAST_RETRY = Retry(max_retries=0)
"""The providers' own retries (before the first byte) off: the agent's are under test."""


class Tools:
    """``read_file`` (auto), ``delete_file`` (ask) and ``grep`` (auto), each counting its runs."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.registry = ToolRegistry()

        @self.registry.tool
        def read_file(path: str) -> str:
            """Read a file of the workspace."""
            self.runs.append(("read_file", {"path": path}))
            return f"{path}: buy milk"

        @self.registry.tool(policy="ask")
        def delete_file(path: str) -> str:
            """Delete a file of the workspace."""
            self.runs.append(("delete_file", {"path": path}))
            return f"{path} deleted"

        @self.registry.tool
        def grep(pattern: str) -> str:
            """Search the workspace."""
            self.runs.append(("grep", {"pattern": pattern}))
            return f"3 lines match {pattern!r}"


def deny_all(requests: list[Any]) -> dict[str, Any]:
    return {r.call.id: Deny(reason="not allowed here") for r in requests}


def approve_all(requests: list[Any]) -> dict[str, Any]:
    return {r.call.id: Approve() for r in requests}


def connect(dialect: str, server: ScriptedServer, **options: Any) -> HTTPProvider:
    options.setdefault("api_key", "test-key")
    options.setdefault("model", "scripted-model")
    options.setdefault("retry", FAST_RETRY)
    return PROVIDERS[dialect](base_url=server.url, **options)
