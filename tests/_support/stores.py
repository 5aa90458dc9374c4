"""What the store tests share: raw SQL on a store's database (to corrupt a row, or to look at
what is really stored), whatever the backend."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from msgwire.harness.store import SQLiteStore, SQLStore


def raw_sql(store: SQLStore, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement outside msgwire (``?`` placeholders) and commit; the rows it returns."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall()
    import psycopg

    from msgwire.harness.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.conninfo, autocommit=True) as conn:
        cur = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


def key(store: SQLStore, value: str) -> Any:
    """An id as the store's columns hold it (PostgreSQL: its UTF-8 bytes)."""
    return value if isinstance(store, SQLiteStore) else value.encode()


def wait_until_inside(threads: Sequence[threading.Thread], function: str, timeout: float = 60) -> None:
    """Wait until every thread is inside a call of ``function`` (a name), seen on its stack: a
    test then knows each waiter is waiting, not merely started."""

    def inside(thread: threading.Thread) -> bool:
        frame = sys._current_frames().get(thread.ident or 0)
        while frame is not None:
            if frame.f_code.co_name == function:
                return True
            frame = frame.f_back
        return False

    deadline = time.monotonic() + timeout
    while not all(inside(thread) for thread in threads):
        assert time.monotonic() < deadline, f"not every thread reached {function}"
        time.sleep(0.01)


class Held:
    """A spy on a store's transactions (the database runs each): the first one entered after
    ``hold()`` waits inside until ``release()``; ``committed`` / ``refused`` count the others."""

    def __init__(self, store: SQLStore) -> None:
        self.committed = 0
        self.refused = 0
        self.inside = threading.Event()
        self._release = threading.Event()
        self._armed = False
        real = store._transaction

        @contextlib.contextmanager
        def spied(**options: Any) -> Iterator[Any]:
            hold, self._armed = self._armed, False
            try:
                with real(**options) as cur:
                    if hold:
                        self.inside.set()
                        assert self._release.wait(60)
                    yield cur
            except BaseException:
                self.refused += 1
                raise
            self.committed += 1

        store._transaction = spied  # type: ignore[method-assign]

    def hold(self) -> None:
        self._armed = True

    def release(self) -> None:
        self._release.set()


# --- worker processes (run with the "spawn" start method: importable from here) -------------------


def append_worker(url: str, worker: int, appends: int, shared: str, own: str, forks: int, posts: int) -> dict[str, Any]:
    """Append ``appends`` times (single messages and batches of 5, every other one to the
    shared conversation), re-sending every tenth batch as a retry would; fork the shared
    conversation ``forks`` times and post ``posts`` broadcasts along the way."""
    import msgwire
    from msgwire.harness.store import open_store

    store = open_store(url)
    sent = {shared: 0, own: 0}
    fork_ids: list[str] = []
    errors: list[str] = []
    every_fork = max(1, appends // max(1, forks)) if forks else 0
    every_post = max(1, appends // max(1, posts)) if posts else 0
    try:
        for i in range(appends):
            target = shared if i % 2 == 0 else own
            size = batch_size(i)
            batch = [msgwire.user(f"w{worker} #{i}.{j}", id=f"w{worker}-{i}-{j}") for j in range(size)]
            store.append(target, batch)
            if i % 10 == 0:
                store.append(target, batch)  # the retry of a batch whose reply was lost
            sent[target] += size
            if every_fork and i % every_fork == every_fork - 1 and len(fork_ids) < forks:
                fork_ids.append(store.fork(shared))
            if every_post and i % every_post == every_post - 1:
                store.broadcast(f"from worker {worker}, step {i}", sender=f"w{worker}")
    except Exception as exc:  # reported to the parent, which fails the test with it
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()
    return {"sent": sent, "forks": fork_ids, "errors": errors}


def steady_writer(
    url: str, worker: int, shared: str, own: str, prefix: str, stop: Any, progress: Any, results: Any
) -> None:
    """Append batches (of 5 every third, else of 1; every other one to the shared conversation,
    every tenth sent twice as a retry would) until ``stop`` is set, ``progress[worker]`` counting
    them; then put ``(worker, batches, errors)`` on ``results``. Batch ``i``'s messages have ids
    ``{prefix}w{worker}-{i}-{j}``."""
    import msgwire
    from msgwire.harness.store import open_store

    store = open_store(url)
    errors: list[str] = []
    i = 0
    try:
        while not stop.is_set():
            batch = [msgwire.user(f"w{worker} #{i}.{j}", id=f"{prefix}w{worker}-{i}-{j}") for j in range(batch_size(i))]
            target = shared if i % 2 == 0 else own
            store.append(target, batch)
            if i % 10 == 0:
                store.append(target, batch)
            i += 1
            progress[worker] = i
    except Exception as exc:  # reported to the parent, which fails the test with it
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()
        results.put((worker, i, errors))


def batch_size(i: int) -> int:
    """The size of a writer's batch ``i``."""
    return 5 if i % 3 == 0 else 1


def crash_worker(url: str, conversation_id: str, batches: int, pause_in: int, ready: Any, prefix: str = "") -> None:
    """Append batches of 50 (ids ``{prefix}b{batch}-{j}``); inside batch ``pause_in``'s
    transaction, once its entries are written, tell the parent (``ready``) and wait to be killed."""
    import threading

    import msgwire
    from msgwire.harness.store import base, open_store, postgres

    paused = f"{prefix}b{pause_in}-0"  # the first message of the batch to be killed in

    def pausing(plain_many: Any) -> Any:
        def many(self: Any, statement: str, params: Any) -> None:
            plain_many(self, statement, params)
            # The batch is known by its first message's id (a batch may be tried more than once: a
            # store that assumed a head another writer moved tries again the careful way).
            if statement.startswith("INSERT INTO msgwire_entries"):
                first = params[0][3]  # message_id: text (SQLite) or bytes (PostgreSQL)
                if (first.decode() if isinstance(first, bytes) else first) == paused:
                    ready.set()
                    threading.Event().wait()  # until SIGKILL

        return many

    # Every cursor a transaction may write through: the one-round-trip transaction's (the base
    # class) and PostgreSQL's careful one, which has a `many` of its own (the assumed head lost
    # to another writer, as it mostly is under load, goes that way).
    for cursor in (base.Cursor, postgres._Cursor):
        cursor.many = pausing(cursor.__dict__["many"])  # type: ignore[method-assign]
    store = open_store(url)
    for b in range(batches):
        store.append(conversation_id, [msgwire.user(f"b{b}.{j}", id=f"{prefix}b{b}-{j}") for j in range(50)])


def post_worker(url: str, to: str, text: str) -> None:
    """Post one direct message from a process of its own."""
    posts_worker(url, [(to, text)])


def posts_worker(url: str, mail: Sequence[tuple[str, str]]) -> None:
    """Post direct messages ``(to, text)`` in turn from a process of its own."""
    from msgwire.harness.store import open_store

    with open_store(url) as store:
        for to, text in mail:
            store.post(text, to=to)


def swarm_step_worker(url: str, model_url: str, name: str) -> None:
    """Open the swarm's agent ``name`` on the store at ``url`` and run one step of it against the
    model server at ``model_url``, from a process of its own (which a test may kill mid-call)."""
    from msgwire.harness.providers import OpenAI
    from msgwire.harness.store import open_store
    from msgwire.harness.swarm import Swarm

    with (
        open_store(url) as store,
        OpenAI(base_url=model_url, api_key="test", model="scripted") as provider,
        Swarm(store, provider) as swarm,
    ):
        swarm.add(name)
        swarm.step(name)
