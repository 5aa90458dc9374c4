"""Conversation: entries, latest-state views, system control, fork, sink, thread safety."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire import AssistantMessage, SystemControlMessage, ToolCallBlock, context, formats
from msgwire.harness import Conversation, Entry
from msgwire.harness.conversation import DECISIONS, default_decision


def _calls_message(*names: str) -> AssistantMessage:
    calls = [ToolCallBlock(id=f"call_{i}", name=n, arguments='{"x": 1}') for i, n in enumerate(names)]
    return msgwire.assistant(calls, stop_reason="tool_use")


def _approved(message: AssistantMessage, index: int) -> AssistantMessage:
    content = list(message.content)
    content[index] = msgspec.structs.replace(content[index], approval="approved")
    return msgspec.structs.replace(message, content=content)


def test_add_records_the_entry_with_seq_timestamp_and_default_decision() -> None:
    c = Conversation(system_prompt="Be brief.")
    question = msgwire.user("read the README")
    e = c.add(question, audit={"permission": "fs.read", "granted": True})
    assert (e.seq, e.message, e.decision, e.audit) == (
        0,
        question,
        "user_input",
        {"permission": "fs.read", "granted": True},
    )
    assert e.timestamp.tzinfo is not None
    assert c.add(msgwire.assistant("I'll read it.")).decision == "planning"
    assert c.add(_calls_message("fs.read")).decision == "tool_call_requested"
    assert (
        c.add(msgwire.tool_result("call_0", "# msgwire"), audit={"execution_time_ms": 42}).decision == "tool_executed"
    )
    assert [e.seq for e in c.entries] == [0, 1, 2, 3]
    assert len({e.id for e in c.entries}) == 4
    assert c.verify()


@pytest.mark.parametrize(
    ("message", "decision"),
    [
        (msgwire.user("hi"), "user_input"),
        (msgwire.assistant("hello"), "planning"),
        (_calls_message("f"), "tool_call_requested"),
        (msgwire.tool_result("c", "ok"), "tool_executed"),
        (msgwire.tool_result("c", "no", status="error", is_error=True), "tool_failed"),
        (msgwire.tool_result("c", "no", status="denied"), "permission_denied"),
        (msgwire.tool_result("c", "no", status="interrupted"), "tool_interrupted"),
        (msgwire.system_control("mode_change", old="a", new="b"), "mode_change"),
        (msgwire.system_control("branch_switch", old="a", new="b"), "branch_switch"),
    ],
)
def test_default_decisions_are_well_known(message: Any, decision: str) -> None:
    assert default_decision(message) == decision
    assert decision in DECISIONS


def test_ids_are_unique_and_update_needs_a_known_id_of_the_same_type() -> None:
    c = Conversation()
    question = msgwire.user("hi")
    c.add(question)
    with pytest.raises(ValueError, match="already in conversation"):
        c.add(question)
    with pytest.raises(KeyError):
        c.update(msgwire.user("other"), "edited")
    with pytest.raises(TypeError, match="is of type 'user', not 'assistant'"):
        c.update(msgwire.assistant("x", id=question.id), "edited")
    assert len(c) == 1


def test_an_update_is_a_new_entry_and_views_show_the_latest_state() -> None:
    c = Conversation()
    c.add(msgwire.user("go"))
    request = _calls_message("a", "b")
    first = c.add(request)
    approved = _approved(request, 1)
    second = c.update(approved, "tool_call_approved", {"by": "alice", "fingerprint": "f" * 64})
    c.add(msgwire.tool_result("call_1", "done"))

    # the old entry is untouched; the new one holds the new state with the same message id
    assert first.message is request
    assert first.message.content[1].approval == "pending"
    assert second.message.id == request.id
    assert second.decision == "tool_call_approved"
    assert [type(m).__name__ for m in c.messages()] == ["UserMessage", "AssistantMessage", "ToolResultMessage"]
    assert c.messages()[1] is approved
    assert c.message(request.id) is approved
    assert c.session().messages == c.messages()
    assert c.dirty == {request.id}
    assert c.take_dirty() == {request.id}
    assert c.dirty == frozenset()
    assert c.verify()


def test_record_adds_or_updates() -> None:
    c = Conversation()
    request = _calls_message("a")
    c.record(request, "tool_call_requested")
    c.record(_approved(request, 0), "tool_call_approved")
    assert [e.decision for e in c.entries] == ["tool_call_requested", "tool_call_approved"]
    assert len(c.messages()) == 1


def test_the_session_view_feeds_the_wire_layer() -> None:
    c = Conversation(system_prompt="You are terse.")
    c.add(msgwire.user("What's 6 x 7?"))
    c.switch_branch("experiment")
    c.add(msgwire.assistant("42"))
    session = c.session()
    assert session.id == c.id
    assert session.system_prompt == "You are terse."
    assert msgwire.loads(msgwire.dumps(session)) == session
    assert [m.type for m in c.messages_for_model()] == ["user", "assistant"]
    ctx = context.build(session)
    assert [m.type for m in ctx.messages] == ["user", "assistant"]
    body = formats.to_request(session, "anthropic")
    assert body["system"] == "You are terse."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]


def test_switch_mode_records_the_change_and_updates_the_system_prompt() -> None:
    modes = {"plan": "Plan only; do not edit files.", "act": "Carry the plan out."}
    c = Conversation(modes=modes, mode="plan")
    assert c.system_prompt == modes["plan"]
    e = c.switch_mode("act", by="user", reason="plan accepted")
    assert isinstance(e.message, SystemControlMessage)
    assert (e.decision, e.message.control, e.message.params) == (
        "mode_change",
        "mode_change",
        {"old": "plan", "new": "act"},
    )
    assert e.audit == {
        "by": "user",
        "reason": "plan accepted",
        "system_prompt": {"old": modes["plan"], "new": modes["act"]},
    }
    assert (c.mode, c.system_prompt) == ("act", modes["act"])
    with pytest.raises(ValueError, match="unknown mode"):
        c.switch_mode("yolo")
    assert c.mode == "act"
    assert len(c) == 1
    # never sent to a model
    assert c.messages_for_model() == []


def test_switch_branch_marks_the_transition() -> None:
    c = Conversation()
    e = c.switch_branch("try-2", by="user")
    assert e.message.params == {"old": "main", "new": "try-2"}  # type: ignore[union-attr]
    assert (e.decision, c.branch) == ("branch_switch", "try-2")


def test_fork_is_independent_and_keeps_ids_hashes_and_the_state_at_the_fork_point() -> None:
    modes = {"plan": "P", "act": "A"}
    c = Conversation(modes=modes, mode="plan", metadata={"project": {"name": "x"}})
    c.add(msgwire.user("hi"))
    at = c.add(msgwire.assistant("plan: ..."))
    c.switch_mode("act")
    c.switch_branch("b2")
    c.add(msgwire.user("go"))

    fork = c.fork(at=at.id)
    assert fork.id != c.id
    assert fork.parent is not None
    assert (fork.parent.conversation_id, fork.parent.entry_id, fork.parent.hash) == (c.id, at.id, at.hash)
    assert fork.entries == c.entries[:2]  # same ids, seq and hashes: the common past, provably
    assert [m.id for m in fork.messages()] == [m.id for m in c.messages()[:2]]
    assert (fork.mode, fork.system_prompt, fork.branch) == ("plan", "P", "main")
    assert fork.verify()

    # nothing shared: the fork's content lists, metadata, and future are its own
    fork.messages()[0].content.append(msgwire.TextBlock(text="sneaky"))  # type: ignore[union-attr]
    fork.metadata["project"]["name"] = "y"
    fork.add(msgwire.user("only in the fork"))
    assert c.messages()[0].content == [msgwire.TextBlock(text="hi")]  # type: ignore[union-attr]
    assert c.metadata == {"project": {"name": "x"}}
    assert len(c) == 5
    assert c.verify()
    assert not fork.verify()  # the fork's own tampering shows in the fork

    whole = c.fork()
    assert whole.entries == c.entries
    assert (whole.mode, whole.branch) == ("act", "b2")
    with pytest.raises(KeyError):
        c.fork(at="no-such-entry")


class _ListSink:
    def __init__(self, fail_on: str | None = None) -> None:
        self.received: list[Entry] = []
        self.fail_on = fail_on

    def append(self, conversation: Conversation, entries: Sequence[Entry]) -> None:
        for e in entries:
            if e.decision == self.fail_on:
                raise OSError("disk full")
        self.received.extend(entries)


def test_a_sink_gets_every_entry_in_order_and_a_failing_sink_refuses_it() -> None:
    sink = _ListSink(fail_on="tool_call_approved")
    c = Conversation(sink=sink)
    c.add(msgwire.user("hi"))
    request = c.add(_calls_message("f")).message
    with pytest.raises(OSError, match="disk full"):
        c.update(_approved(request, 0), "tool_call_approved")
    assert sink.received == c.entries
    assert len(c) == 2
    assert c.message(request.id) is request
    assert c.dirty == frozenset()
    c.bind(None)
    c.update(_approved(request, 0), "tool_call_approved")
    assert len(sink.received) == 2
    assert len(c) == 3


def test_appends_from_16_threads_lose_nothing_and_keep_seq_in_chain_order() -> None:
    c = Conversation()
    per_thread, threads = 1000, 16
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            c.add(msgwire.user(f"{t}:{i}"), audit={"thread": t, "i": i})

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()

    entries = c.entries
    assert len(entries) == per_thread * threads
    assert [e.seq for e in entries] == list(range(len(entries)))
    assert len({e.id for e in entries}) == len(entries)
    for t in range(threads):  # each thread's entries in the order it appended them
        assert [e.audit["i"] for e in entries if e.audit["thread"] == t] == list(range(per_thread))
    assert c.verify()
    assert len(c.messages()) == len(entries)


def test_appends_from_many_asyncio_tasks() -> None:
    c = Conversation()

    async def task(t: int) -> None:
        for i in range(50):
            c.add(msgwire.user(f"{t}:{i}"), audit={"task": t, "i": i})
            await asyncio.sleep(0)  # let the others interleave

    async def main() -> None:
        await asyncio.gather(*(task(t) for t in range(100)))

    asyncio.run(main())
    entries = c.entries
    assert len(entries) == 5000
    assert [e.seq for e in entries] == list(range(5000))
    assert len({e.audit["task"] for e in entries[:100]}) > 1  # they did interleave
    for t in range(100):
        assert [e.audit["i"] for e in entries if e.audit["task"] == t] == list(range(50))
    assert c.verify()


def test_an_audit_that_json_cannot_carry_is_refused_before_anything_is_appended() -> None:
    c = Conversation()
    with pytest.raises(TypeError):
        c.add(msgwire.user("hi"), audit={"when": object()})
    assert len(c) == 0
    assert c.messages() == []
