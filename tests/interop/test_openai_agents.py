"""``StoreSession``: openai-agents' ``Session`` on msgwire's stores, proved against openai-agents
itself: its ``Runner`` and test model over several turns with tools (the model's outputs the
items real Responses streams returned), beside its own ``SQLiteSession`` on the same run, on
SQLite and PostgreSQL (``store_url``)."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import SessionSettings, SQLiteSession
from agents.memory import Session
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    AssistantMessage,
    Message,
    SystemControlMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownMessage,
    codec,
    formats,
)
from msgwire.errors import HeaderMismatchError
from msgwire.harness import Conversation
from msgwire.harness.store import SQLStore, aopen_store, open_store
from msgwire.interop.openai_agents import CLEAR, POP, StoreSession
from tests._support.openai_agents import CALL, ITEM_KINDS, items, run_turns
from tests._support.stores import key, raw_sql
from tests._support.strategies import examples


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as opened:
        yield opened


USER = {"content": "What is 2 + 3?", "role": "user"}
RESULT = {"call_id": "call_1", "output": "5", "type": "function_call_output"}
ANSWER = {
    "id": "msg_1",
    "content": [{"annotations": [], "text": "5", "type": "output_text", "logprobs": []}],
    "role": "assistant",
    "status": "completed",
    "type": "message",
}
TURN = [USER, CALL, RESULT, ANSWER]


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- beside SQLiteSession, under openai-agents' own Runner --------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_a_runner_sees_what_it_sees_with_sqlite_session(store: SQLStore, streamed: bool) -> None:
    """The same turns (tools, reasoning, a web search, a file search, a computer call, a
    handoff) with SQLiteSession and with StoreSession: the same items stored, the same input
    for every model call, the same answers."""

    async def both() -> tuple[Any, Any, list[Any], list[Any]]:
        reference = SQLiteSession("user-42")
        theirs = await run_turns(reference, streamed=streamed)
        session = StoreSession("user-42", store)
        ours = await run_turns(session, streamed=streamed)
        return theirs, ours, await reference.get_items(), await StoreSession("user-42", store).get_items()

    theirs, ours, reference_items, stored_items = _run(both())
    assert stored_items == reference_items  # read back by a new session: from the store alone
    assert len(stored_items) > 15
    assert ours.inputs == theirs.inputs
    assert ours.final_outputs == theirs.final_outputs
    trail = store.load("user-42")
    assert trail.verify()
    assert len(trail.entries) == len(stored_items)


def test_the_items_are_typed_messages_and_the_report_names_what_is_not(store: SQLStore) -> None:
    async def go() -> tuple[list[Message], Any, list[Any]]:
        session = StoreSession("s", store)
        await run_turns(session)
        return await session.messages(), await session.report(), await session.get_items()

    messages, report, items = _run(go())
    assert len(messages) == len(items)
    calls = [b for m in messages if isinstance(m, AssistantMessage) for b in m.tool_calls]
    assert {c.name for c in calls} >= {"add", "multiply", "weather", "transfer_to_specialist"}
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert {r.tool_name for r in results} >= {"add", "multiply", "weather", "transfer_to_specialist"}
    # every real function call has a status the typed call does not keep: the item keeps it
    statuses = [e for e in report.entries if e.kind == "item" and "$.status" in e.reason]
    assert {e.message for e in statuses} == {
        i for i, item in enumerate(items) if item.get("type") == "function_call" and "status" in item
    }
    # output messages with logprobs, and reasoning without a summary, the reader keeps whole
    kept = {e.message for e in report.entries if e.kind == "provider_part"}
    assert any(items[i].get("type") == "message" for i in kept)
    assert all(0 <= e.message < len(items) for e in report.entries if e.message is not None)


# --- each kind of item, exactly -------------------------------------------------------------------


def test_every_kind_of_item_comes_back_equal(store: SQLStore) -> None:
    async def go() -> tuple[list[Any], list[Any], list[Any]]:
        session = StoreSession("s", store)
        await session.add_items(ITEM_KINDS[:10])
        await session.add_items(ITEM_KINDS[10:])
        fresh = await StoreSession("s", store).get_items()
        popped = [await session.pop_item() for _ in ITEM_KINDS]
        return await session.get_items(), fresh, popped

    items, fresh, popped = _run(go())
    assert items == []
    assert fresh == ITEM_KINDS
    assert popped == ITEM_KINDS[::-1]


def test_items_msgwire_has_no_message_for_are_kept_whole_and_reported(store: SQLStore) -> None:
    system, odd = ITEM_KINDS[5], ITEM_KINDS[-2]

    async def go() -> tuple[list[Message], Any]:
        session = StoreSession("s", store)
        await session.add_items([USER, system, odd])
        return await session.messages(), await session.report()

    messages, report = _run(go())
    assert isinstance(messages[1], UnknownMessage)
    assert isinstance(messages[2], UnknownMessage)
    assert messages[1].data()["item"] == system
    assert [(e.message, e.kind, e.action) for e in report.entries] == [(1, "item", "fallback"), (2, "item", "fallback")]
    assert "system prompt" in report.entries[0].reason
    assert "refuses" in report.entries[1].reason


def test_an_item_kept_beside_its_message_is_in_the_chained_audit(store: SQLStore) -> None:
    with_status = {**CALL, "status": "completed"}
    _run(StoreSession("s", store).add_items([with_status]))
    (entry,) = store.load("s").entries
    assert isinstance(entry.message, AssistantMessage)
    assert entry.message.tool_calls == [
        ToolCallBlock(id="call_1", name="add", arguments='{"a":2,"b":3}', item_id="fc_1")
    ]
    assert entry.audit["openai_agents"]["item"] == with_status
    assert "$.status" in entry.audit["openai_agents"]["losses"][0]["reason"]


def test_a_message_in_the_other_form_is_not_kept_twice(store: SQLStore) -> None:
    """``{"role": "user", "content": "..."}`` is the message msgwire writes with one text part
    and a type: the entry says which form, and keeps no copy of the item."""
    _run(StoreSession("s", store).add_items([USER]))  # type: ignore[list-item]
    (entry,) = store.load("s").entries
    assert entry.audit == {"openai_agents": {"form": ["text", "untyped"]}}
    assert _run(StoreSession("s", store).report()).entries == []


def test_an_item_kept_whole_reads_back_without_a_warning(
    store: SQLStore, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codec, "_warned_tags", set())  # the codec warns once a process per type
    system = {"role": "system", "content": "Answer in French."}
    _run(StoreSession("s", store).add_items([system]))  # type: ignore[list-item]
    with caplog.at_level("WARNING", logger="msgwire"):
        assert store.messages("s")[0].type == "provider_item"
        assert _run(StoreSession("s", store).get_items()) == [system]
    assert caplog.records == []  # msgwire's own raw message: not "a type this version does not know"


def test_equal_items_added_twice_are_two_items(store: SQLStore) -> None:
    """A request's reader derives message ids from the bytes: the session gives each item a new one."""
    yes = {"role": "user", "content": "yes"}

    async def go() -> list[Any]:
        session = StoreSession("s", store)
        await session.add_items([yes])
        await session.add_items([yes, yes])
        return await StoreSession("s", store).get_items()

    assert _run(go()) == [yes, yes, yes]


