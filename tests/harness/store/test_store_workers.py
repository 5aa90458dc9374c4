"""Many processes on one store, on both stores: appends into shared and separate conversations
with retries, concurrent forks and broadcasts; and a worker killed in the middle of a batch.

`make test` runs 4 processes x 200 appends; `make test-deep` (MSGWIRE_HYPOTHESIS=deep) the
issue's 8 x 2,000.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor

import pytest

from msgwire.harness.store import SQLStore, open_store
from tests._support.stores import append_worker, crash_worker

DEEP = os.environ.get("MSGWIRE_HYPOTHESIS") == "deep"
WORKERS, APPENDS = (8, 2000) if DEEP else (4, 200)
FORKS, POSTS = (5, 20) if DEEP else (2, 5)


def _batch_size(i: int) -> int:
    return 5 if i % 3 == 0 else 1


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
        f"w{w}-{i}-{j}" for w in range(WORKERS) for i in range(0, APPENDS, 2) for j in range(_batch_size(i))
    }
    _check(store, shared, expected_shared)
    for w in range(WORKERS):
        _check(store, own[w], {f"w{w}-{i}-{j}" for i in range(1, APPENDS, 2) for j in range(_batch_size(i))})
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


def test_a_worker_killed_mid_batch_leaves_no_partial_batch(store_url: str) -> None:
    store = open_store(store_url)
    c = store.create(id="crash")
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    worker = context.Process(target=crash_worker, args=(store_url, c.id, 10, 3, ready))
    worker.start()
    assert ready.wait(60), "the worker never reached the fourth batch"
    os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
    worker.join(30)
    assert worker.exitcode == -signal.SIGKILL
    store.close()

    reopened = open_store(store_url)  # as after a restart
    ids = [m.id for m in reopened.messages(c.id)]  # type: ignore[union-attr]
    assert ids == [f"b{b}-{j}" for b in range(3) for j in range(50)]  # batches 0-2 whole, batch 3 absent
    trail = reopened.load(c.id)
    assert [e.seq for e in trail.entries] == list(range(150))
    assert trail.verify(head=reopened.info(c.id).head)
    reopened.append(c.id, list(reopened.messages(c.id))[:1])  # still writable, and idempotent
    assert reopened.info(c.id).entries == 150
    reopened.close()


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:multiprocessing")
