"""The tools the tool-runner benches run (``test_tools.py``, ``tools_interleaved.py``): no-ops,
async, sync in threads and sync on the loop (``blocking=False``), and 10 ms naps."""

from __future__ import annotations

import asyncio
import time

from msgwire.harness import ToolRegistry

registry = ToolRegistry()


@registry.tool
async def noop(n: int) -> int:
    return n


@registry.tool
def noop_sync(n: int) -> int:
    return n


@registry.tool(blocking=False)
def noop_nonblocking(n: int) -> int:
    return n


@registry.tool
async def nap(n: int) -> int:
    await asyncio.sleep(0.01)
    return n


@registry.tool
def nap_sync(n: int) -> int:
    time.sleep(0.01)
    return n