def test_a_result_added_after_its_call_names_the_tool(store: SQLStore) -> None:
    async def go() -> list[Message]:
        session = StoreSession("s", store)
        await session.add_items([USER, CALL])
        await StoreSession("s", store).add_items([RESULT])  # another worker, later
        return await session.messages()

    result = _run(go())[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_name == "add"


# --- any history, as SQLiteSession keeps it -----------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(items(), max_size=4)),
        st.tuples(st.just("pop"), st.none()),
        st.tuples(st.just("clear"), st.none()),
        st.tuples(st.just("get"), st.none() | st.integers(-2, 6)),
    ),
    max_size=10,
)


@examples(25, all_health_checks=True)  # the store is one per test: each example has its own session
@given(operations)
def test_any_history_reads_as_sqlite_session_reads_it(store: SQLStore, ops: list[tuple[str, Any]]) -> None:
    session_id = uuid.uuid4().hex

    async def go() -> None:
        reference, session = SQLiteSession(session_id), StoreSession(session_id, store)
        for op, arg in ops:
            for s in (reference, session):
                if op == "add":
                    await s.add_items(arg)
            if op == "pop":
                assert await session.pop_item() == await reference.pop_item()
            elif op == "clear":
                await session.clear_session()
                await reference.clear_session()
            elif op == "get":
                assert await session.get_items(arg) == await reference.get_items(arg)
        assert await StoreSession(session_id, store).get_items() == await reference.get_items()
        reference.close()

    _run(go())


