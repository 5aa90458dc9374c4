"""Appends from an event loop on both stores (``store_url``): an async run's appends commit off
its loop (``Conversation.aadd`` / ``submit``, ``TrailTables.acommit``), stored in the order
submitted, each caller told once its append is stored; the trail is whole afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import msgwire
from msgwire.harness import Agent, ToolRegistry
from msgwire.harness.audit import Entry
from msgwire.harness.store import SQLStore, open_store
from msgwire.testing import ScriptedServer, reply, tool_call
from tests._support.agents import connect
from tests._support.stores import Held


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as s:
        yield s


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _went_on(spy: Held, ticks: list[int], out: list[bool]) -> threading.Thread:
    """A thread that waits until the held transaction is entered, then (10 s at most) for the
    event loop's ticker to tick three times, says whether it did, and releases the transaction."""

    def watch() -> None:
        try:
            if not spy.inside.wait(60):
                out.append(False)
                return
            seen, deadline = ticks[0], time.monotonic() + 10
            while ticks[0] < seen + 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            out.append(ticks[0] >= seen + 3)
        finally:
            spy.release()

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


async def _ticking(ticks: list[int]) -> None:
    while True:
        ticks[0] += 1
        await asyncio.sleep(0.005)


def test_an_async_run_lets_its_event_loop_go_on_while_its_appends_commit(
    store: SQLStore, scripted: ScriptedServer
) -> None:
    """An agent bound to a stored conversation runs with ``arun`` (a tool call, then an answer);
    its first append's transaction is held open. The event loop goes on meanwhile (before: the
    append committed in the loop's thread, which waited inside the transaction), the run ends
    once it is released, and the stored trail is the agent's, verifying."""
    scripted.add(reply(tool_call("lookup", {"key": "k"})), reply("done"))
    conversation = store.create()
    spy = Held(store)
    ticks = [0]
    went_on: list[bool] = []

    async def main() -> str:
        ticker = asyncio.create_task(_ticking(ticks))
        async with connect("openai", scripted) as provider:
            agent = Agent(provider, tools=ToolRegistry([lookup]), conversation=conversation)
            spy.hold()
            watcher = _went_on(spy, ticks, went_on)
            try:
                answer = await agent.arun("look k up")
            finally:
                await asyncio.to_thread(watcher.join, 60)
                ticker.cancel()
        return answer.text

    assert asyncio.run(main()) == "done"
    assert went_on == [True]
    stored = store.load(conversation.id)
    assert stored.verify()
    assert [e.hash for e in stored.entries] == [e.hash for e in conversation.entries]
    results = [m for m in stored.messages() if m.type == "tool_result"]
    assert len(results) == 1
    assert "value of k" in str(results[0].content)
    assert stored.messages()[-1].text == "done"  # type: ignore[union-attr]


def test_appends_submitted_together_are_stored_and_joined_in_the_order_submitted(store: SQLStore) -> None:
    """Ten appends submitted without waiting (new messages, and updates of one still being
    stored), behind a held transaction: each caller gets its own entry, in the order submitted
    (seq 0..9), the conversation in memory is the stored one, and it verifies."""
    conversation = store.create()
    spy = Held(store)
    ticks = [0]
    went_on: list[bool] = []

    async def main() -> list[Entry]:
        ticker = asyncio.create_task(_ticking(ticks))
        spy.hold()
        watcher = _went_on(spy, ticks, went_on)
        first = msgwire.user("first", id="m-first")
        futures = [conversation.submit(first, how="new")]
        for i in range(9):
            if i % 3 == 0:
                futures.append(
                    conversation.submit(msgwire.user(f"first, edit {i}", id="m-first"), "edited", how="update")
                )
            else:
                futures.append(conversation.submit(msgwire.user(f"m{i}"), how="either"))
        try:
            return list(await asyncio.gather(*futures))
        finally:
            await asyncio.to_thread(watcher.join, 60)
            ticker.cancel()

    entries = asyncio.run(main())
    assert went_on == [True]
    assert [e.seq for e in entries] == list(range(10))
    assert [e.hash for e in conversation.entries] == [e.hash for e in entries]
    stored = store.load(conversation.id)
    assert stored.verify()
    assert [e.hash for e in stored.entries] == [e.hash for e in conversation.entries]
    assert stored.message("m-first").text == "first, edit 6"  # type: ignore[union-attr]


