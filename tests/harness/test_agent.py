"""The agent loop against the scripted model server on 127.0.0.1 (real HTTP, real providers, real
tools): two calls at once (one approved and run, one denied), the results sent back, the answer;
the events in order; a failed stream kept with an ``error`` entry, retried or raised; cancellation
closing the HTTP response; the swarm's hook (the pipeline's ``build``, ``run(None)``, idle)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire import AssistantMessage, TextBlock, TransportError, UsageError
from msgwire.harness import (
    Agent,
    Approve,
    ContextPipeline,
    Conversation,
    RunEnd,
    StepEnd,
    StepStart,
    ToolDecided,
    ToolFinished,
    ToolStarted,
)
from msgwire.harness.events import LoopEvent
from msgwire.testing import ScriptedServer, reply, stream_bytes, tool_call
from tests._support.agents import Tools, approve_all, connect, deny_all

DIALECTS = ("openai", "openai-responses", "anthropic", "gemini", "ollama")
TWO_CALLS = [
    tool_call("read_file", {"path": "notes.txt"}, id="call_read"),
    tool_call("delete_file", {"path": "notes.txt"}, id="call_delete"),
]
LOOP_TYPES = tuple(t.__struct_config__.tag for t in LoopEvent.__args__)  # type: ignore[attr-defined]


def _loop_events(events: list[Any]) -> list[str]:
    return [e.type for e in events if e.type in LOOP_TYPES]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_two_calls_at_once_one_approved_one_denied_then_the_answer(scripted: ScriptedServer, dialect: str) -> None:
    tools = Tools()
    scripted.add(reply(TWO_CALLS), reply("notes.txt says: buy milk. I did not delete it."))
    with (
        connect(dialect, scripted) as provider,
        Agent(provider, tools=tools.registry, approver=deny_all, max_tokens=200) as agent,
    ):
        answer = agent.run("Read notes.txt, then delete it.")
    assert answer.text == "notes.txt says: buy milk. I did not delete it."
    assert tools.runs == [("read_file", {"path": "notes.txt"})]  # the denied call never ran
    first, second = scripted.wait(2)
    assert first.stream
    assert second.stream
    sent = msgwire.formats.read_request(second.json(), dialect)
    assert [t.name for t in sent.tools] == ["read_file", "delete_file", "grep"]
    results = [m for m in sent.messages if isinstance(m, msgwire.ToolResultMessage)]
    assert len(results) == 2
    assert "buy milk" in results[0].text
    assert "denied: not allowed here" in results[1].text
    trail = agent.conversation
    assert [e.decision for e in trail.entries] == [
        "user_input",
        "tool_call_requested",
        "tool_call_approved",
        "tool_call_denied",
        "tool_executed",
        "permission_denied",
        "planning",
    ]
    assert trail.verify()
    assert trail.entries[1].audit["step"] == 0
    assert trail.entries[3].audit["by"] == "approver:deny_all"
    assert trail.entries[-1].audit["step"] == 1


def test_stream_yields_the_models_events_and_the_loops_in_order(scripted: ScriptedServer) -> None:
    tools = Tools()
    scripted.add(reply(TWO_CALLS), reply("Done."))
    with connect("anthropic", scripted) as provider, Agent(provider, tools=tools.registry, max_tokens=99) as agent:
        events = list(agent.stream("Read notes.txt, then delete it."))
    assert _loop_events(events) == [
        "step_start",
        "tool_decided",  # no approver: the "ask" call is denied by default, nobody is asked
        "tool_decided",
        "tool_started",
        "tool_finished",
        "tool_finished",
        "step_end",
        "step_start",
        "step_end",
        "run_end",
    ]
    types = [e.type for e in events]
    first_model = types.index("message_start")
    assert types.index("step_start") < first_model < types.index("message_end") < types.index("tool_decided")
    decided = [e for e in events if isinstance(e, ToolDecided)]
    assert [(d.record.tool, d.record.approved) for d in decided] == [("read_file", True), ("delete_file", False)]
    assert decided[1].record.reason == "approval needed and no approver was given"
    (started,) = [e for e in events if isinstance(e, ToolStarted)]
    assert started.call.name == "read_file"
    assert started.call.approval == "approved"
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.result.status for f in finished] == ["success", "denied"]
    steps = [e for e in events if isinstance(e, StepEnd)]
    assert [len(s.results) for s in steps] == [2, 0]
    assert [s.done for s in steps] == [False, True]
    (end,) = [e for e in events if isinstance(e, RunEnd)]
    assert (end.reason, end.steps, end.message.text) == ("end_turn", 2, "Done.")
    assert end.usage.output_tokens == 10  # both replies' usage, summed
    assert isinstance(events[0], StepStart)
    assert msgspec.json.decode(msgspec.json.encode(end))["type"] == "run_end"


def test_the_approver_is_announced_and_may_edit_the_arguments(scripted: ScriptedServer) -> None:
    tools = Tools()
    scripted.add(reply([TWO_CALLS[1]]), reply("Deleted draft.txt instead."))

    def edit(requests: list[Any]) -> dict[str, Any]:
        (request,) = requests
        assert request.arguments == {"path": "notes.txt"}
        return {request.call.id: Approve(arguments={"path": "draft.txt"}, reason="only the draft")}

    with connect("openai", scripted) as provider, Agent(provider, tools=tools.registry, approver=edit) as agent:
        events = list(agent.stream("Delete notes.txt"))
    assert tools.runs == [("delete_file", {"path": "draft.txt"})]
    asked = [e for e in events if e.type == "approval_requested"]
    assert [r.call.id for r in asked[0].requests] == ["call_delete"]
    assert _loop_events(events)[:5] == [
        "step_start",
        "approval_requested",
        "tool_decided",
        "tool_started",
        "tool_finished",
    ]
    approved = agent.conversation.entries[2]
    assert (approved.decision, approved.audit["edited"], approved.audit["reason"]) == (
        "tool_call_approved",
        True,
        "only the draft",
    )


def test_the_agents_policy_decides_for_every_tool(scripted: ScriptedServer) -> None:
    tools = Tools()
    scripted.add(reply(TWO_CALLS), reply("Both done."), reply([TWO_CALLS[0]]), reply("Refused."))
    with connect("openai", scripted) as provider, Agent(provider, tools=tools.registry, policy="auto") as agent:
        agent.run("Read notes.txt, then delete it.")
        assert [name for name, _ in tools.runs] == ["read_file", "delete_file"]  # nobody was asked
        agent.policy = "deny"
        agent.run("Read it again.")
    assert len(tools.runs) == 2
    assert agent.conversation.entries[-2].decision == "permission_denied"
    assert tools.registry["delete_file"].policy == "ask"  # the registry itself is unchanged


def test_max_steps_ends_a_run_that_keeps_calling_tools(scripted: ScriptedServer) -> None:
    tools = Tools()
    scripted.add(*(reply([tool_call("grep", {"pattern": f"p{i}"})]) for i in range(3)))
    with connect("ollama", scripted) as provider, Agent(provider, tools=tools.registry, max_steps=3) as agent:
        events = list(agent.stream("Search forever."))
    end = events[-1]
    assert isinstance(end, RunEnd)
    assert (end.reason, end.steps) == ("max_steps", 3)
    assert len(tools.runs) == 3
    assert scripted.pending == 0


# --- failures ----------------------------------------------------------------------------------


def _cut_reply(text: str, **delivery: Any) -> Any:
    message = AssistantMessage(content=[TextBlock(text=text)], stop_reason="end_turn", model="scripted-model")
    return reply(message, **delivery), stream_bytes(message, "openai")


def test_a_failed_stream_keeps_its_partial_message_and_raises(scripted: ScriptedServer) -> None:
    text = "The answer is forty-two, and here is why."
    cut, data = _cut_reply(text)
    after = data.index(b"\n\n", data.index(b"forty")) + 2
    scripted.add(msgspec.structs.replace(cut, close_after=after))
    with connect("openai", scripted) as provider, Agent(provider) as agent, pytest.raises(TransportError):
        agent.run("What is the answer?")
    entry = agent.conversation.entries[-1]
    assert entry.decision == "error"
    assert (entry.message.text, entry.message.stop_reason) == (text, "error")
    assert entry.audit["kind"] == "transport"
    assert entry.audit["retrying"] is False
    assert agent.conversation.verify()


def test_a_failed_stream_is_sent_again_and_left_out_of_later_contexts(scripted: ScriptedServer) -> None:
    cut, data = _cut_reply("Partial answ")
    scripted.add(msgspec.structs.replace(cut, close_after=data.index(b"Partial") + 5), reply("Whole answer."))
    scripted.add(reply("Second answer."))
    with connect("openai", scripted) as provider, Agent(provider, retries=1) as agent:
        events = list(agent.stream("Answer me."))
        agent.run("Again.")
    failed = [e for e in events if e.type == "stream_failed"]
    assert [(f.attempt, f.retrying, f.kind) for f in failed] == [(1, True, "transport")]
    assert events[-1].message.text == "Whole answer."  # type: ignore[union-attr]
    first, retry, later = scripted.wait(3)
    assert retry.body == first.body  # the same request, sent again
    sent = [m["content"] for m in later.json()["messages"]]
    assert sent == ["Answer me.", "Whole answer.", "Again."]  # the failed attempt is not shown to the model
    assert [e.decision for e in agent.conversation.entries] == [
        "user_input",
        "error",
        "planning",
        "user_input",
        "planning",
    ]
    assert agent.conversation.entries[2].audit["attempt"] == 2


def test_on_error_stop_ends_the_run_with_the_partial_message(scripted: ScriptedServer) -> None:
    scripted.add(msgwire.testing.error(400, "bad request"))
    with connect("anthropic", scripted) as provider, Agent(provider, on_error="stop", max_tokens=5) as agent:
        events = list(agent.stream("hi"))
    end = events[-1]
    assert isinstance(end, RunEnd)
    assert (end.reason, end.message.stop_reason, end.message.content) == ("error", "error", [])
    entry = agent.conversation.entries[-1]
    assert (entry.decision, entry.audit["status"], entry.audit["kind"]) == ("error", 400, "provider")


def test_a_request_the_provider_refuses_is_not_sent(scripted: ScriptedServer) -> None:
    with (
        connect("anthropic", scripted) as provider,
        Agent(provider) as agent,  # no max_tokens
        pytest.raises(msgwire.ValidationError, match="max_tokens"),
    ):
        agent.run("hi")
    assert scripted.requests == []


# --- cancellation -----------------------------------------------------------------------------


def test_closing_the_stream_closes_the_http_response_and_keeps_the_partial(scripted: ScriptedServer) -> None:
    cut, data = _cut_reply("Hello there, a long answer that never ends.")
    scripted.add(msgspec.structs.replace(cut, hold_after=data.index(b"\n\n", data.index(b"Hello")) + 2))
    with connect("openai", scripted) as provider, Agent(provider) as agent:
        events = agent.stream("Talk.")
        for event in events:
            if event.type == "text_delta":
                break  # the server holds the rest: this came while the body was still open
        events.close()
        (received,) = scripted.wait(1)
        assert received.client_closed
        assert not received.completed
        entry = agent.conversation.entries[-1]
        assert (entry.decision, entry.audit["kind"]) == ("error", "cancelled")
        assert (entry.message.text, entry.message.stop_reason) == (
            "Hello there, a long answer that never ends.",
            "aborted",
        )
        scripted.add(reply("Short."))
        assert agent.run("Briefly?").text == "Short."  # the agent goes on after a cancelled run


def test_cancelling_the_task_closes_the_http_response(scripted: ScriptedServer) -> None:
    cut, data = _cut_reply("Hello there, a long answer that never ends.")
    scripted.add(msgspec.structs.replace(cut, hold_after=data.index(b"\n\n", data.index(b"Hello")) + 2))

    async def main() -> None:
        async with connect("openai", scripted) as provider:
            agent = Agent(provider)
            seen = asyncio.Event()

            async def consume() -> None:
                async for event in agent.astream("Talk."):
                    if event.type == "text_delta":
                        seen.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(seen.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            agent.close()

    asyncio.run(main())
    (received,) = scripted.wait(1)
    assert received.client_closed


# --- async --------------------------------------------------------------------------------------


def test_arun_and_astep_use_the_async_client(scripted: ScriptedServer) -> None:
    tools = Tools()
    scripted.add(reply(TWO_CALLS), reply("Read it."), reply("Bye."))

    async def main() -> tuple[str, StepEnd]:
        async with (
            connect("gemini", scripted) as provider,
            Agent(provider, tools=tools.registry, approver=approve_all) as agent,
        ):
            answer = await agent.arun("Read notes.txt and delete it.")
            step = await agent.astep("Thanks.")
            with pytest.raises(UsageError, match="arun"):
                agent.run("not from inside a loop")
            return answer.text, step

    text, step = asyncio.run(main())
    assert text == "Read it."
    assert (step.step, step.message.text, step.done) == (2, "Bye.", True)
    assert [name for name, _ in tools.runs] == ["read_file", "delete_file"]


def test_one_run_at_a_time(scripted: ScriptedServer) -> None:
    scripted.add(reply("one"), reply("two"))

    async def main() -> list[str]:
        async with connect("openai", scripted) as provider:
            agent = Agent(provider)
            first = asyncio.create_task(agent.arun("a"))
            await asyncio.sleep(0)
            with pytest.raises(UsageError, match="already running"):
                await agent.arun("b")
            texts = [(await first).text, (await agent.arun("c")).text]
            agent.close()
            return texts

    assert asyncio.run(main()) == ["one", "two"]


# --- the swarm's hook ---------------------------------------------------------------------------


def test_run_without_input_nudges_until_idle(scripted: ScriptedServer) -> None:
    """The seed's truth table: with no real user message, each step sends the synthetic
    "continue"; the third in a row is sent and the agent goes idle."""
    scripted.add(*(reply(f"working {i}") for i in range(3)))
    with connect("openai", scripted) as provider, Agent(provider) as agent:
        ends = [agent.run(None) for _ in range(2)]
        assert not agent.idle
        events = list(agent.stream(None))
        assert agent.idle
    assert [m.text for m in ends] == ["working 0", "working 1"]
    assert events[-1].reason == "idle"  # type: ignore[union-attr]
    assert [e.synthetic for e in events if isinstance(e, StepStart)] == [True]
    for received in scripted.wait(3):
        opening = received.json()["messages"][0]
        assert opening == {"role": "user", "content": "Continue."}
    assert agent.counter.count == 3


def test_the_pipelines_builder_decides_what_the_model_sees(scripted: ScriptedServer) -> None:
    scripted.add(reply("Exploring."), reply("Still exploring."))
    broadcast = msgwire.user("Explore the universe!", source="broadcast")
    seen: list[int] = []

    def mission(conversation: Conversation) -> msgwire.Context:
        session = conversation.session()
        session.messages.insert(0, broadcast)  # a broadcast kept elsewhere (the swarm's store)
        seen.append(len(conversation))
        return msgwire.context.build(session, window=2)

    with connect("openai", scripted) as provider, Agent(provider, context=ContextPipeline(build=mission)) as agent:
        agent.run(None)
        step = agent.step(None)
    assert step.message.text == "Still exploring."
    assert not agent.idle
    assert agent.counter.count == 0  # a real (broadcast) message reset it
    first, second = scripted.wait(2)
    assert first.json()["messages"] == [{"role": "user", "content": "Explore the universe!"}]
    assert second.json()["messages"][-1] == {"role": "assistant", "content": "Exploring."}
    assert seen == [0, 1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_step_writes_its_request_from_the_agents_cache(scripted: ScriptedServer, dialect: str) -> None:
    """The loop keeps one formats.RequestCache for its conversation: every message it sent was
    read into it once, and each body sent is the body of a build without a cache."""
    scripted.add(reply(TWO_CALLS), reply("done"))
    with (
        connect(dialect, scripted) as provider,
        Agent(provider, tools=Tools().registry, approver=approve_all, max_tokens=200) as agent,
    ):
        agent.run("Read notes.txt, then delete it.")
        second = scripted.wait(2)[1]
        history = list(agent.context.context(agent.conversation, agent.counter).messages[:-1])  # the reply came after
    # the user message, the calls, their two results: each read once, in the agent's cache
    assert len(history) == 4
    assert len(agent.request_cache) == 4
    array = _ARRAY[dialect]
    assert msgwire.formats.to_request(history, dialect)[array] == second.json()[array]


_ARRAY = {
    "openai": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
    "gemini": "contents",
    "ollama": "messages",
}
