"""Group commit on both stores (``store_url``): appends that threads send while another append's
transaction is under way share the next transaction, each caller getting its own entries once
they are committed; a batch the database refuses is committed one append at a time, each caller
getting its own outcome (``msgwire/harness/store/group.py``)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import msgwire
from msgwire.harness.audit import Entry
from msgwire.harness.store import SQLStore, open_store
from tests._support.stores import Held, wait_until_inside


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as s:
        yield s


def _in_threads(calls: list[Any]) -> tuple[list[threading.Thread], list[Any]]:
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    return threads, results


def _queued(threads: list[threading.Thread]) -> None:
    """Wait (30 s at most) until each thread waits its turn (``GroupCommit.run``'s condition) or
    is done: queued behind the held transaction, or (without group commit) committed alone."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(AssertionError):
            wait_until_inside([t for t in threads if t.is_alive()], "wait", timeout=0.5)
            return


def test_appends_sent_while_a_transaction_is_under_way_share_the_next_one(store: SQLStore) -> None:
    """Six bound conversations, each appended to from a thread of its own: the first append's
    transaction is held open; the other five queue meanwhile and go in one transaction when it
    ends (before: a transaction each, six). Each gets its own entry, and every trail is whole."""
    conversations = [store.create() for _ in range(6)]
    for i, conversation in enumerate(conversations):
        conversation.add(msgwire.user(f"first {i}"))
    spy = Held(store)
    spy.hold()
    threads, results = _in_threads(
        [lambda c=c, i=i: c.add(msgwire.user(f"second {i}")) for i, c in enumerate(conversations)]
    )
    threads[0].start()
    assert spy.inside.wait(60)
    for thread in threads[1:]:
        thread.start()
    _queued(threads[1:])
    spy.release()
    for thread in threads:
        thread.join(60)
    assert all(isinstance(r, Entry) for r in results), results
    assert (spy.committed, spy.refused) == (2, 0)
    for i, (conversation, entry) in enumerate(zip(conversations, results, strict=True)):
        assert (entry.seq, entry.message.text) == (1, f"second {i}")
        stored = store.load(conversation.id)
        assert [e.hash for e in stored.entries] == [e.hash for e in conversation.entries]
        assert stored.verify()


def test_a_batch_the_database_refuses_is_committed_one_append_at_a_time(store: SQLStore) -> None:
    """Five appends queue behind a held transaction; one of them sends a message its
    conversation already holds (a retry whose reply was lost), which the shared transaction's
    insert refuses. Then each goes alone: that one gets the stored entry back (nothing twice),
    the others are stored, each caller gets its own outcome, and every trail verifies."""
    conversations = [store.create() for _ in range(5)]
    stored_before = store.append(conversations[2].id, msgwire.user("sent before", id="m-dup"))[0]
    spy = Held(store)
    spy.hold()
    messages = [msgwire.user("lead")] + [
        msgwire.user("sent before", id="m-dup") if i == 2 else msgwire.user(f"m{i}") for i in range(1, 5)
    ]
    calls = [lambda c=c, m=m: store.append(c.id, m) for c, m in zip(conversations, messages, strict=True)]
    threads, results = _in_threads(calls)
    threads[0].start()
    assert spy.inside.wait(60)
    for thread in threads[1:]:
        thread.start()
    _queued(threads[1:])
    spy.release()
    for thread in threads:
        thread.join(60)
    assert all(isinstance(r, list) for r in results), results
    assert spy.refused >= 1  # the shared transaction
    assert results[2] == [stored_before]  # the duplicate: the entry stored before, not a new one
    for i, conversation in enumerate(conversations):
        trail = store.load(conversation.id)
        assert trail.verify()
        texts = [m.text for m in trail.messages()]  # type: ignore[union-attr]
        assert texts == (["lead"] if i == 0 else ["sent before"] if i == 2 else [f"m{i}"])
