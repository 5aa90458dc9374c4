"""The tool runner: overhead per call beside calling the function directly, and concurrency.

Overhead groups (``ToolRunner.execute`` of already approved calls, in one event loop that stays
up; each entry runs the same tool the same number of times):

- ``tool_call_async`` / ``tool_call_sync``: one call of a no-op tool, async (on the loop) or sync
  (in the runner's thread pool; ``nonblocking``: declared ``blocking=False``, on the loop),
  through ``execute``, beside awaiting / calling it directly (and,
  for the sync one, beside the bare thread-pool round trip, ``run_in_executor``: its floor);
- ``tool_batch_async``: 100 calls of the async no-op in one message (run concurrently, limit 16),
  beside awaiting the function 100 times;
- ``tool_call_recorded``: one call with a ``Conversation`` recording the result (the hash-chained
  entry included), beside the same call not recorded.

What ``execute`` does beyond the direct call: decode and check the arguments, check the
approval's fingerprint, a task per call, the timing, and a ``ToolResultMessage`` (a new id, a
timestamp). Per-call overhead = (median(msgwire) - median(direct)) / calls; target under 50 us.

``tool_wall_100x10ms``: 100 calls of a tool that takes 10 ms, limit 16: the floor is
ceil(100 / 16) = 7 waves of 10 ms = 70 ms. ``msgwire`` (an async tool, ``asyncio.sleep``) beside
``threads_sync`` (a sync tool, ``time.sleep``, in the runner's threads) and ``gather_semaphore``
(``asyncio.gather`` of the bare function under a ``Semaphore(16)``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import msgwire
from benches.tool_set import nap, noop, noop_sync, registry
from msgwire import ToolCallBlock
from msgwire.harness import Approvals, Conversation, ToolRunner
from msgwire.harness.tools import decide


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.close()


@pytest.fixture(scope="module")
def runner() -> Iterator[ToolRunner]:
    with ToolRunner(registry, limit=16) as r:
        yield r


def _approved(loop: asyncio.AbstractEventLoop, name: str, calls: int) -> Approvals:
    message = msgwire.assistant(
        [ToolCallBlock(id=f"call_{i}", name=name, arguments=json.dumps({"n": i})) for i in range(calls)]
    )
    approvals = loop.run_until_complete(decide(message, registry))
    assert all(b.approval == "approved" for b in approvals.message.tool_calls)
    return approvals


def _check(results: list[msgwire.ToolResultMessage], calls: int) -> None:
    assert [r.status for r in results] == ["success"] * calls
    assert [r.content[0].text for r in results] == [str(i) for i in range(calls)]  # type: ignore[union-attr]


# --- one call --------------------------------------------------------------------------------


@pytest.mark.benchmark(group="tool_call_async")
def test_tool_call_async_msgwire(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "noop", 1)
    results = benchmark(lambda: loop.run_until_complete(runner.execute(approvals)))
    _check(results, 1)


@pytest.mark.benchmark(group="tool_call_async")
def test_tool_call_async_direct(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    assert benchmark(lambda: loop.run_until_complete(noop.fn(0))) == 0


@pytest.mark.benchmark(group="tool_call_sync")
def test_tool_call_sync_msgwire(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "noop_sync", 1)
    results = benchmark(lambda: loop.run_until_complete(runner.execute(approvals)))
    _check(results, 1)


@pytest.mark.benchmark(group="tool_call_sync")
def test_tool_call_sync_msgwire_nonblocking(
    benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner
) -> None:
    """A sync tool declared blocking=False: called on the loop, no thread hand-off."""
    approvals = _approved(loop, "noop_nonblocking", 1)
    results = benchmark(lambda: loop.run_until_complete(runner.execute(approvals)))
    _check(results, 1)


@pytest.mark.benchmark(group="tool_call_sync")
def test_tool_call_sync_direct(benchmark: Any) -> None:
    assert benchmark(noop_sync.fn, 0) == 0


@pytest.mark.benchmark(group="tool_call_sync")
def test_tool_call_sync_run_in_executor(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    """The floor of any sync tool run from asyncio: a thread pool round trip."""
    with ThreadPoolExecutor(max_workers=16) as pool:

        async def round_trip() -> int:
            return await loop.run_in_executor(pool, noop_sync.fn, 0)

        assert benchmark(lambda: loop.run_until_complete(round_trip())) == 0


@pytest.mark.benchmark(group="tool_call_recorded")
def test_tool_call_recorded_msgwire(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "noop", 1)
    conversation = Conversation()
    results = benchmark(lambda: loop.run_until_complete(runner.execute(approvals, conversation=conversation)))
    _check(results, 1)
    assert conversation.entries[-1].message == results[0]
    assert conversation.verify()


@pytest.mark.benchmark(group="tool_call_recorded")
def test_tool_call_recorded_not_recorded(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "noop", 1)
    _check(benchmark(lambda: loop.run_until_complete(runner.execute(approvals))), 1)


# --- 100 calls in one message ----------------------------------------------------------------


@pytest.mark.benchmark(group="tool_batch_async")
def test_tool_batch_async_msgwire(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "noop", 100)
    _check(benchmark(lambda: loop.run_until_complete(runner.execute(approvals))), 100)


@pytest.mark.benchmark(group="tool_batch_async")
def test_tool_batch_async_direct(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    async def direct() -> list[int]:
        return [await noop.fn(i) for i in range(100)]

    assert benchmark(lambda: loop.run_until_complete(direct())) == list(range(100))


# --- wall time of 100 x 10 ms, limit 16 ------------------------------------------------------


@pytest.mark.benchmark(group="tool_wall_100x10ms")
def test_tool_wall_100x10ms_msgwire(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "nap", 100)
    _check(benchmark(lambda: loop.run_until_complete(runner.execute(approvals))), 100)


@pytest.mark.benchmark(group="tool_wall_100x10ms")
def test_tool_wall_100x10ms_threads_sync(benchmark: Any, loop: asyncio.AbstractEventLoop, runner: ToolRunner) -> None:
    approvals = _approved(loop, "nap_sync", 100)
    _check(benchmark(lambda: loop.run_until_complete(runner.execute(approvals))), 100)


@pytest.mark.benchmark(group="tool_wall_100x10ms")
def test_tool_wall_100x10ms_gather_semaphore(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    async def gather() -> list[int]:
        semaphore = asyncio.Semaphore(16)

        async def one(i: int) -> int:
            async with semaphore:
                return await nap.fn(i)

        return await asyncio.gather(*(one(i) for i in range(100)))

    assert benchmark(lambda: loop.run_until_complete(gather())) == list(range(100))