# --- limit, as SQLiteSession -----------------------------------------------------------------------


def test_limit_gives_the_latest_items_as_sqlite_session_does(store: SQLStore) -> None:
    async def go() -> None:
        reference, session = SQLiteSession("s"), StoreSession("s", store)
        for s in (reference, session):
            await s.add_items(TURN)  # type: ignore[arg-type]
        for limit in (None, 0, 1, 3, 4, 5, 6, 9, -1, -3):  # a negative limit: all, as SQLite's LIMIT -1
            assert await session.get_items(limit) == await reference.get_items(limit), limit
        by_default = StoreSession("s", store, session_settings=SessionSettings(limit=2))
        assert await by_default.get_items() == TURN[-2:]
        assert await by_default.get_items(3) == TURN[-3:]
        reference.close()
        with pytest.raises(TypeError, match="int or None"):
            await session.get_items("2")  # type: ignore[arg-type]

    _run(go())


# --- removing is appending --------------------------------------------------------------------------


def test_pop_and_clear_are_entries_and_the_trail_still_verifies(store: SQLStore) -> None:
    async def go() -> tuple[Any, Any, list[Any], list[Any]]:
        session = StoreSession("s", store)
        await session.add_items(TURN)
        last = await session.pop_item()
        before = await session.pop_item()
        left = await StoreSession("s", store).get_items()
        await session.clear_session()
        cleared = await StoreSession("s", store).get_items()
        return last, before, left, cleared

    last, before, left, cleared = _run(go())
    assert (last, before, left, cleared) == (ANSWER, RESULT, [USER, CALL], [])
    trail = store.load("s")
    assert trail.verify()
    decisions = [e.decision for e in trail.entries]
    assert decisions == ["user_input", "tool_call_requested", "tool_executed", "planning", POP, POP, CLEAR]
    pops = [e.message for e in trail.entries if isinstance(e.message, SystemControlMessage)][:2]
    assert [p.params["message_id"] for p in pops] == [trail.entries[3].message.id, trail.entries[2].message.id]
    assert len(store.messages("s")) == 7  # nothing was deleted


def test_pop_on_an_empty_or_missing_session_is_none_and_stores_nothing(store: SQLStore) -> None:
    async def go() -> list[Any]:
        session = StoreSession("nobody", store)
        return [await session.pop_item(), await session.clear_session(), await session.get_items()]

    assert _run(go()) == [None, None, []]
    assert store.conversations() == []


def test_items_added_after_a_clear_are_the_session(store: SQLStore) -> None:
    async def go() -> list[Any]:
        session = StoreSession("s", store)
        await session.add_items(TURN)
        await session.clear_session()
        await session.add_items([USER])
        assert await session.pop_item() == USER
        assert await session.pop_item() is None  # what the clear removed stays removed
        await session.add_items([ANSWER])
        return await StoreSession("s", store).get_items()

    assert _run(go()) == [ANSWER]


