"""openai-agents' own session tests, run against ``StoreSession`` on both stores (SQLite and the
test PostgreSQL): ``StoreSession`` as a drop-in for ``SQLiteSession`` (issue 29, item 6).

Their tests are not installed with the package, so each behavioural case is ported here, naming
the test of openai-agents' repository it mirrors (``tests/memory/test_session.py`` and
``tests/memory/test_session_limit.py``, read at openai/openai-agents-python 7f7a44f8d); left out
are those that reach into ``SQLiteSession``'s own tables, connections, file locks or worker
threads (corrupt rows, rollbacks, quarantined connections, the shared file lock), which
``StoreSession`` has no equivalent of. A ``SQLiteSession`` is the session the user replaces, so
``close()`` and what follows it, the ``limit`` semantics and the settings behave as its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SessionSettings, TResponseInputItem
from agents.testing import ScriptedModel, assistant_message

from msgwire.harness.store import SQLStore, open_store
from msgwire.interop.openai_agents import StoreSession

RUNNERS = ["run", "run_sync", "run_streamed"]
NO_TRACING = RunConfig(tracing_disabled=True)


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as opened:
        yield opened


def _session(store: SQLStore, **options: Any) -> StoreSession:
    return StoreSession(uuid.uuid4().hex, store, **options)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _run_agent(runner_method: str, agent: Agent[Any], input_data: Any, **kwargs: Any) -> Any:
    """openai-agents' ``run_agent_async`` helper of its session tests."""
    kwargs.setdefault("run_config", NO_TRACING)
    if runner_method == "run":
        return await Runner.run(agent, input_data, **kwargs)
    if runner_method == "run_sync":  # in a thread with its own event loop
        return await asyncio.to_thread(_run_sync, agent, input_data, kwargs)
    result = Runner.run_streamed(agent, input_data, **kwargs)
    async for _ in result.stream_events():
        pass
    return result


def _run_sync(agent: Agent[Any], input_data: Any, kwargs: dict[str, Any]) -> Any:
    """``Runner.run_sync``, and the event loop it made the thread's default closed after it (it
    leaves it open, for the thread's next run)."""
    try:
        return Runner.run_sync(agent, input_data, **kwargs)
    finally:
        policy = asyncio.get_event_loop_policy()
        policy.get_event_loop().close()
        policy.set_event_loop(None)


def _text(message: str) -> list[Any]:
    return [assistant_message(message)]


# --- tests/memory/test_session.py ------------------------------------------------------------------


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_memory_basic_functionality(store: SQLStore, runner_method: str) -> None:
    """test_session_memory_basic_functionality_parametrized"""

    async def go() -> None:
        session = _session(store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        model.enqueue(_text("San Francisco"))
        first = await _run_agent(runner_method, agent, "What city is the Golden Gate Bridge in?", session=session)
        assert first.final_output == "San Francisco"
        model.enqueue(_text("California"))
        second = await _run_agent(runner_method, agent, "What state is it in?", session=session)
        assert second.final_output == "California"
        assert len(model.calls[-1].input) > 1
        session.close()

    _run(go())


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_memory_different_sessions(store: SQLStore, runner_method: str) -> None:
    """test_session_memory_different_sessions_parametrized"""

    async def go() -> None:
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        one, two = _session(store), _session(store)
        model.enqueue(_text("I like cats"))
        await _run_agent(runner_method, agent, "I like cats", session=one)
        model.enqueue(_text("I like dogs"))
        await _run_agent(runner_method, agent, "I like dogs", session=two)
        model.enqueue(_text("Yes, you mentioned cats"))
        result = await _run_agent(runner_method, agent, "What did I say I like?", session=one)
        assert result.final_output == "Yes, you mentioned cats"
        seen = [i.get("content") for i in model.calls[-1].input if i.get("role") == "user"]
        assert seen == ["I like cats", "What did I say I like?"]
        one.close()
        two.close()

    _run(go())


def test_session_memory_direct(store: SQLStore) -> None:
    """test_sqlite_session_memory_direct"""

    async def go() -> None:
        session = _session(store)
        items: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
        ]
        await session.add_items(items)
        assert await session.get_items() == items
        await session.clear_session()
        assert await session.get_items() == []
        session.close()

    _run(go())


