"""openai-agents sessions: msgwire's ``StoreSession`` (SQLite and PostgreSQL) beside
openai-agents' own ``SQLiteSession``, on the same 1,000 items at the same durability.

Items: what openai-agents' ``Runner`` stored for the six turns of
``tests/_support/openai_agents.py`` (its test model answering with the items real Responses
streams returned: reasoning, parallel function calls and their outputs, text with
``logprobs``, a web search with citations, a file search, a computer call and its screenshot,
a handoff), 28 items, repeated to 1,000 (410 B of JSON each on average).

- ``add``: ``await session.add_items(items)``, the 1,000 at once, into a new session (msgwire:
  each item read by the Responses reader, written back to check it, one transaction of 1,000
  entries with their hash chain);
- ``turn``: ``add_items`` of one turn (4 items: the user's, a call, its output, the answer) to a
  session of 1,000, what a run adds each turn;
- ``get``: ``await session.get_items()`` of the 1,000: for msgwire by a new ``StoreSession``
  each time (it reads every entry, as a server making one per request does) and, as
  ``same_session``, by one that has read them before (it reads only the entries appended since:
  none).

Durability: WAL with ``synchronous=NORMAL`` for both SQLite entries (the SQLiteSession subclass
of ``peers.py``); PostgreSQL is the tests' throwaway cluster, every commit flushed.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession

from benches.peers import NormalSyncSession
from msgwire.harness.store import SQLStore, open_store
from msgwire.interop.openai_agents import StoreSession
from tests._support.openai_agents import run_turns

N = 1_000


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    async def record() -> list[Any]:
        session = SQLiteSession("record")
        await run_turns(session)
        return await session.get_items()

    turn = asyncio.run(record())
    return list(itertools.islice(itertools.cycle(turn), N))


TURN = [
    {"content": "And 4 + 5?", "role": "user"},
    {"arguments": '{"a":4,"b":5}', "call_id": "call_9", "name": "add", "type": "function_call", "id": "fc_9"},
    {"call_id": "call_9", "output": "9", "type": "function_call_output"},
    {"role": "assistant", "content": "9."},
]


@pytest.fixture(scope="module")
def pg_server() -> Iterator[Any]:
    from tests._support.postgres import bindir, running

    if bindir() is None:
        pytest.skip("the PostgreSQL server is not installed (make system)")
    with running() as server:
        yield server


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _fresh_ids() -> Iterator[str]:
    return (f"bench-{i}" for i in itertools.count())


# --- add_items of 1,000 items into a new session --------------------------------------------------


def _bench_add(benchmark: Any, loop: asyncio.AbstractEventLoop, make: Any, items: list[Any]) -> Any:
    ids = _fresh_ids()
    last: list[Any] = [None]  # the last round's session only: the others' items are let go

    def setup() -> tuple[tuple[Any], dict[str, Any]]:
        last[0] = make(next(ids))
        return (last[0],), {}

    benchmark.pedantic(lambda s: loop.run_until_complete(s.add_items(items)), setup=setup, rounds=8)
    return last[0]


@pytest.mark.benchmark(group="agents-add-1000")
def test_agents_add_1000_msgwire(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        last = _bench_add(benchmark, loop, lambda sid: StoreSession(sid, store), items)
        assert loop.run_until_complete(StoreSession(last.session_id, store).get_items()) == items


@pytest.mark.benchmark(group="agents-add-1000")
def test_agents_add_1000_postgres(benchmark: Any, pg_server: Any, loop: Any, items: list[Any]) -> None:
    with open_store(pg_server.schema_url()) as store:
        last = _bench_add(benchmark, loop, lambda sid: StoreSession(sid, store), items)
        assert loop.run_until_complete(StoreSession(last.session_id, store).get_items()) == items


@pytest.mark.benchmark(group="agents-add-1000")
def test_agents_add_1000_openai_agents(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    sessions: list[SQLiteSession] = []  # closed at the end (a closed one lets its file go)

    def make(sid: str) -> SQLiteSession:
        sessions.append(NormalSyncSession(sid, db_path=tmp_path / "a.db"))
        return sessions[-1]

    last = _bench_add(benchmark, loop, make, items)
    assert loop.run_until_complete(last.get_items()) == items
    for s in sessions:
        s.close()


# --- add_items of one turn to a 1,000-item session -------------------------------------------------


def _msgwire_session(store: SQLStore, loop: Any, items: list[Any]) -> StoreSession:
    session = StoreSession("bench", store)
    loop.run_until_complete(session.add_items(items))
    return session


@pytest.mark.benchmark(group="agents-turn")
def test_agents_turn_msgwire(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        session = _msgwire_session(store, loop, items)
        benchmark(lambda: loop.run_until_complete(session.add_items(TURN)))  # type: ignore[arg-type]
        assert loop.run_until_complete(session.get_items(4)) == TURN


@pytest.mark.benchmark(group="agents-turn")
def test_agents_turn_postgres(benchmark: Any, pg_server: Any, loop: Any, items: list[Any]) -> None:
    with open_store(pg_server.schema_url()) as store:
        session = _msgwire_session(store, loop, items)
        benchmark(lambda: loop.run_until_complete(session.add_items(TURN)))  # type: ignore[arg-type]
        assert loop.run_until_complete(session.get_items(4)) == TURN


@pytest.mark.benchmark(group="agents-turn")
def test_agents_turn_openai_agents(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    session = NormalSyncSession("bench", db_path=tmp_path / "a.db")
    loop.run_until_complete(session.add_items(items))  # type: ignore[arg-type]
    benchmark(lambda: loop.run_until_complete(session.add_items(TURN)))  # type: ignore[arg-type]
    assert loop.run_until_complete(session.get_items(4)) == TURN
    session.close()


# --- get_items of a 1,000-item session -------------------------------------------------------------


@pytest.mark.benchmark(group="agents-get-1000")
def test_agents_get_1000_msgwire(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        _msgwire_session(store, loop, items)
        got = benchmark(lambda: loop.run_until_complete(StoreSession("bench", store).get_items()))
        assert got == items


@pytest.mark.benchmark(group="agents-get-1000")
def test_agents_get_1000_same_session(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    with open_store(f"sqlite:///{tmp_path / 'm.db'}") as store:
        session = _msgwire_session(store, loop, items)
        got = benchmark(lambda: loop.run_until_complete(session.get_items()))
        assert got == items


@pytest.mark.benchmark(group="agents-get-1000")
def test_agents_get_1000_postgres(benchmark: Any, pg_server: Any, loop: Any, items: list[Any]) -> None:
    with open_store(pg_server.schema_url()) as store:
        _msgwire_session(store, loop, items)
        got = benchmark(lambda: loop.run_until_complete(StoreSession("bench", store).get_items()))
        assert got == items


@pytest.mark.benchmark(group="agents-get-1000")
def test_agents_get_1000_openai_agents(benchmark: Any, tmp_path: Path, loop: Any, items: list[Any]) -> None:
    session = NormalSyncSession("bench", db_path=tmp_path / "a.db")
    loop.run_until_complete(session.add_items(items))  # type: ignore[arg-type]
    got = benchmark(lambda: loop.run_until_complete(session.get_items()))
    assert got == items
    session.close()