class Gate:
    """A store whose ``commit`` waits until the test opens the gate: a worker held between
    reading the trail and writing to it (everything else is the real store's)."""

    def __init__(self, store: SQLStore) -> None:
        self._store = store
        self.reached = threading.Event()
        self.open = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def commit(self, *args: Any) -> Any:
        self.reached.set()
        assert self.open.wait(30), "the test never opened the gate"
        return self._store.commit(*args)


def test_two_workers_popping_at_once_pop_two_items(store: SQLStore) -> None:
    """B reads the trail and is held before its pop is stored; A pops the same last item
    meanwhile. The store keeps one claim on an item: B's is a no-op, and B pops the next one."""
    gate = Gate(store)

    async def go() -> tuple[Any, Any, list[Any]]:
        a, b = StoreSession("s", store), StoreSession("s", gate)  # type: ignore[arg-type]
        await a.add_items(TURN)
        held = asyncio.ensure_future(b.pop_item())
        assert await asyncio.to_thread(gate.reached.wait, 30)
        first = await a.pop_item()
        gate.open.set()
        second = await held
        return first, second, await StoreSession("s", store).get_items()

    assert _run(go()) == (ANSWER, RESULT, [USER, CALL])
    assert store.load("s").verify()


def test_many_workers_pop_every_item_once(store: SQLStore) -> None:
    items = [{"role": "user", "content": str(i)} for i in range(40)]

    async def worker(session: StoreSession) -> list[Any]:
        popped = []
        while (item := await session.pop_item()) is not None:
            popped.append(item)
        return popped

    async def go() -> list[list[Any]]:
        await StoreSession("s", store).add_items(items)  # type: ignore[arg-type]
        return list(await asyncio.gather(*(worker(StoreSession("s", store)) for _ in range(4))))

    popped = _run(go())
    assert sorted((i["content"] for p in popped for i in p), key=int) == [str(i) for i in range(40)]
    for p in popped:  # each worker pops from the end
        assert [int(i["content"]) for i in p] == sorted((int(i["content"]) for i in p), reverse=True)


# --- many workers, one conversation ------------------------------------------------------------------


def test_sessions_on_one_conversation_see_each_other(store: SQLStore) -> None:
    async def go() -> None:
        a, b = StoreSession("s", store), StoreSession("s", store)
        await a.add_items([USER])
        assert await b.get_items() == [USER]
        await b.add_items([CALL, RESULT])
        assert await a.get_items() == [USER, CALL, RESULT]
        assert await a.pop_item() == RESULT
        assert await b.get_items(1) == [CALL]

    _run(go())


def test_a_conversation_replaced_under_a_session_is_read_again(store: SQLStore) -> None:
    """Deleted and made again by another worker, longer or shorter than the session knew it:
    the last entry the session read is not there any more, so it reads the conversation whole."""
    longer = [ANSWER, USER, CALL, RESULT, ANSWER]

    async def go() -> None:
        session = StoreSession("s", store)
        await session.add_items(TURN)
        assert await session.get_items() == TURN
        assert store.delete("s")
        await StoreSession("s", store).add_items(longer)  # type: ignore[arg-type]
        assert await session.get_items() == longer
        assert store.delete("s")
        await StoreSession("s", store).add_items([ANSWER])  # type: ignore[list-item]
        await session.add_items([USER])  # type: ignore[list-item]
        assert await session.get_items() == [ANSWER, USER]
        assert store.delete("s")
        assert await session.get_items() == []

    _run(go())


