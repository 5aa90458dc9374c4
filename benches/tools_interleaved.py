"""The tool-runner rows of issue 22, measured interleaved inside one running event loop: one tool
call per message through ``ToolRunner.run`` (approve, then execute), a tool doing nothing.
Each round times every entry in turn (batches of 200 calls), so a burst of load on a shared
machine falls on all of them alike; prints each entry's median per call.

Entries: an async tool (``run`` and ``execute`` alone, beside awaiting the function: its floor),
a sync tool in the shared thread pool (beside a bare ``run_in_executor`` round trip: its floor),
and a sync tool declared ``blocking=False`` (called on the loop).

Each entry is timed three ways: wall time, this thread's CPU time and the process's (the pool's
threads included). On a shared, loaded machine the CPU times are the steadier figures: the wall
time of a thread hand-off is mostly the scheduler's latency.

Run: ``.venv/bin/python -m benches.tools_interleaved [ROUNDS]`` (30 by default).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor

import msgwire
from benches.tool_set import noop, noop_sync, registry
from msgwire import ToolCallBlock
from msgwire.harness import ToolRunner

BATCH = 200  # calls per timing


def _message(name: str) -> msgwire.AssistantMessage:
    return msgwire.assistant([ToolCallBlock(id="call_1", name=name, arguments='{"n": 1}')])


async def measure(rounds: int) -> dict[str, tuple[float, float, float]]:
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=4) as pool:
        runner = ToolRunner(registry)
        async_call, sync_call, nonblocking = _message("noop"), _message("noop_sync"), _message("noop_nonblocking")
        approved = await runner.approve(async_call)
        entries: dict[str, Callable[[], Awaitable[object]]] = {
            "async: run": lambda: runner.run(async_call),
            "async: execute alone": lambda: runner.execute(approved),
            "async: the function (floor)": lambda: noop.fn(1),
            "sync, threads: run": lambda: runner.run(sync_call),
            "sync: run_in_executor (floor)": lambda: loop.run_in_executor(pool, noop_sync.fn, 1),
            "sync, blocking=False: run": lambda: runner.run(nonblocking),
        }
        for call in entries.values():  # warm-up: lazy set-up, the shared pool's first thread
            await call()
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in entries}
        for _ in range(rounds):
            for name, call in entries.items():
                wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
                for _ in range(BATCH):
                    await call()
                times[name].append(
                    (
                        (time.perf_counter() - wall) / BATCH,
                        (time.thread_time() - thread) / BATCH,
                        (time.process_time() - process) / BATCH,
                    )
                )
        runner.close()
    return {name: _medians(t) for name, t in times.items()}


def _medians(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    wall, thread, process = zip(*rows, strict=True)
    return statistics.median(wall), statistics.median(thread), statistics.median(process)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    with open("/proc/loadavg") as f:
        print("load:", f.read().strip())
    print(f"  {'entry':32s} {'wall':>8s} {'thread':>8s} {'process':>8s}  (us, medians)")
    for name, (wall, thread, process) in asyncio.run(measure(rounds)).items():
        print(f"  {name:32s} {wall * 1e6:8.1f} {thread * 1e6:8.1f} {process * 1e6:8.1f}")


if __name__ == "__main__":
    main()