@pytest.mark.parametrize("call", ["add_items_empty", "add_items", "get_items", "pop_item", "clear_session"])
def test_a_closed_session_refuses_every_call(store: SQLStore, call: str) -> None:
    """test_sqlite_session_closed_rejects_empty_add_items, for every call: after ``close()``
    (in a ``finally``, as openai-agents' examples do), ``RuntimeError`` as SQLiteSession raises;
    closing again is fine; the store is the caller's and stays open."""

    async def go() -> None:
        session = _session(store)
        await session.add_items([{"role": "user", "content": "kept"}])
        session.close()
        session.close()
        calls = {
            "add_items_empty": lambda: session.add_items([]),
            "add_items": lambda: session.add_items([{"role": "user", "content": "late"}]),
            "get_items": lambda: session.get_items(),
            "pop_item": lambda: session.pop_item(),
            "clear_session": lambda: session.clear_session(),
        }
        with pytest.raises(RuntimeError, match=r"StoreSession .* is closed"):
            await calls[call]()
        assert await StoreSession(session.session_id, store).get_items() == [{"role": "user", "content": "kept"}]

    _run(go())


@pytest.mark.parametrize("call", ["add_items", "get_items", "pop_item", "clear_session"])
def test_a_session_whose_store_was_closed_raises_runtime_error(store_url: str, call: str) -> None:
    """As a SQLiteSession whose connection was closed: ``RuntimeError`` naming the store, not the
    store's own ``ValueError``."""
    store = open_store(store_url)
    session = _session(store)
    _run(session.add_items([{"role": "user", "content": "kept"}]))
    store.close()
    calls = {
        "add_items": lambda: session.add_items([{"role": "user", "content": "late"}]),
        "get_items": lambda: session.get_items(),
        "pop_item": lambda: session.pop_item(),
        "clear_session": lambda: session.clear_session(),
    }
    with pytest.raises(RuntimeError, match=r"store .* is closed"):
        _run(calls[call]())


def test_session_memory_pop_item(store: SQLStore) -> None:
    """test_sqlite_session_memory_pop_item"""

    async def go() -> None:
        session = _session(store)
        assert await session.pop_item() is None
        items: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {"role": "user", "content": "How are you?"},
        ]
        await session.add_items(items)
        assert len(await session.get_items()) == 3
        assert await session.pop_item() == items[2]
        assert [i.get("content") for i in await session.get_items()] == ["Hello", "Hi there!"]
        assert await session.pop_item() == items[1]
        assert await session.pop_item() == items[0]
        assert await session.pop_item() is None
        assert await session.get_items() == []
        session.close()

    _run(go())


def test_session_memory_pop_different_sessions(store: SQLStore) -> None:
    """test_session_memory_pop_different_sessions"""

    async def go() -> None:
        one, two = _session(store), _session(store)
        await one.add_items([{"role": "user", "content": "Session 1 message"}])
        await two.add_items(
            [{"role": "user", "content": "Session 2 message 1"}, {"role": "user", "content": "Session 2 message 2"}]
        )
        popped = await two.pop_item()
        assert popped is not None
        assert popped.get("content") == "Session 2 message 2"
        assert [i.get("content") for i in await one.get_items()] == ["Session 1 message"]
        assert [i.get("content") for i in await two.get_items()] == ["Session 2 message 1"]

    _run(go())


