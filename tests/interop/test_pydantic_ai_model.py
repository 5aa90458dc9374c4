"""``msgwire.interop.pydantic_ai.MsgwireModel``: pydantic-ai's agent on msgwire's providers,
against ``msgwire.testing.ScriptedServer`` (a real HTTP server): what each call sends, what the
agent reads back, and what is refused."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput, PromptedOutput, ToolOutput
from pydantic_ai.exceptions import ModelHTTPError, UserError
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters

try:
    from pydantic_ai.native_tools import WebSearchTool

    NATIVE_FIELD = "native_tools"
except ImportError:  # pydantic-ai 1.x
    from pydantic_ai.builtin_tools import WebSearchTool  # type: ignore[no-redef]

    NATIVE_FIELD = "builtin_tools"

from msgwire import ThinkingBlock
from msgwire.harness.providers import Anthropic, Gemini, HTTPProvider, Ollama, OpenAI, OpenAIResponses
from msgwire.interop.pydantic_ai import MsgwireModel
from msgwire.testing import ScriptedServer, error, recorded, reply, stream_error, tool_call
from tests._support.pai_models import MODEL_ERRORS, UNSUPPORTED_SETTING_WARNING

TEXT_STREAM = Path(__file__).parents[1] / "fixtures" / "wire" / "openai" / "chat-text-include-usage.sse"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@contextlib.asynccontextmanager
async def model_on(
    server: ScriptedServer, cls: type[HTTPProvider] = OpenAI, *, model: str = "gpt-4o", **options: Any
) -> AsyncIterator[MsgwireModel]:
    provider = cls(base_url=server.url, api_key="test", model=model, **options)
    try:
        yield MsgwireModel(provider)
    finally:
        await provider.aclose()


def weather_agent(model: MsgwireModel, **options: Any) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(model, **options)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    return agent


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("cls", [OpenAI, OpenAIResponses, Anthropic, Gemini, Ollama])
@pytest.mark.parametrize("streamed", [False, True])
def test_a_run_with_a_tool_goes_through_the_provider(cls: type[HTTPProvider], streamed: bool) -> None:
    async def main() -> None:
        script = [reply([tool_call("get_weather", {"city": "Paris"}, id="call_w1")]), reply("Sunny in Paris.")]
        with ScriptedServer(script) as server:
            async with model_on(server, cls) as model:
                agent = weather_agent(model, instructions="Be brief.", system_prompt="You are a forecaster.")
                if streamed:
                    async with agent.run_stream("Weather in Paris?") as result:
                        output = await result.get_output()
                    messages = result.all_messages()
                else:
                    done = await agent.run("Weather in Paris?")
                    output, messages = done.output, done.all_messages()
            sent = [r.json() for r in server.requests]
        assert output == "Sunny in Paris."
        call = messages[1]
        assert isinstance(call, ModelResponse)
        assert [(p.tool_name, p.args, p.tool_call_id) for p in call.parts if isinstance(p, ToolCallPart)] == [
            ("get_weather", '{"city":"Paris"}', "call_w1")
        ]
        assert call.provider_name == model.system
        assert call.model_name == "gpt-4o"
        assert call.finish_reason == "tool_call"
        assert call.usage.input_tokens == 10
        assert call.usage.output_tokens == 5
        assert [r.stream for r in server.requests] == [streamed, streamed]
        text = str(sent[1])
        assert "You are a forecaster." in text
        assert "Be brief." in text
        assert "sunny in Paris" in text
        assert "call_w1" in text or cls is Ollama  # for its call (Ollama's API has no call ids)
        assert "get_weather" in str(sent[0])  # the tool declared

    run(main())


def test_images_in_the_prompt_are_sent_by_url_and_as_base64() -> None:
    async def main() -> None:
        with ScriptedServer([reply("A pixel.")]) as server:
            async with model_on(server) as model:
                prompt = [
                    "What are these?",
                    ImageUrl(url="https://example.com/a.png"),
                    BinaryContent(data=PNG, media_type="image/png"),
                ]
                result = await Agent(model).run(prompt)
            body = server.requests[0].json()
        assert result.output == "A pixel."
        content = body["messages"][-1]["content"]
        assert content[1]["image_url"]["url"] == "https://example.com/a.png"
        assert content[2]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()

    run(main())


def anthropic_sse(*events: dict[str, Any]) -> bytes:
    """An Anthropic Messages stream of ``events`` (each framed with its ``event:`` line)."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def block(index: int, content_block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": content_block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def anthropic_reply(blocks: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> bytes:
    start = {"input_tokens": usage["input_tokens"], "output_tokens": 1}
    start |= {k: v for k, v in usage.items() if k.startswith("cache")}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []}
    return anthropic_sse(
        {"type": "message_start", "message": {**message, "stop_reason": None, "usage": start}},
        *blocks,
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
        {"type": "message_stop"},
    )