def test_a_conversation_replaced_while_a_session_writes_is_read_again(store: SQLStore) -> None:
    """The session has read the trail and is held before its append; the conversation is
    deleted and made again meanwhile: its append lands after the new first entry, not after
    what the session had read, and the session reads the conversation whole."""
    gate = Gate(store)

    async def go() -> list[Any]:
        session = StoreSession("s", gate)  # type: ignore[arg-type]
        await StoreSession("s", store).add_items(TURN)  # type: ignore[arg-type]
        assert await session.get_items() == TURN
        adding = asyncio.ensure_future(session.add_items([USER]))  # type: ignore[list-item]
        assert await asyncio.to_thread(gate.reached.wait, 30)
        assert store.delete("s")
        await StoreSession("s", store).add_items([ANSWER])  # type: ignore[list-item]
        gate.open.set()
        await adding
        return await session.get_items()

    assert _run(go()) == [ANSWER, USER]


def test_a_pop_while_the_conversation_is_replaced_pops_from_the_new_one(store: SQLStore) -> None:
    gate = Gate(store)

    async def go() -> tuple[Any, list[Any]]:
        session = StoreSession("s", gate)  # type: ignore[arg-type]
        await StoreSession("s", store).add_items(TURN)  # type: ignore[arg-type]
        popping = asyncio.ensure_future(session.pop_item())
        assert await asyncio.to_thread(gate.reached.wait, 30)
        assert store.delete("s")
        await StoreSession("s", store).add_items([USER, CALL])  # type: ignore[list-item]
        gate.open.set()
        return await popping, await StoreSession("s", store).get_items()

    assert _run(go()) == (CALL, [USER])


# --- the conversation is a msgwire conversation ------------------------------------------------------


def test_a_fork_is_a_session_of_its_own(store: SQLStore) -> None:
    async def go() -> tuple[list[Any], list[Any]]:
        session = StoreSession("s", store)
        await session.add_items(TURN)
        at = store.load("s").entries[1].id
        fork = StoreSession(store.fork("s", at=at, id="s-fork"), store)
        await fork.add_items([{"role": "user", "content": "another way"}])
        return await session.get_items(), await fork.get_items()

    original, forked = _run(go())
    assert original == TURN
    assert forked == [USER, CALL, {"role": "user", "content": "another way"}]
    assert store.load("s-fork").verify()


def test_a_conversation_msgwire_wrote_is_a_session_too(store: SQLStore) -> None:
    """Its messages as the Responses writer gives them, one item per block where a message has
    several; popping one of a message's items leaves the others."""
    conversation = store.create(id="agent-run", system_prompt="Be brief.")
    conversation.add(msgwire.user("What is 2 + 3?"))
    call = ToolCallBlock(id="call_1", name="add", arguments='{"a": 2, "b": 3}')
    conversation.add(AssistantMessage(content=[TextBlock(text="Adding."), call], provider="openai"))
    conversation.add(msgwire.tool_result("call_1", "5", tool_name="add"))
    conversation.add(msgwire.system_control("mode_change", old="plan", new="act"))
    expected = formats.to_request(conversation.session(), "openai-responses")["input"]

    async def go() -> tuple[list[Any], Any, list[Any]]:
        session = StoreSession("agent-run", store)
        items = await session.get_items()
        popped = [await session.pop_item(), await session.pop_item()]
        return items, popped, await StoreSession("agent-run", store).get_items()

    items, popped, left = _run(go())
    assert items == expected
    assert [i.get("type") for i in items] == ["message", None, "function_call", "function_call_output"]
    assert popped == [expected[3], expected[2]]
    assert left == expected[:2]


def test_msgwire_audit_checks_a_session(store: SQLStore, tmp_path: Path) -> None:
    from msgwire.cli import main

    async def go() -> None:
        session = StoreSession("s", store)
        await session.add_items(TURN)
        await session.pop_item()

    _run(go())
    path = tmp_path / "s.json"
    path.write_bytes(store.export_audit("s"))  # type: ignore[arg-type]
    assert main(["audit", str(path)]) == 0
    assert Conversation.load_audit(path).verify()
    doc = json.loads(path.read_text())
    doc["entries"][2]["message"]["content"][0]["text"] = "6"  # a result rewritten
    path.write_text(json.dumps(doc))
    assert main(["audit", str(path)]) == 1


