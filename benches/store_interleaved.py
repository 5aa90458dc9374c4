"""The SQLite append rows of issue 30, measured interleaved in one process: msgwire's
``store.append`` of one message and of a batch of 100, beside the SQLite floor (``peers.SQLiteFloor``:
one row per message in one ``BEGIN IMMEDIATE`` transaction, the message's canonical bytes) and
openai-agents' ``SQLiteSession.add_items``, all at the same durability (WAL,
``synchronous=NORMAL``), each on its own file in one temporary folder, each conversation holding
``BASE`` messages of the store workload first (as ``test_store.py`` under ``MSGWIRE_BENCH_FULL``).

Each round times every entry in turn (``REPEAT`` appends of one message, or one batch of 100),
so a burst of load on a shared machine falls on all of them alike; medians of the rounds, as
wall time, this thread's CPU time and the process's (openai-agents writes from a worker thread:
``asyncio.to_thread``), and the ratios taken round by round.

Run: ``.venv/bin/python -m benches.store_interleaved [ROUNDS]`` (30 by default).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

import msgwire
from benches.peers import NormalSyncSession, SQLiteFloor
from msgwire import Message
from msgwire.bench.workloads import session as _session
from msgwire.harness.store import open_store

BASE = 1_000
REPEAT = {1: 10, 100: 1}  # appends per timing, by batch size


def _fresh(messages: list[Message]) -> Iterator[Message]:
    """The workload's messages again and again, each with an id never used before."""
    for i in itertools.count():
        yield msgspec.structs.replace(messages[i % len(messages)], id=f"fresh-{i}")  # type: ignore[type-var]


def _entries(folder: Path, messages: list[Message]) -> dict[str, tuple[int, Callable[[], object]]]:
    """name -> (batch size, one append)."""
    store = open_store(f"sqlite:///{folder / 'msgwire.db'}")
    conversation = store.create()
    store.append(conversation.id, messages[:BASE])
    floor = SQLiteFloor(folder / "floor.db", messages, BASE)
    items = [msgspec.json.decode(msgwire.dumps(m)) for m in messages]
    peer = NormalSyncSession("bench", db_path=folder / "agents.db")
    loop = asyncio.new_event_loop()
    loop.run_until_complete(peer.add_items(items[:BASE]))
    fresh, cycle = _fresh(messages), itertools.cycle(items)
    return {
        "1: msgwire": (1, lambda: store.append(conversation.id, next(fresh))),
        "1: floor": (1, lambda: floor.append([next(fresh)])),
        "1: openai-agents": (1, lambda: loop.run_until_complete(peer.add_items([next(cycle)]))),
        "100: msgwire": (100, lambda: store.append(conversation.id, [next(fresh) for _ in range(100)])),
        "100: floor": (100, lambda: floor.append([next(fresh) for _ in range(100)])),
        "100: openai-agents": (100, lambda: loop.run_until_complete(peer.add_items([next(cycle) for _ in range(100)]))),
    }


def measure(rounds: int) -> dict[str, list[tuple[float, float, float]]]:
    """name -> each round's (wall, thread, process) seconds per append."""
    messages = _session(n_messages=2 * BASE).messages
    with tempfile.TemporaryDirectory() as folder:
        entries = _entries(Path(folder), messages)
        for size, append in entries.values():  # warm-up: statements prepared, pages read
            for _ in range(REPEAT[size]):
                append()
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in entries}
        for _ in range(rounds):
            for name, (size, append) in entries.items():
                n = REPEAT[size]
                wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
                for _ in range(n):
                    append()
                times[name].append(
                    (
                        (time.perf_counter() - wall) / n,
                        (time.thread_time() - thread) / n,
                        (time.process_time() - process) / n,
                    )
                )
    return times


def _median(rows: list[tuple[float, float, float]], column: int) -> float:
    return statistics.median(r[column] for r in rows)


def _ratio(times: dict[str, list[tuple[float, float, float]]], top: str, bottom: str, column: int) -> float:
    """The median over the rounds of ``top / bottom`` in the same round."""
    return statistics.median(t[column] / b[column] for t, b in zip(times[top], times[bottom], strict=True))


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    with open("/proc/loadavg") as f:
        print("load:", f.read().strip())
    times = measure(rounds)
    print(f"  {'entry':22s} {'wall':>9s} {'thread':>9s} {'process':>9s}  (us per append, medians of {rounds} rounds)")
    for name, rows in times.items():
        print(f"  {name:22s} " + " ".join(f"{_median(rows, c) * 1e6:9.1f}" for c in range(3)))
    rows: list[tuple[str, Any, Any]] = [
        ("1 message: msgwire / floor", "1: msgwire", "1: floor"),
        ("100: msgwire / floor", "100: msgwire", "100: floor"),
        ("100: openai-agents / msgwire", "100: openai-agents", "100: msgwire"),
        ("1: openai-agents / msgwire", "1: openai-agents", "1: msgwire"),
    ]
    print(f"  {'ratio, round by round':30s} {'wall':>6s} {'thread':>6s} {'process':>7s}")
    for label, top, bottom in rows:
        print(f"  {label:30s} " + " ".join(f"{_ratio(times, top, bottom, c):6.2f}" for c in range(3)))


if __name__ == "__main__":
    main()
