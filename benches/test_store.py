"""Stores: appends (one message, and batches of 100) and loading a whole conversation, msgwire's
SQLite and PostgreSQL stores beside openai-agents' ``SQLiteSession`` and LangGraph's
``SqliteSaver`` (its SQLite checkpointer), on the same conversation.

Workload: the messages of ``workload.py`` (user turns, tool calls and results, code, thinking);
the peers store each as the dict of its canonical JSON (the same content; openai-agents keeps
one JSON row per item, LangGraph the whole list in each checkpoint, which is how a LangGraph
agent's ``messages`` channel is saved). The loaded conversation has 100,000 messages under
``MSGWIRE_BENCH_FULL=1`` (``make bench``), 2,000 otherwise (the untimed run of ``make test``);
appends go to a conversation that already holds ``APPEND_BASE`` messages.

Durability is the same for every SQLite entry and stated: WAL with ``synchronous=NORMAL``
(msgwire's default; set on the peers' connections: openai-agents through a subclass whose
connection setup adds the pragma, LangGraph on the connection it is given). A committed append
survives a crash of the process; PostgreSQL runs with ``fsync=on`` and
``synchronous_commit=on`` (every commit flushed). The PostgreSQL server is the tests'
throwaway cluster (``tests/_support/postgres.py``).

- ``msgwire``: ``store.append(id, message)`` / ``store.append(id, batch)`` (seq, hash chain,
  canonical bytes, message rows, in one transaction) and ``store.messages(id)`` (every message
  decoded into msgwire's typed Structs);
- ``postgres``: the same calls on ``PostgresStore``;
- ``openai_agents``: ``await session.add_items([item])`` / ``add_items(batch)`` and
  ``get_items()`` (dicts);
- ``langgraph``: ``saver.put(config, checkpoint)`` with the conversation so far plus the new
  messages, and ``saver.get_tuple(config)``;
- ``sqlite_floor``: SQLite alone, one row per message (no audit trail, idempotency or head),
  read back into the typed Structs: the least any store of these messages does, so the figure
  a target multiple of a peer can be checked against.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from agents.memory.sqlite_session import SQLiteSession
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

import msgwire
from benches.peers import NormalSyncSession, SQLiteFloor
from msgwire import Message
from msgwire.bench.workloads import session as _session
from msgwire.harness.store import SQLStore, open_store

FULL = bool(os.environ.get("MSGWIRE_BENCH_FULL"))
N_LOAD = 100_000 if FULL else 2_000
APPEND_BASE = 1_000 if FULL else 200
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def messages() -> list[Message]:
    return _session(n_messages=N_LOAD).messages


@pytest.fixture(scope="module")
def items(messages: list[Message]) -> list[dict[str, Any]]:
    return [msgspec.json.decode(msgwire.dumps(m)) for m in messages]


@pytest.fixture(scope="module")
def pg_server() -> Iterator[Any]:
    from tests._support.postgres import bindir, running

    if bindir() is None:
        pytest.skip("the PostgreSQL server is not installed (make system)")
    with running() as server:
        yield server


def _fresh(messages: list[Message], start: int) -> Iterator[Message]:
    """The workload's messages again and again, each with an id never used before."""
    for i in itertools.count(start):
        m = messages[i % len(messages)]
        yield msgspec.structs.replace(m, id=f"fresh-{i}")  # type: ignore[type-var]


# --- msgwire ------------------------------------------------------------------------------------


def _msgwire_store(url: str, messages: list[Message], base: int) -> tuple[SQLStore, str]:
    store = open_store(url)
    conversation = store.create()
    for i in range(0, base, 1000):
        store.append(conversation.id, messages[i : min(base, i + 1000)])
    return store, conversation.id