SIGNED_AND_REDACTED = anthropic_reply(
    [
        *block(
            0,
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "thinking_delta", "thinking": "Let me look."},
            {"type": "signature_delta", "signature": "sig-1"},
        ),
        *block(1, {"type": "redacted_thinking", "data": "opaque-2"}),
        *block(
            2,
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
            {"type": "input_json_delta", "partial_json": '{"city": "Oslo"}'},
        ),
    ],
    "tool_use",
    {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 60, "cache_creation_input_tokens": 7},
)


@pytest.mark.parametrize("streamed", [False, True])
def test_anthropic_thinking_signed_and_redacted_goes_back_in_the_next_request(streamed: bool) -> None:
    async def main() -> Any:
        script = [recorded(SIGNED_AND_REDACTED, "anthropic"), reply("Cold.")]
        with ScriptedServer(script) as server:
            async with model_on(server, Anthropic, model="claude-sonnet-4-5") as model:
                agent = weather_agent(model)
                if streamed:
                    async with agent.run_stream("Oslo?") as result:
                        await result.get_output()
                    messages = result.all_messages()
                else:
                    messages = (await agent.run("Oslo?")).all_messages()
            return messages, server.requests[1].json()

    messages, second = run(main())
    response = messages[1]
    assert isinstance(response, ModelResponse)
    parts = response.parts
    assert isinstance(parts[0], ThinkingPart)
    assert parts[0].signature == "sig-1"
    assert isinstance(parts[1], ThinkingPart)
    assert parts[1].id == "redacted_thinking"
    assert parts[1].signature == "opaque-2"
    u = response.usage  # Anthropic's input counts the cache reads and writes in pydantic-ai's total, once
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (167, 20, 60, 7)
    assert response.finish_reason == "tool_call"
    assert response.provider_details == {"finish_reason": "tool_use"}
    assert response.provider_response_id == "msg_1"
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "Let me look.", "signature": "sig-1"}
    assert assistant[1] == {"type": "redacted_thinking", "data": "opaque-2"}


def test_a_responses_reasoning_item_goes_back_with_its_encrypted_content() -> None:
    async def main() -> None:
        reasoning = ThinkingBlock(thinking="Summary.", signature="gAAAA-encrypted", item_id="rs_1")
        script = [reply([reasoning, tool_call("get_weather", {"city": "Rome"}, id="call_r")]), reply("Warm.")]
        with ScriptedServer(script) as server:
            async with model_on(server, OpenAIResponses, model="gpt-5") as model:
                result = await weather_agent(model).run("Rome?")
            second = server.requests[1].json()
        response = result.all_messages()[1]
        assert isinstance(response, ModelResponse)
        assert response.parts[0] == ThinkingPart(
            "Summary.", id="rs_1", signature="gAAAA-encrypted", provider_name="openai"
        )
        item = next(i for i in second["input"] if i.get("type") == "reasoning")
        assert item["id"] == "rs_1"
        assert item["encrypted_content"] == "gAAAA-encrypted"

    run(main())


CHUNKS = [
    '{"choices":[{"index":0,"delta":{"role":"assistant","content":"<thi"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"nk>plan "}}]}',
    '{"choices":[{"index":0,"delta":{"content":"it</th"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"ink>Answer."}}]}',
    '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
]
THINK_TAGS = "".join(f"data: {c}\n\n" for c in CHUNKS).encode() + b"data: [DONE]\n\n"


@pytest.mark.parametrize("streamed", [False, True])
def test_think_tags_split_into_thinking_also_across_deltas(streamed: bool) -> None:
    async def main() -> list[Any]:
        with ScriptedServer([recorded(THINK_TAGS, "openai")]) as server:
            async with model_on(server, model="deepseek-r1") as model:
                if not streamed:
                    return list((await Agent(model).run("Hi")).all_messages()[1].parts)
                async with Agent(model).run_stream("Hi") as result:
                    assert await result.get_output() == "Answer."
                return list(result.all_messages()[1].parts)

    assert run(main()) == [ThinkingPart("plan it"), TextPart("Answer.")]


NO_IDS = [
    '{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":'
    '{"name":"get_weather","arguments":"{\\"city\\":\\"A\\"}"}}]}}]}',
    '{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":'
    '{"name":"get_weather","arguments":""}}]}}]}',
    '{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
]