def test_session_get_items_with_limit(store: SQLStore) -> None:
    """test_sqlite_session_get_items_with_limit, and the negative limit SQLiteSession keeps from
    SQLite (``LIMIT -1``: no limit, "historical non-positive LIMIT semantics")."""

    async def go() -> None:
        session = _session(store)
        items: list[TResponseInputItem] = [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"{'Message' if i % 2 == 0 else 'Response'} {i // 2 + 1}",
            }
            for i in range(6)
        ]
        await session.add_items(items)
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[-2:]
        assert await session.get_items(limit=4) == items[-4:]
        assert await session.get_items(limit=10) == items
        assert await session.get_items(limit=0) == []
        assert await session.get_items(limit=-1) == items
        assert await session.get_items(limit=-5) == items
        by_default = StoreSession(session.session_id, store, session_settings=SessionSettings(limit=-1))
        assert await by_default.get_items() == items

    _run(go())


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_memory_appends_list_input_by_default(store: SQLStore, runner_method: str) -> None:
    """test_session_memory_appends_list_input_by_default"""

    async def go() -> None:
        session = _session(store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        history: list[TResponseInputItem] = [
            {"role": "user", "content": "Earlier message"},
            {"role": "assistant", "content": "Saved reply"},
        ]
        await session.add_items(history)
        list_input = [{"role": "user", "content": "Test message"}]
        model.enqueue(_text("This should run"))
        await _run_agent(runner_method, agent, list_input, session=session)
        assert model.calls[-1].input == history + list_input
        session.close()

    _run(go())


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_callback_prepared_input(store: SQLStore, runner_method: str) -> None:
    """test_session_callback_prepared_input"""

    async def go() -> None:
        session = _session(store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        history: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello there."},
            {"role": "assistant", "content": "Hi, I'm here to assist you."},
        ]
        try:
            await session.add_items(history)

            def only_user(old: list[Any], new: list[Any]) -> list[Any]:
                return [item for item in old if item["role"] == "user"] + new

            new_input = [{"role": "user", "content": "What your name?"}]
            model.enqueue(_text("I'm gpt-4o"))
            config = RunConfig(session_input_callback=only_user, tracing_disabled=True)
            await _run_agent(runner_method, agent, new_input, session=session, run_config=config)
            assert model.calls[-1].input == [history[0], new_input[0]]
        finally:
            session.close()

    _run(go())


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_callback_repeating_history_does_not_grow_session(store: SQLStore, runner_method: str) -> None:
    """test_session_callback_repeating_history_does_not_grow_session"""

    async def go() -> None:
        session = _session(store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)

        def repeat_first(old: list[Any], new: list[Any]) -> list[Any]:
            return new if not old else [*old, old[0], *new]

        try:
            for turn in range(3):
                model.enqueue(_text(f"assistant {turn}"))
                config = RunConfig(session_input_callback=repeat_first, tracing_disabled=True)
                await _run_agent(runner_method, agent, f"user {turn}", session=session, run_config=config)
            stored = await session.get_items()
            assert [i.get("content") for i in stored if i.get("role") == "user"] == ["user 0", "user 1", "user 2"]
            assert len(stored) == 6
        finally:
            session.close()

    _run(go())


def test_session_unicode_special_characters_and_sql_injection(store: SQLStore) -> None:
    """test_sqlite_session_unicode_content and test_sqlite_session_special_characters_and_sql_injection"""
    items: list[TResponseInputItem] = [
        {"role": "user", "content": "こんにちは"},
        {"role": "assistant", "content": "😊👍"},
        {"role": "user", "content": "Привет"},
        {"role": "user", "content": "O'Reilly"},
        {"role": "assistant", "content": "DROP TABLE sessions;"},
        {"role": "user", "content": '"SELECT * FROM users WHERE name = "admin";"'},
        {"role": "assistant", "content": "Robert'); DROP TABLE students;--"},
    ]

    async def go() -> list[Any]:
        session = _session(store)
        await session.add_items(items)
        return await StoreSession(session.session_id, store).get_items()

    assert _run(go()) == items


def test_session_concurrent_access(store: SQLStore) -> None:
    """test_sqlite_session_concurrent_access: writers in threads, each with its own event loop."""
    session = _session(store)
    items: list[TResponseInputItem] = [{"role": "user", "content": f"Message {i}"} for i in range(10)]

    def add(item: TResponseInputItem) -> None:
        asyncio.run(session.add_items([item]))

    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(add, items))
    contents = {i.get("content") for i in _run(session.get_items())}
    assert contents == {f"Message {i}" for i in range(10)}


def test_session_add_items_exception_propagates_in_streamed(store: SQLStore) -> None:
    """test_session_add_items_exception_propagates_in_streamed"""
    session = _session(store)

    async def failing(_items: Any) -> None:
        raise RuntimeError("Simulated session.add_items failure")

    session.add_items = failing  # type: ignore[method-assign]
    model = ScriptedModel()
    model.enqueue(_text("This should not be reached"))

    async def consume() -> None:
        result = Runner.run_streamed(Agent(name="test", model=model), "Hello", session=session, run_config=NO_TRACING)
        async for _ in result.stream_events():
            pass

    with pytest.raises(RuntimeError, match=r"Simulated session\.add_items failure"):
        _run(asyncio.wait_for(consume(), timeout=30))