def test_a_cancelled_append_is_stored_and_joins_all_the_same(store: SQLStore) -> None:
    """The task awaiting ``aadd`` is cancelled while its transaction is held: the append is
    stored all the same and joins the conversation in memory, which stays the stored one."""
    conversation = store.create()
    spy = Held(store)

    async def main() -> None:
        spy.hold()
        task = asyncio.create_task(conversation.aadd(msgwire.user("kept")))
        assert await asyncio.to_thread(spy.inside.wait, 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        spy.release()
        deadline = time.monotonic() + 30
        while not conversation.entries and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    stored = store.load(conversation.id)
    assert [e.hash for e in stored.entries] == [e.hash for e in conversation.entries]
    assert [m.text for m in stored.messages()] == ["kept"]  # type: ignore[union-attr]
    assert stored.verify()


def _failing_first(store: SQLStore) -> None:
    """The store's next transaction fails (as a lost server might make it: not retried)."""
    real = store._transaction
    armed = [True]

    @contextlib.contextmanager
    def spied(**options: Any) -> Iterator[Any]:
        if armed[0]:
            armed[0] = False
            raise RuntimeError("the test's refusal")
        with real(**options) as cur:
            yield cur

    store._transaction = spied  # type: ignore[method-assign]


def test_an_append_that_fails_raises_to_its_caller_and_what_follows_it_is_checked(store: SQLStore) -> None:
    """A message appended behind the conversation's back (the store remembers that head); then,
    submitted together, a new message whose transaction fails, an update of it (in memory it is
    that add's, under way) and another new message. The add's caller gets the error; the
    update, whose ``after`` counted the failed add and so matches the stored head by chance, is
    checked against what is stored, not assumed (before: it was stored as an update of a
    message the store never held); the last one is stored; the trail verifies and loads."""
    conversation = store.create()
    conversation.add(msgwire.user("first"))
    store.append(conversation.id, msgwire.user("behind its back"))
    _failing_first(store)

    async def main() -> list[Any]:
        futures = [
            conversation.submit(msgwire.user("lost", id="m-x"), how="new"),
            conversation.submit(msgwire.user("its edit", id="m-x"), "edited", how="update"),
            conversation.submit(msgwire.user("next"), how="new"),
        ]
        return list(await asyncio.gather(*futures, return_exceptions=True))

    lost, update, after = asyncio.run(main())
    assert isinstance(lost, RuntimeError), lost
    assert isinstance(update, KeyError), update
    assert isinstance(after, Entry), after
    stored = store.load(conversation.id)
    assert stored.verify()
    assert [m.text for m in stored.messages()] == ["first", "behind its back", "next"]  # type: ignore[union-attr]
    assert "m-x" not in stored
    conversation.sync()
    assert [e.hash for e in stored.entries] == [e.hash for e in conversation.entries]


def _one_at_a_time(before_first_returns: Any = None) -> tuple[ToolRegistry, list[str]]:
    """Two tools that run one after the other (not concurrency-safe), and the keys they ran
    with; ``before_first_returns()`` is called by the first before it returns."""
    registry, ran = ToolRegistry(), []

    @registry.tool(concurrency_safe=False)
    def first(key: str) -> str:
        """The first lookup."""
        ran.append(f"first {key}")
        if before_first_returns is not None:
            before_first_returns()
        return f"first {key}"

    @registry.tool(concurrency_safe=False)
    def second(key: str) -> str:
        """The second lookup."""
        ran.append(f"second {key}")
        return f"second {key}"

    return registry, ran


def _calls_then_done(scripted: ScriptedServer) -> None:
    scripted.add(
        reply([tool_call("first", {"key": "a"}, id="c1"), tool_call("second", {"key": "b"}, id="c2")]),
        reply("done"),
    )


def _tool_events(events: list[Any]) -> list[tuple[str, str]]:
    order = []
    for event in events:
        if event.type == "tool_started":
            order.append(("started", event.call.id))
        elif event.type == "tool_finished":
            order.append(("finished", event.result.tool_call_id))
    return order


def test_an_async_run_tells_its_tool_events_in_the_order_a_sync_run_does(
    store: SQLStore, scripted: ScriptedServer
) -> None:
    """Two tools that run one after the other, in a run bound to a stored conversation: an async
    run (``astream``, whose records commit off the loop) tells each result before the next call
    starts, as a sync run (``stream``) does. Before: the first call's ``ToolFinished`` came when
    its record was stored, after the second call's ``ToolStarted``."""
    _calls_then_done(scripted)
    _calls_then_done(scripted)
    registry, _ = _one_at_a_time()

    async def in_async() -> list[Any]:
        async with connect("openai", scripted) as provider:
            agent = Agent(provider, tools=registry, conversation=store.create())
            return [event async for event in agent.astream("look a and b up")]

    seen_async = asyncio.run(in_async())
    with connect("openai", scripted) as provider, Agent(provider, tools=registry, conversation=store.create()) as agent:
        seen_sync = list(agent.stream("look a and b up"))
    expected = [("started", "c1"), ("finished", "c1"), ("started", "c2"), ("finished", "c2")]
    assert _tool_events(seen_sync) == expected
    assert _tool_events(seen_async) == expected


def test_an_async_run_whose_result_is_not_stored_runs_no_later_call(store: SQLStore, scripted: ScriptedServer) -> None:
    """The first call's result cannot be stored (the first tool arms a failure of the store's
    next transaction, its result's record): the async run raises that failure and the second
    call never runs, as in a sync run, whose ``record`` raises at once. Before: the second tool
    ran, and the failure was raised when the step ended."""
    _calls_then_done(scripted)
    registry, ran = _one_at_a_time(before_first_returns=lambda: _failing_first(store))
    conversation = store.create()

    async def main() -> None:
        async with connect("openai", scripted) as provider:
            await Agent(provider, tools=registry, conversation=conversation).arun("look a and b up")

    with pytest.raises(RuntimeError, match="the test's refusal"):
        asyncio.run(main())
    assert ran == ["first a"]
    stored = store.load(conversation.id)
    assert stored.verify()
    assert not [m for m in stored.messages() if m.type == "tool_result"]