def test_a_session_whose_stored_header_was_rewritten_is_refused(store: SQLStore) -> None:
    """What resumes is what was audited: a session's conversation whose header column was
    rewritten by SQL is refused by every call of a new session (none of them stores anything),
    unless the column is accepted by name."""

    async def go() -> None:
        await StoreSession("user-42", store).add_items(TURN)
        raw_sql(
            store,
            "UPDATE msgwire_conversations SET metadata = ? WHERE id = ?",
            ('{"owner": "mallory"}', key(store, "user-42")),
        )
        calls = (
            lambda s: s.get_items(),
            lambda s: s.add_items([USER]),
            lambda s: s.pop_item(),
            lambda s: s.clear_session(),
        )
        for call in calls:
            with pytest.raises(HeaderMismatchError, match="metadata: stored") as refused:
                await call(StoreSession("user-42", store))
            assert refused.value.columns == ("metadata",)
        accepted = StoreSession("user-42", store, accept_header=["metadata"])
        assert await accepted.get_items() == TURN

    _run(go())
    assert len(store.load("user-42", accept_header=["metadata"])) == len(TURN)  # nothing of the refused calls
    with pytest.raises(ValueError, match="no header column owner"):
        StoreSession("user-42", store, accept_header=["owner"])  # type: ignore[list-item]


# --- bad input, cancellation, the protocol -----------------------------------------------------------


def test_bad_items_are_refused_and_nothing_of_the_batch_is_stored(store: SQLStore) -> None:
    async def go() -> None:
        session = StoreSession("s", store)
        await session.add_items([USER])
        with pytest.raises(TypeError, match=r"items\[1\] is str"):
            await session.add_items([CALL, "not an item", RESULT])  # type: ignore[list-item]
        with pytest.raises(TypeError, match=r"items\[0\] is not JSON"):
            await session.add_items([{"role": "user", "content": object()}])  # type: ignore[typeddict-item]
        with pytest.raises(TypeError, match="a list of items"):
            await session.add_items(USER)  # type: ignore[arg-type]
        assert await StoreSession("s", store).get_items() == [USER]

    _run(go())
    with pytest.raises(ValueError, match="session_id"):
        StoreSession("", store)
    with pytest.raises(TypeError, match="msgwire store"):
        StoreSession("s", "sqlite:///x.db")  # type: ignore[arg-type]


def test_a_cancelled_add_is_stored_before_the_cancellation_is_raised(store: SQLStore) -> None:
    gate = Gate(store)

    async def go() -> None:
        session = StoreSession("s", gate)  # type: ignore[arg-type]
        adding = asyncio.ensure_future(session.add_items(TURN))  # type: ignore[arg-type]
        assert await asyncio.to_thread(gate.reached.wait, 30)
        adding.cancel()
        for _ in range(10):  # the cancellation is delivered while the store is still writing
            await asyncio.sleep(0)
        assert not adding.done()
        gate.open.set()
        with pytest.raises(asyncio.CancelledError):
            await adding
        assert await StoreSession("s", store).get_items() == TURN

    _run(go())


def test_an_async_store_runs_the_session_in_its_pool(store_url: str) -> None:
    async def go() -> tuple[list[Any], set[str]]:
        astore = await aopen_store(store_url)
        seen: set[str] = set()
        original = astore.store.commit

        def commit(*args: Any) -> Any:
            seen.add(threading.current_thread().name)
            return original(*args)

        astore.store.commit = commit  # type: ignore[method-assign]
        async with astore:
            session = StoreSession("s", astore)
            await run_turns(session)
            return await session.get_items(), seen

    items, threads = _run(go())
    assert len(items) > 15
    assert threads
    assert all(name.startswith("msgwire-store") for name in threads)


def test_it_is_a_session(store: SQLStore) -> None:
    session = StoreSession("s", store)
    assert isinstance(session, Session)
    assert session.session_id == "s"
    assert repr(session) == f"StoreSession('s', {store.url!r})"