def test_session_settings(store: SQLStore) -> None:
    """test_session_settings_default, _constructor, _constructor_normalizes_dictionary,
    test_session_settings_rejects_unknown_dictionary_fields"""
    assert isinstance(_session(store).session_settings, SessionSettings)
    assert _session(store).session_settings.limit is None  # type: ignore[union-attr]
    assert _session(store, session_settings=SessionSettings(limit=5)).session_settings.limit == 5  # type: ignore[union-attr]
    normalized = _session(store, session_settings={"limit": 0}).session_settings
    assert isinstance(normalized, SessionSettings)
    assert normalized.limit == 0
    assert normalized.resolve({"limit": 4}).limit == 4  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        _session(store, session_settings={"limitt": 1})


def test_get_items_uses_and_overrides_the_settings_limit(store: SQLStore) -> None:
    """test_get_items_uses_session_settings_limit, test_get_items_explicit_limit_overrides_session_settings"""

    async def go() -> None:
        session = _session(store, session_settings=SessionSettings(limit=3))
        items: list[TResponseInputItem] = [{"role": "user", "content": f"Message {i}"} for i in range(10)]
        await session.add_items(items)
        assert await session.get_items() == items[-3:]
        assert await session.get_items(limit=2) == items[-2:]

    _run(go())


def test_runner_with_session_settings_override(store: SQLStore) -> None:
    """test_runner_with_session_settings_override"""

    async def go() -> None:
        session = _session(store, session_settings=SessionSettings(limit=100))
        await session.add_items([{"role": "user", "content": f"Turn {i}"} for i in range(10)])
        model = ScriptedModel()
        model.enqueue(_text("Got it"))
        config = RunConfig(session_settings=SessionSettings(limit=2), tracing_disabled=True)
        await Runner.run(Agent(name="test", model=model), "New question", session=session, run_config=config)
        history = [i for i in model.calls[-1].input if i.get("content") != "New question"]
        assert [i.get("content") for i in history] == ["Turn 8", "Turn 9"]

    _run(go())


# --- tests/memory/test_session_limit.py ------------------------------------------------------------


@pytest.mark.parametrize("runner_method", RUNNERS)
@pytest.mark.parametrize("limit", [2, 0, None, 100], ids=["two", "zero", "none", "larger"])
def test_session_limit(store: SQLStore, runner_method: str, limit: int | None) -> None:
    """test_session_limit_parameter, test_session_limit_zero, test_session_limit_none_gets_all_history,
    test_session_limit_larger_than_history"""

    async def go() -> None:
        session = _session(store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        for i in range(1, 4):
            model.enqueue(_text(f"Reply {i}"))
            await _run_agent(runner_method, agent, f"Message {i}", session=session)
        assert len(await session.get_items()) == 6
        model.enqueue(_text("Reply 4"))
        config = RunConfig(session_settings=SessionSettings(limit=limit), tracing_disabled=True)
        await _run_agent(runner_method, agent, "Message 4", session=session, run_config=config)
        sent = model.calls[-1].input
        kept = 6 if limit is None or limit > 6 else limit
        assert len(sent) == kept + 1
        assert sent[-1].get("content") == "Message 4"
        if kept == 2:
            assert sent[0].get("content") == "Message 3"
            assert sent[1].get("content")[0]["text"] == "Reply 3"
        session.close()

    _run(go())


@pytest.mark.parametrize("runner_method", RUNNERS)
def test_session_limit_drops_unmatched_history_function_call_output(store: SQLStore, runner_method: str) -> None:
    """test_session_limit_drops_unmatched_history_function_call_output"""
    history: list[Any] = [
        {"role": "user", "content": "What is the weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        },
    ]

    async def go() -> None:
        session = _session(store)
        await session.add_items(history)
        assert await session.get_items(limit=2) == history[-2:]
        model = ScriptedModel()
        model.enqueue(_text("Tomorrow is sunny too."))
        config = RunConfig(session_settings=SessionSettings(limit=2), tracing_disabled=True)
        await _run_agent(
            runner_method, Agent(name="test", model=model), "What about tomorrow?", session=session, run_config=config
        )
        assert model.calls[-1].input == [history[-1], {"role": "user", "content": "What about tomorrow?"}]
        session.close()

    _run(go())
