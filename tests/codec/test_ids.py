"""``new_id`` / ``new_ids``: UUIDv7 strings, strictly increasing within a process (RFC 9562
section 6.2 method 1), unique across threads; a batch reads like single calls."""

from __future__ import annotations

import threading
import uuid

from msgwire._ids import new_id, new_ids


def _check(ids: list[str]) -> None:
    for text in ids:
        value = uuid.UUID(text)
        assert str(value) == text
        assert value.version == 7
        assert value.variant == uuid.RFC_4122


def test_single_and_batched_ids_interleave_in_order() -> None:
    ids = [new_id()]
    for n in (1, 7, 5000, 0, 3):
        ids += new_ids(n)
        ids.append(new_id())
    _check(ids)
    assert len(ids) == 1 + 5011 + 5
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_a_batch_larger_than_the_counter_borrows_the_next_millisecond() -> None:
    ids = new_ids(3 * 4096)  # more than one millisecond's 12-bit counter holds
    _check(ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_threads_never_share_an_id() -> None:
    found: list[list[str]] = []

    def work() -> None:
        found.append(new_ids(2000) + [new_id() for _ in range(200)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in found for i in ids]
    assert len(set(every)) == len(every) == 4 * 2200
    for ids in found:
        assert ids == sorted(ids)


def test_a_forked_child_never_repeats_the_parents_randomness() -> None:
    """Randomness is read 4 KiB at a time: a child forked with the buffer must not hand out the
    same bytes as its parent (the same millisecond would then give the same ids)."""
    import os

    new_id()  # the buffer is filled
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os.write(writer, new_id().encode())
        os._exit(0)
    os.close(writer)
    theirs = os.read(reader, 64).decode()
    os.waitpid(child, 0)
    ours = new_id()
    assert theirs[-17:] != ours[-17:]