@pytest.mark.benchmark(group="store-append-1")
def test_store_append_1_msgwire(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    store, cid = _msgwire_store(f"sqlite:///{tmp_path / 'm.db'}", messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: store.append(cid, next(fresh)))
    assert store.info(cid).entries > APPEND_BASE
    store.close()


@pytest.mark.benchmark(group="store-append-1")
def test_store_append_1_postgres(benchmark: Any, pg_server: Any, messages: list[Message]) -> None:
    store, cid = _msgwire_store(pg_server.schema_url(), messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: store.append(cid, next(fresh)))
    assert store.info(cid).entries > APPEND_BASE
    store.close()


@pytest.mark.benchmark(group="store-append-100")
def test_store_append_100_msgwire(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    store, cid = _msgwire_store(f"sqlite:///{tmp_path / 'm.db'}", messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: store.append(cid, [next(fresh) for _ in range(100)]))
    assert store.info(cid).entries >= APPEND_BASE + 100
    store.close()


@pytest.mark.benchmark(group="store-append-100")
def test_store_append_100_postgres(benchmark: Any, pg_server: Any, messages: list[Message]) -> None:
    store, cid = _msgwire_store(pg_server.schema_url(), messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: store.append(cid, [next(fresh) for _ in range(100)]))
    assert store.info(cid).entries >= APPEND_BASE + 100
    store.close()


@pytest.mark.benchmark(group="store-load")
def test_store_load_msgwire(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    store, cid = _msgwire_store(f"sqlite:///{tmp_path / 'm.db'}", messages, N_LOAD)
    loaded = benchmark(store.messages, cid)
    assert loaded == messages
    store.close()


@pytest.mark.benchmark(group="store-load")
def test_store_load_postgres(benchmark: Any, pg_server: Any, messages: list[Message]) -> None:
    store, cid = _msgwire_store(pg_server.schema_url(), messages, N_LOAD)
    loaded = benchmark(store.messages, cid)
    assert loaded == messages
    store.close()


# --- openai-agents SQLiteSession ----------------------------------------------------------------


def _agents_session(
    path: Path, items: list[dict[str, Any]], base: int
) -> tuple[SQLiteSession, asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    session = NormalSyncSession("bench", db_path=path)
    for i in range(0, base, 1000):
        loop.run_until_complete(session.add_items(items[i : min(base, i + 1000)]))  # type: ignore[arg-type]
    return session, loop


@pytest.mark.benchmark(group="store-append-1")
def test_store_append_1_openai_agents(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    session, loop = _agents_session(tmp_path / "a.db", items, APPEND_BASE)
    cycle = itertools.cycle(items)
    benchmark(lambda: loop.run_until_complete(session.add_items([next(cycle)])))  # type: ignore[list-item]
    assert len(loop.run_until_complete(session.get_items())) > APPEND_BASE
    session.close()
    loop.close()


@pytest.mark.benchmark(group="store-append-100")
def test_store_append_100_openai_agents(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    session, loop = _agents_session(tmp_path / "a.db", items, APPEND_BASE)
    cycle = itertools.cycle(items)
    benchmark(lambda: loop.run_until_complete(session.add_items([next(cycle) for _ in range(100)])))  # type: ignore[misc]
    assert len(loop.run_until_complete(session.get_items())) >= APPEND_BASE + 100
    session.close()
    loop.close()


@pytest.mark.benchmark(group="store-load")
def test_store_load_openai_agents(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    session, loop = _agents_session(tmp_path / "a.db", items, N_LOAD)
    loaded = benchmark(lambda: loop.run_until_complete(session.get_items()))
    assert loaded == items
    session.close()
    loop.close()


# --- LangGraph SqliteSaver ----------------------------------------------------------------------


class _Graph:
    """One LangGraph thread whose ``messages`` channel holds the conversation: each append is
    a new checkpoint holding the list so far (what a graph with an ``add_messages`` channel
    saves each step)."""

    def __init__(self, path: Path, items: list[dict[str, Any]], base: int) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        self.saver.setup()
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.config: Any = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
        self.messages: list[dict[str, Any]] = []
        self.version = 0
        self.append(items[:base])

    def append(self, new: list[dict[str, Any]]) -> None:
        self.messages = self.messages + new
        self.version += 1
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": self.messages}
        checkpoint["channel_versions"] = {"messages": self.version}
        self.config = self.saver.put(
            self.config, checkpoint, {"source": "loop", "step": self.version}, {"messages": self.version}
        )

    def load(self) -> list[dict[str, Any]]:
        found = self.saver.get_tuple({"configurable": {"thread_id": "bench", "checkpoint_ns": ""}})
        assert found is not None
        return found.checkpoint["channel_values"]["messages"]  # type: ignore[no-any-return]


@pytest.mark.benchmark(group="store-append-1")
def test_store_append_1_langgraph(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    graph = _Graph(tmp_path / "g.db", items, APPEND_BASE)
    cycle = itertools.cycle(items)
    benchmark(lambda: graph.append([next(cycle)]))
    assert len(graph.load()) > APPEND_BASE
    graph.conn.close()


@pytest.mark.benchmark(group="store-append-100")
def test_store_append_100_langgraph(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    graph = _Graph(tmp_path / "g.db", items, APPEND_BASE)
    cycle = itertools.cycle(items)
    benchmark(lambda: graph.append([next(cycle) for _ in range(100)]))
    assert len(graph.load()) >= APPEND_BASE + 100
    graph.conn.close()


@pytest.mark.benchmark(group="store-load")
def test_store_load_langgraph(benchmark: Any, tmp_path: Path, items: list[dict[str, Any]]) -> None:
    graph = _Graph(tmp_path / "g.db", items, N_LOAD)
    loaded = benchmark(graph.load)
    assert loaded == items
    graph.conn.close()


# --- the floor: SQLite alone, one row per message -------------------------------------------------


@pytest.mark.benchmark(group="store-append-1")
def test_store_append_1_sqlite_floor(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    floor = SQLiteFloor(tmp_path / "f.db", messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: floor.append([next(fresh)]))
    assert len(floor.load()) > APPEND_BASE


@pytest.mark.benchmark(group="store-append-100")
def test_store_append_100_sqlite_floor(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    floor = SQLiteFloor(tmp_path / "f.db", messages, APPEND_BASE)
    fresh = _fresh(messages, 0)
    benchmark(lambda: floor.append([next(fresh) for _ in range(100)]))
    assert len(floor.load()) >= APPEND_BASE + 100


@pytest.mark.benchmark(group="store-load")
def test_store_load_sqlite_floor(benchmark: Any, tmp_path: Path, messages: list[Message]) -> None:
    floor = SQLiteFloor(tmp_path / "f.db", messages, N_LOAD)
    loaded = benchmark(floor.load)
    assert loaded == messages