def test_tool_calls_without_ids_get_unique_ones_and_empty_arguments_are_an_object() -> None:
    body = "".join(f"data: {c}\n\n" for c in NO_IDS).encode() + b"data: [DONE]\n\n"

    async def main() -> Any:
        with ScriptedServer([recorded(body, "openai"), reply("Done.")]) as server:
            async with model_on(server) as model, weather_agent(model).run_stream("Hi") as result:
                assert await result.get_output() == "Done."
            return result.all_messages(), server.requests[1].json()

    messages, second = run(main())
    calls = messages[1].parts
    ids = [c.tool_call_id for c in calls]
    assert all(ids)
    assert len(set(ids)) == 2
    assert [c.args for c in calls] == ['{"city":"A"}', "{}"]
    sent = [m["tool_call_id"] for m in second["messages"] if m["role"] == "tool"]
    assert sent == ids  # each result names its call


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize(
    ("output", "mode"),
    [(City, "tool"), (ToolOutput(City), "tool"), (NativeOutput(City), "native"), (PromptedOutput(City), "prompted")],
)
def test_structured_output_in_each_mode(output: Any, mode: str) -> None:
    async def main() -> Any:
        answer = '{"name":"Paris","country":"France"}'
        first = reply([tool_call("final_result", answer)]) if mode == "tool" else reply(answer)
        with ScriptedServer([first]) as server:
            async with model_on(server) as model:
                result = await Agent(model, output_type=output).run("Capital of France?")
            return result.output, server.requests[0].json()

    city, body = run(main())
    assert city == City(name="Paris", country="France")
    if mode == "tool":
        assert body["tools"][0]["function"]["name"] == "final_result"
        assert body["tool_choice"] == "required"
    elif mode == "native":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["name", "country"]
    else:
        assert body["response_format"] == {"type": "json_object"}
        assert "country" in body["messages"][0]["content"]  # the schema, in the instructions


def test_an_http_error_is_model_http_error_with_status_and_body_after_the_providers_retries_only() -> None:
    async def main() -> None:
        script = [error(429, "slow down", type="rate_limit_exceeded")] * 2
        with ScriptedServer(script) as server:
            async with model_on(server, max_retries=1) as model:
                model.msgwire_provider.retry.__class__  # noqa: B018 - the provider's own retry rule
                with pytest.raises(ModelHTTPError) as raised:
                    await Agent(model).run("Hi")
            assert len(server.requests) == 2  # one attempt and the provider's one retry: no second layer
        assert raised.value.status_code == 429
        assert raised.value.body == {"message": "slow down", "type": "rate_limit_exceeded", "param": None, "code": None}

    run(main())


def test_an_error_inside_the_stream_is_model_api_error_with_the_providers_words() -> None:
    async def main() -> None:
        script = [stream_error("upstream failed", type="invalid_request_error", partial="It is")]
        with ScriptedServer(script) as server:
            async with model_on(server) as model:
                with pytest.raises(MODEL_ERRORS, match="upstream failed") as raised:
                    async with Agent(model).run_stream("Hi") as result:
                        await result.get_output()
        assert getattr(raised.value, "provider_error_type", "invalid_request_error") == "invalid_request_error"

    run(main())


def test_cancelling_a_stream_closes_the_http_response() -> None:
    async def main() -> None:
        data = TEXT_STREAM.read_bytes()
        with ScriptedServer([recorded(data, "openai", hold_after=len(data) // 2)]) as server:
            async with model_on(server) as model:
                started = time.perf_counter()
                request = [ModelRequest(parts=[UserPromptPart("Hi")])]
                async with model.request_stream(request, None, ModelRequestParameters()) as stream:
                    async for _ in stream:
                        break  # leave after the first event: the context's exit closes the response
                received = server.requests[0]
                assert await asyncio.to_thread(received.done.wait, 5)  # (the loop runs meanwhile)
                assert received.client_closed
                assert not received.completed
                assert time.perf_counter() - started < 5

    run(main())


def test_what_cannot_be_sent_is_refused_loudly() -> None:
    async def main() -> None:
        with ScriptedServer([]) as server:
            async with model_on(server) as model:
                native = ModelRequestParameters(**{NATIVE_FIELD: [WebSearchTool()]})
                with pytest.raises(UserError):
                    await model.request([ModelRequest(parts=[UserPromptPart("Search")])], None, native)
                with pytest.raises(UserError, match="not BinaryContent"):
                    await Agent(model).run(["Listen", BinaryContent(data=b"RIFF", media_type="audio/wav")])
                params = ModelRequestParameters(allow_image_output=True)
                request = [ModelRequest(parts=[UserPromptPart("Draw")])]
                with pytest.raises(UserError, match=r"[Ii]mage output"):
                    await model.request(request, None, params)
            assert server.requests == []

    run(main())


def test_settings_the_provider_owns_are_declared_unsupported() -> None:
    if UNSUPPORTED_SETTING_WARNING is None:
        pytest.skip("this pydantic-ai release does not warn of unsupported settings")
    warning = UNSUPPORTED_SETTING_WARNING

    async def main() -> None:
        with ScriptedServer([reply("Hi.")]) as server:
            async with model_on(server) as model:
                with pytest.warns(warning, match="max_retries"):
                    await Agent(model).run("Hi", model_settings={"max_retries": 5, "temperature": 0.2})
            assert server.requests[0].json()["temperature"] == 0.2

    run(main())


def test_a_model_needs_a_msgwire_provider_and_a_model_name() -> None:
    with pytest.raises(TypeError, match="msgwire provider"):
        MsgwireModel("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model_name"):
        MsgwireModel(OpenAI(api_key="k"))
    model: Callable[..., MsgwireModel] = MsgwireModel
    assert model(OpenAI(api_key="k"), model_name="gpt-4o").model_name == "gpt-4o"
