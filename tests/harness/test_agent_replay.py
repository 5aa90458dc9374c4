"""Replay: a conversation recorded by the agent on one provider, re-run on another (both the
scripted server): recorded tool results reused without side effects, what changed reported turn by
turn, what the target's dialect cannot carry reported, tools run again only when asked."""

from __future__ import annotations

import asyncio

import pytest

from msgwire import Request, ThinkingBlock, Tool, ToolResultMessage, formats
from msgwire.harness import Agent, Conversation, areplay, replay
from msgwire.harness.replay import NOT_RECORDED
from msgwire.testing import ScriptedServer, reply, tool_call
from tests._support.agents import Tools, connect, deny_all

CALLS = [
    tool_call("read_file", {"path": "notes.txt"}, id="toolu_read"),
    tool_call("delete_file", {"path": "notes.txt"}, id="toolu_delete"),
]


def _record(scripted: ScriptedServer, tools: Tools) -> Conversation:
    """Two segments on Anthropic: a tool turn (one call run, one denied) and its answer; then a
    plain question and its answer."""
    thinking = ThinkingBlock(thinking="Read first, then delete.", signature="c2ln")
    scripted.add(reply([thinking, *CALLS]), reply("It says: buy milk. Not deleted."), reply("You are welcome."))
    with (
        connect("anthropic", scripted) as provider,
        Agent(provider, tools=tools.registry, approver=deny_all, max_tokens=300) as agent,
    ):
        agent.run("Read notes.txt, then delete it.")
        agent.run("Thanks!")
    scripted.wait(3)
    return agent.conversation


def test_the_same_replies_elsewhere_reuse_the_recorded_results(scripted: ScriptedServer) -> None:
    tools = Tools()
    source = _record(scripted, tools)
    assert len(tools.runs) == 1
    again = [tool_call("read_file", {"path": "notes.txt"}), tool_call("delete_file", {"path": "notes.txt"})]
    scripted.add(reply(again), reply("It says: buy milk. Not deleted."), reply("You are welcome."))
    with connect("openai", scripted, model="gpt-4o") as target:
        replayed, report = replay(source, target, tools=tools.registry, max_tokens=300)
    assert len(tools.runs) == 1  # nothing ran again
    assert [t.changed for t in report.turns] == [False, False, False]
    assert [(t.reused, t.unanswered) for t in report.turns] == [(2, 0), (0, 0), (0, 0)]
    assert report.changed == []
    assert (report.dialect, report.model, report.source_id) == ("openai", "gpt-4o", source.id)
    assert replayed.metadata["replay_of"] == source.id
    # what the model was sent: the recorded results, answering the new calls
    sent = scripted.wait(6)[4].json()["messages"]
    results = [m for m in sent if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == [c.id for c in again]
    assert "buy milk" in results[0]["content"]
    assert "denied" in results[1]["content"]
    # the same user messages; every step recorded, the reuse named in the trail
    user_ids = [m.id for m in source.messages() if m.type == "user"]
    assert [m.id for m in replayed.messages() if m.type == "user"] == user_ids
    reused = [e for e in replayed.entries if "replayed_from" in e.audit and e.message.type == "tool_result"]
    assert [e.decision for e in reused] == ["tool_executed", "permission_denied"]
    assert replayed.verify()
    # the source's thinking (Anthropic's, signed) and the denial's error flag have no place in
    # OpenAI Chat: reported
    assert [loss.kind for loss in report.losses.entries] == ["thinking", "is_error"]
    assert (
        report.losses
        == formats.convert_request(
            Request(messages=source.messages_for_model(), tools=tools.registry.specs), "openai"
        ).report
    )


def test_a_target_that_calls_otherwise_is_told_there_is_no_recorded_result(scripted: ScriptedServer) -> None:
    tools = Tools()
    source = _record(scripted, tools)
    scripted.add(
        reply([tool_call("grep", {"pattern": "milk"})]),
        reply("I could not search."),
        reply("Welcome!"),
    )
    with connect("ollama", scripted) as target:
        replayed, report = replay(source, target, tools=tools.registry.specs, max_tokens=300)
    assert len(tools.runs) == 1
    first, second, third = report.turns
    assert first.calls_changed
    assert first.replayed_calls == ['grep({"pattern":"milk"})']
    assert first.original_calls == ['read_file({"path":"notes.txt"})', 'delete_file({"path":"notes.txt"})']
    assert (first.reused, first.unanswered) == (0, 1)
    assert (second.text_changed, second.replayed_text) == (True, "I could not search.")
    assert (third.text_changed, third.original_text, third.replayed_text) == (True, "You are welcome.", "Welcome!")
    assert [t.segment for t in report.turns] == [0, 0, 1]
    (told,) = [m for m in replayed.messages() if isinstance(m, ToolResultMessage)]
    assert (told.text, told.status, told.is_error) == (NOT_RECORDED, "error", True)
    assert "~ segment 1" in report.summary()


def test_execute_tools_runs_the_targets_calls_with_approval(scripted: ScriptedServer) -> None:
    tools = Tools()
    source = _record(scripted, tools)
    scripted.add(reply(CALLS), reply("Read, and not deleted."), reply("Bye."))

    async def main() -> tuple[Conversation, object]:
        async with connect("gemini", scripted, model="gemini-2.5-pro") as target:
            return await areplay(source, target, tools=tools.registry, execute_tools=True, approver=deny_all)

    replayed, report = asyncio.run(main())
    assert [name for name, _ in tools.runs] == ["read_file", "read_file"]  # ran again; the denial held
    first = report.turns[0]  # type: ignore[attr-defined]
    assert (first.executed, first.reused) == (2, 0)
    decisions = [e.decision for e in replayed.entries]
    assert decisions.count("tool_call_denied") == 1
    assert decisions.count("tool_executed") == 1


def test_execute_tools_needs_the_registry(scripted: ScriptedServer) -> None:
    with connect("openai", scripted) as target, pytest.raises(TypeError, match="ToolRegistry"):
        replay(Conversation(), target, tools=[Tool(name="grep")], execute_tools=True)


def test_replay_uses_the_model_given(scripted: ScriptedServer) -> None:
    tools = Tools()
    source = _record(scripted, tools)
    scripted.add(reply(CALLS), reply("Same."), reply("Same again."))
    with connect("openai", scripted) as target:
        _, report = replay(source, target, model="gpt-4.1", tools=tools.registry)
    assert report.model == "gpt-4.1"
    assert [r.model for r in scripted.wait(6)[3:]] == ["gpt-4.1"] * 3
