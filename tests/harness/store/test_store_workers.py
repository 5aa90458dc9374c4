"""Many processes on one store, on both stores: appends into shared and separate conversations
with retries, concurrent forks and broadcasts; and eight writers, one of them SIGKILLed in the
middle of a batch.

Sizes (``tests._support.scale``): `make test` runs 4 processes x 200 appends and one kill;
`make test-deep` (MSGWIRE_HYPOTHESIS=deep) the issue's 8 x 2,000 and five kills.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from msgwire.harness.store import SQLiteStore, SQLStore, open_store
from tests._support.scale import scaled
from tests._support.stores import append_worker, batch_size, crash_worker, steady_writer

WORKERS, APPENDS = scaled(4, 8), scaled(200, 2000)
FORKS, POSTS = scaled(2, 5), scaled(5, 20)
KILLS = scaled(1, 5)
BESIDE_THE_KILLED = 7  # writers appending while the eighth process is killed
AFTER_THE_KILL = scaled(20, 200)  # batches each of them appends at least, the kill included


def test_many_workers_lose_nothing_and_duplicate_nothing(store_url: str) -> None:
    store = open_store(store_url)
    shared = store.create(id="shared").id
    own = [store.create(id=f"own-{w}").id for w in range(WORKERS)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(WORKERS, mp_context=context) as pool:
        futures = [
            pool.submit(append_worker, store_url, w, APPENDS, shared, own[w], FORKS, POSTS) for w in range(WORKERS)
        ]
        results = [f.result() for f in futures]
    assert [r["errors"] for r in results] == [[]] * WORKERS  # no "database is locked", nothing else

    expected_shared = {
        f"w{w}-{i}-{j}" for w in range(WORKERS) for i in range(0, APPENDS, 2) for j in range(batch_size(i))
    }
    _check(store, shared, expected_shared)
    for w in range(WORKERS):
        _check(store, own[w], {f"w{w}-{i}-{j}" for i in range(1, APPENDS, 2) for j in range(batch_size(i))})
    trail = store.load(shared)
    forks = [f for r in results for f in r["forks"]]
    assert len(forks) == WORKERS * FORKS
    for fork in forks:
        copy = store.load(fork)
        assert copy.verify()
        assert copy.entries == trail.entries[: len(copy.entries)]  # a prefix of the shared trail, as it stood
        assert [m.id for m in store.messages(fork)] == [e.message.id for e in copy.entries]  # type: ignore[union-attr]
    assert store.mail_seq() == WORKERS * POSTS
    store.close()


def _check(store: SQLStore, conversation_id: str, expected: set[str]) -> None:
    ids = [m.id for m in store.messages(conversation_id)]  # type: ignore[union-attr]
    assert len(ids) == len(set(ids)), "duplicated messages"
    assert set(ids) == expected, f"lost {len(expected - set(ids))}, unexpected {len(set(ids) - expected)}"
    trail = store.load(conversation_id)
    assert [e.seq for e in trail.entries] == list(range(len(expected)))  # gap-free
    assert trail.verify(head=store.info(conversation_id).head)


def test_eight_writers_one_killed_mid_batch_keep_every_whole_batch_and_no_partial_one(store_url: str) -> None:
    """Seven processes append (batches of 1 and 5, shared and own conversations, retries)
    while an eighth, appending batches of 50 to the shared conversation, is SIGKILLed inside
    the transaction of its fourth batch (``KILLS`` rounds). What is kept: every batch the
    writers were told was stored, once; the killed one's first three batches whole and its
    fourth absent; gap-free seq; the chains verify; SQLite's ``integrity_check`` says ok; and
    the store is still writable."""
    store = open_store(store_url)
    shared = store.create(id="shared").id
    own = [store.create(id=f"own-{w}").id for w in range(BESIDE_THE_KILLED)]
    spawn = multiprocessing.get_context("spawn")
    expected_shared: set[str] = set()
    expected_own: list[set[str]] = [set() for _ in own]
    for round_ in range(KILLS):
        prefix = f"r{round_}-"
        stop, progress, results = spawn.Event(), spawn.Array("q", BESIDE_THE_KILLED), spawn.Queue()
        writers = [
            spawn.Process(target=steady_writer, args=(store_url, w, shared, own[w], prefix, stop, progress, results))
            for w in range(BESIDE_THE_KILLED)
        ]
        ready = spawn.Event()
        victim = spawn.Process(target=crash_worker, args=(store_url, shared, 10, 3, ready, prefix))
        for process in [*writers, victim]:
            process.start()
        _until(lambda: ready.is_set() or not victim.is_alive(), 120)  # noqa: B023
        assert ready.is_set(), f"the victim ended (exit code {victim.exitcode}) before its fourth batch"
        os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
        victim.join(60)
        assert victim.exitcode == -signal.SIGKILL
        _until(lambda: min(progress) >= AFTER_THE_KILL)  # noqa: B023 - waited on here, in this round
        stop.set()
        done = sorted(results.get(timeout=120) for _ in writers)
        for process in writers:
            process.join(60)
        assert [errors for _, _, errors in done] == [[]] * BESIDE_THE_KILLED
        for w, batches, _ in done:
            for i in range(batches):
                ids = {f"{prefix}w{w}-{i}-{j}" for j in range(batch_size(i))}
                (expected_shared if i % 2 == 0 else expected_own[w]).update(ids)
        expected_shared.update(f"{prefix}b{b}-{j}" for b in range(3) for j in range(50))  # batch 3: absent
    store.close()

    reopened = open_store(store_url)  # as after a restart
    _check(reopened, shared, expected_shared)  # no partial batch: every id is one of a whole batch, each there
    for w, conversation_id in enumerate(own):
        _check(reopened, conversation_id, expected_own[w])
    if isinstance(reopened, SQLiteStore):
        with sqlite3.connect(reopened.path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    reopened.append(shared, list(reopened.messages(shared))[:1])  # still writable, and idempotent
    assert reopened.info(shared).entries == len(expected_shared)
    reopened.close()


def _until(condition: Any, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:multiprocessing")
