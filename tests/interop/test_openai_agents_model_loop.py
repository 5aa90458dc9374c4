"""openai-agents' whole loop on ``MsgwireModel`` (issue 29, item 4): ``Runner.run`` and
``Runner.run_streamed`` with a function tool, a handoff, structured output and a ``StoreSession``
(SQLite and PostgreSQL), against a ``ScriptedServer``, give the same final output, the same
session history and the same conversation sent to the model at each call as the same run on
openai-agents' own model (Chat Completions and Responses); and Anthropic's signed thinking goes
back to Anthropic with its signature, through the session too."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from agents import Agent, ModelSettings, RunConfig, Runner, function_tool, handoff
from agents.models.interface import Model
from pydantic import BaseModel

from msgwire import AssistantMessage, TextBlock, ThinkingBlock, formats
from msgwire.harness.providers import PROVIDERS, Retry
from msgwire.harness.store import SQLStore, open_store
from msgwire.interop.openai_agents import MsgwireModel, MsgwireModelProvider, StoreSession
from msgwire.testing import Reply, ScriptedServer, recorded, reply, tool_call
from tests._support.oa_models import native

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUN_CONFIG = RunConfig(tracing_disabled=True)
ONCE = Retry(max_retries=0)


class Sum(BaseModel):
    value: int
    note: str


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _script() -> list[Reply]:
    """The triage agent adds, then hands off; the specialist answers in its output type."""
    return [
        reply([tool_call("add", {"a": 2, "b": 3}, id="call_add")]),
        reply([TextBlock(text="Handing over."), tool_call("transfer_to_specialist", {}, id="call_handoff")]),
        reply('{"value": 5, "note": "2 + 3"}'),
    ]


def _agents(model: Model) -> Agent[Any]:
    specialist: Agent[Any] = Agent(name="specialist", model=model, instructions="Answer as a Sum.", output_type=Sum)
    return Agent(
        name="triage",
        model=model,
        instructions="Add, then ask the specialist.",
        tools=[add],
        handoffs=[handoff(specialist)],
    )


def _sent(server: ScriptedServer) -> list[list[tuple[Any, ...]]]:
    """What each model call sent, read back by msgwire's reader: per message its role, text,
    calls (id, name, arguments as JSON values) and the call a result answers."""
    seen = []
    for received in server.requests:
        session = formats.from_request(received.body, received.dialect or "openai")
        sent: list[tuple[Any, ...]] = [("system", session.system_prompt)]
        for m in session.messages:
            calls = [(c.id, c.name, c.parsed_arguments()) for c in getattr(m, "tool_calls", [])]
            sent.append((m.type, getattr(m, "text", None), calls, getattr(m, "tool_call_id", None)))
        seen.append(sent)
    return seen


def _items(items: list[Any]) -> list[dict[str, Any]]:
    """Session items less what a run makes up (the placeholder item ids openai-agents and a
    server give, response ids: each run is its own)."""
    out = []
    for item in items:
        plain = {k: v for k, v in item.items() if k not in ("id", "provider_data")}
        out.append(plain)
    return out


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as opened:
        yield opened


async def _run(agent: Agent[Any], prompt: str, session: StoreSession, streamed: bool) -> Any:
    """``Runner.run``, or ``Runner.run_streamed`` with its events read to the end (the model's
    own among them)."""
    if streamed:
        result = Runner.run_streamed(agent, prompt, session=session, run_config=RUN_CONFIG)
        kinds = [event.type async for event in result.stream_events()]
        assert "raw_response_event" in kinds
        return result
    return await Runner.run(agent, prompt, session=session, run_config=RUN_CONFIG)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize("dialect", ["openai", "openai-responses"])
def test_the_loop_ends_as_on_openai_agents_own_model(store: SQLStore, dialect: str, streamed: bool) -> None:
    async def on(which: str) -> tuple[Any, list[Any], list[list[tuple[Any, ...]]]]:
        with ScriptedServer(_script()) as server:
            if which == "native":
                model, close = native(dialect, server.url)
            else:
                provider = PROVIDERS[dialect](
                    base_url=server.url, api_key="k", model="gpt-4o", retry=Retry(max_retries=0)
                )
                model = MsgwireModel(provider)
                close = model.close
            session = StoreSession(f"{which}-{dialect}-{streamed}", store)
            try:
                result = await _run(_agents(model), "What is 2 + 3?", session, streamed)
                return result, await session.get_items(), _sent(server)
            finally:
                await close()

    theirs, their_items, their_calls = asyncio.run(on("native"))
    mine, my_items, my_calls = asyncio.run(on("msgwire"))
    assert mine.final_output == theirs.final_output == Sum(value=5, note="2 + 3")
    assert mine.last_agent.name == theirs.last_agent.name == "specialist"
    assert _items(my_items) == _items(their_items)
    call, output = "function_call", "function_call_output"
    assert [i.get("type", "message") for i in my_items] == ["message", call, output, "message", call, output, "message"]
    assert my_calls == their_calls  # each model call sent the same conversation
    assert len(my_calls) == 3
    assert store.load(f"msgwire-{dialect}-{streamed}").verify()


def test_a_model_provider_gives_msgwire_models_by_name() -> None:
    with ScriptedServer(_script()) as server:
        provider = MsgwireModelProvider(PROVIDERS["openai"](base_url=server.url, api_key="k", model="default-model"))
        model = provider.get_model("gpt-4o-mini")
        assert isinstance(model, MsgwireModel)
        assert model.model == "gpt-4o-mini"
        assert provider.get_model("gpt-4o-mini") is model
        assert provider.get_model(None).model == "default-model"  # type: ignore[attr-defined]
        specialist: Agent[Any] = Agent(name="specialist", model="gpt-4o-mini", output_type=Sum)
        triage = Agent(name="triage", model="gpt-4o-mini", tools=[add], handoffs=[specialist])
        config = RunConfig(model_provider=provider, tracing_disabled=True)

        async def go() -> Any:
            try:
                return await Runner.run(triage, "What is 2 + 3?", run_config=config)
            finally:
                await provider.aclose()

        result = asyncio.run(go())
        assert result.final_output == Sum(value=5, note="2 + 3")
        assert {r.json()["model"] for r in server.requests} == {"gpt-4o-mini"}


def _claude_stream() -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "usage": {"input_tokens": 30, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I should add."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-123"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "redacted_thinking", "data": "opaque-data"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"a": 2, '}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '"b": 3}'}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), msgspec.json.encode(e)) for e in events)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_anthropic_thinking_goes_back_signed_through_the_session(store: SQLStore, streamed: bool) -> None:
    """Claude's thinking before a tool call must come back with its signature, or Anthropic
    answers 400: the reasoning item keeps it (``provider_data.thinking_blocks``), the session
    keeps the item, and the next request sends the block as Anthropic's own."""
    thought = ThinkingBlock(thinking="I should add.", signature="sig-123")
    hidden = ThinkingBlock(redacted="opaque-data")
    first = AssistantMessage(
        content=[thought, hidden, tool_call("add", {"a": 2, "b": 3}, id="toolu_1")], stop_reason="tool_use"
    )
    # streamed, Claude's own events: the server's writing of a stream goes through Gemini's,
    # which has no redacted thinking
    with ScriptedServer([recorded(_claude_stream(), "anthropic") if streamed else reply(first), reply("5")]) as server:
        provider = PROVIDERS["anthropic"](base_url=server.url, api_key="k", model="claude-sonnet-4-5")
        model = MsgwireModel(provider)
        agent = Agent(name="calc", model=model, tools=[add], model_settings=ModelSettings(max_tokens=1000))
        session = StoreSession(f"claude-{streamed}", store)

        async def go() -> Any:
            try:
                return await _run(agent, "What is 2 + 3?", session, streamed)
            finally:
                await model.close()

        result = asyncio.run(go())
        assert result.final_output == "5"
        second = server.requests[1].json()
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": "I should add.", "signature": "sig-123"},
        {"type": "redacted_thinking", "data": "opaque-data"},
    ]
    assert assistant["content"][2]["type"] == "tool_use"
    stored = asyncio.run(StoreSession(f"claude-{streamed}", store).get_items())
    reasoning = next(i for i in stored if i.get("type") == "reasoning")
    assert reasoning["provider_data"]["thinking_blocks"][0]["signature"] == "sig-123"


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_responses_reasoning_goes_back_by_its_id_and_encrypted_content(store: SQLStore, streamed: bool) -> None:
    """A Responses reasoning item before a function call must be sent back with it (by its id,
    with its encrypted content), through the session too: the model's own reply, recorded."""
    data = (FIXTURES / "wire/openai/responses-encrypted-reasoning-text-function-call.sse").read_bytes()

    @function_tool
    def get_capital(country: str) -> str:
        """The capital of a country."""
        return "Paris"

    with ScriptedServer([recorded(data, "openai-responses"), reply("Paris.")]) as server:
        provider = PROVIDERS["openai-responses"](base_url=server.url, api_key="k", model="gpt-5", retry=ONCE)
        model = MsgwireModel(provider)
        agent = Agent(name="geo", model=model, tools=[get_capital])
        session = StoreSession(f"responses-{streamed}", store)

        async def go() -> Any:
            try:
                return await _run(agent, "Capital of France?", session, streamed)
            finally:
                await model.close()

        result = asyncio.run(go())
        sent = server.requests[1].json()["input"]
    assert result.final_output == "Paris."
    first = next(i for i in sent if i.get("type") == "reasoning")
    recorded_item = next(
        i for i in asyncio.run(StoreSession(f"responses-{streamed}", store).get_items()) if i.get("type") == "reasoning"
    )
    assert first["id"] == recorded_item["id"]
    assert first["id"].startswith("rs_")
    assert first["encrypted_content"] == recorded_item["encrypted_content"]
    kinds = [i.get("type") for i in sent]
    assert kinds.index("reasoning") < kinds.index("function_call") < kinds.index("function_call_output")
