"""``MsgwireModel``'s own promises, against a ``ScriptedServer``: cancelling closes the HTTP
response, one retry layer (the runner's own retries say "send once"), the retry advice, what it
refuses to send, the request it sends (tools, handoffs, output schema, settings), a Responses
reply not streamed that failed, and the model's construction."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from agents import Agent, ModelSettings, RunConfig, Runner, WebSearchTool, function_tool, handoff
from agents.agent_output import AgentOutputSchema
from agents.exceptions import ModelBehaviorError, UserError
from agents.models._retry_runtime import provider_managed_retries_disabled
from agents.retry import ModelRetryAdviceRequest
from pydantic import BaseModel

from msgwire import ProviderError, TransportError
from msgwire.harness.providers import OpenAI, Retry
from msgwire.interop.openai_agents import MsgwireModel
from msgwire.testing import ScriptedServer, error, recorded, reply, stream_error, tool_call
from tests._support.oa_models import call, ours

FAST = Retry(max_retries=2, initial_delay=0.01, max_delay=0.02)


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Sum(BaseModel):
    value: int


# --- cancellation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai", "openai-responses", "anthropic"])
def test_cancelling_a_run_closes_the_http_response(dialect: str) -> None:
    words = " ".join(["word"] * 200)  # streamed slowly: 20 s to its end
    with ScriptedServer([reply(words, chunk_size=64, delay=0.1)]) as server:
        model, close = ours(dialect, server.url)
        agent = Agent(name="a", model=model, model_settings=ModelSettings(max_tokens=1000))

        async def go() -> float:
            result = Runner.run_streamed(agent, "Talk.", run_config=RunConfig(tracing_disabled=True))
            async for event in result.stream_events():
                if event.type == "raw_response_event" and event.data.type.endswith("output_text.delta"):
                    break
            started = time.monotonic()
            result.cancel()
            async for _ in result.stream_events():  # what is left of the run, to its end
                pass
            await close()
            return started

        started = asyncio.run(go())
        (received,) = server.wait(1)
        assert received.done.wait(10)
        assert received.client_closed
        assert time.monotonic() - started < 10
        assert received.bytes_sent < received.body_size


# --- one retry layer ---------------------------------------------------------------------------------------


def test_the_provider_retries_before_the_reply_as_its_retry_says() -> None:
    with ScriptedServer([error(503), error(503), reply("hi")]) as server:
        run = asyncio.run(_one(server, retry=FAST))
        assert run.error is None
        assert len(server.requests) == 3


def test_when_the_runner_retries_itself_the_call_is_sent_once() -> None:
    """openai-agents' runner says so (``provider_managed_retries_disabled``) when it manages the
    retries (``ModelSettings.retry`` with a policy): msgwire's provider then sends once, and a
    stream that fails before its first event is not sent again either."""
    for first in (error(503), recorded(b'data: {"choices": [', "openai", close_after=10)):
        with ScriptedServer([first, reply("hi")]) as server:

            async def go() -> Any:
                with provider_managed_retries_disabled(True):
                    return await _one(server, retry=FAST)

            run = asyncio.run(go())
            assert isinstance(run.error, (ProviderError, TransportError))
            assert len(server.requests) == 1


async def _one(server: ScriptedServer, **options: Any) -> Any:
    model, close = ours("openai", server.url, **options)
    try:
        return await call(model, stream=True)
    finally:
        await close()


def test_retry_advice_reads_msgwires_errors() -> None:
    model = MsgwireModel(OpenAI(base_url="http://127.0.0.1:9", api_key="k", model="m"))
    overloaded = ProviderError("overloaded", status=529, request_id="req_1", error_type="overloaded_error")
    advice = model.get_retry_advice(ModelRetryAdviceRequest(error=overloaded, attempt=1, stream=True))
    assert advice is not None
    assert advice.suggested is True
    assert advice.normalized is not None
    assert (advice.normalized.status_code, advice.normalized.request_id) == (529, "req_1")
    refused = ProviderError("bad request", status=400)
    assert model.get_retry_advice(ModelRetryAdviceRequest(error=refused, attempt=1, stream=True)).suggested is False  # type: ignore[union-attr]
    network = TransportError("reset")
    network_advice = model.get_retry_advice(ModelRetryAdviceRequest(error=network, attempt=1, stream=True))
    assert network_advice is not None
    assert network_advice.suggested is True
    assert network_advice.normalized is not None
    assert network_advice.normalized.is_network_error
    assert model.get_retry_advice(ModelRetryAdviceRequest(error=ValueError("x"), attempt=1, stream=True)) is None


def test_the_advice_says_the_reply_had_begun() -> None:
    with ScriptedServer([stream_error("overloaded", partial="It is")]) as server:
        model, close = ours("openai", server.url, retry=FAST)

        async def go() -> Any:
            try:
                return await call(model, stream=True)
            finally:
                await close()

        run = asyncio.run(go())
    assert isinstance(run.error, ProviderError)
    advice = model.get_retry_advice(ModelRetryAdviceRequest(error=run.error, attempt=1, stream=True))  # type: ignore[attr-defined]
    assert advice is not None
    assert advice.response_started is True


# --- what is sent, and what is refused ------------------------------------------------------------------


def test_tools_handoffs_output_schema_and_settings_are_sent() -> None:
    specialist: Agent[Any] = Agent(name="specialist")
    settings = ModelSettings(
        temperature=0.2, top_p=0.9, max_tokens=50, tool_choice="add", parallel_tool_calls=False, frequency_penalty=0.5
    )
    with ScriptedServer([reply('{"value": 5}')]) as server:
        model, close = ours("openai", server.url)

        async def go() -> Any:
            try:
                return await call(
                    model,
                    stream=True,
                    system_instructions="Be brief.",
                    settings=settings,
                    tools=[add],
                    handoffs=[handoff(specialist)],
                    output_schema=AgentOutputSchema(Sum),
                )
            finally:
                await close()

        run = asyncio.run(go())
        body = server.requests[0].json()
    assert run.error is None
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [t["function"]["name"] for t in body["tools"]] == ["add", "transfer_to_specialist"]
    assert body["tools"][0]["function"]["parameters"] == add.params_json_schema
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["response_format"]["json_schema"]["name"] == "final_output"
    assert body["response_format"]["json_schema"]["schema"] == AgentOutputSchema(Sum).json_schema()
    assert (body["temperature"], body["top_p"], body["parallel_tool_calls"], body["frequency_penalty"]) == (
        0.2,
        0.9,
        False,
        0.5,
    )


@pytest.mark.parametrize(
    ("what", "fails"),
    [
        ("a hosted tool", {"tools": [WebSearchTool()]}),
        ("extra_headers", {"settings": ModelSettings(extra_headers={"x-a": "1"})}),
        ("top_logprobs", {"settings": ModelSettings(top_logprobs=2)}),
        ("truncation on Chat Completions", {"settings": ModelSettings(truncation="auto")}),
    ],
)
def test_what_cannot_be_sent_is_refused_naming_it(what: str, fails: dict[str, Any]) -> None:
    with ScriptedServer([reply("hi")]) as server:
        model, close = ours("openai", server.url)

        async def go() -> Any:
            try:
                return await call(model, stream=True, **fails)
            finally:
                await close()

        run = asyncio.run(go())
        assert isinstance(run.error, UserError)
        assert server.requests == []  # nothing sent
    named = {"a hosted tool": "WebSearchTool", "truncation on Chat Completions": "truncation"}.get(what, what)
    assert named in str(run.error)


def test_server_side_state_is_refused() -> None:
    model = MsgwireModel(OpenAI(base_url="http://127.0.0.1:9", api_key="k", model="m"))
    from agents.models.interface import ModelTracing

    with pytest.raises(UserError, match="previous_response_id"):
        model.stream_response(
            None, "hi", ModelSettings(), [], None, [], ModelTracing.DISABLED, previous_response_id="resp_1"
        )


def test_a_responses_reply_not_streamed_that_failed_raises_as_openai_agents() -> None:
    body = (
        b'{"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "status": "failed", "output": [],'
        b' "error": {"code": "server_error", "message": "boom"}, "tool_choice": "auto", "tools": [],'
        b' "parallel_tool_calls": true}'
    )
    from tests._support.localserver import LocalServer
    from tests._support.localserver import Reply as Raw

    async def go() -> Any:
        with LocalServer() as server:
            server.route("/responses", Raw(body=body, headers={"content-type": "application/json"}))
            model, close = ours("openai-responses", server.url(""))
            try:
                return await call(model, stream=False)
            finally:
                await close()

    run = asyncio.run(go())
    assert isinstance(run.error, ModelBehaviorError)
    assert "response.failed" in str(run.error)


def test_a_model_needs_a_msgwire_provider() -> None:
    with pytest.raises(TypeError, match="msgwire provider"):
        MsgwireModel("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model_name"):
        MsgwireModel(OpenAI(base_url="http://127.0.0.1:9", api_key="k"), model_name="")
    model = MsgwireModel(OpenAI(base_url="http://127.0.0.1:9", api_key="k", model="gpt-4o"), model_name="gpt-4o-mini")
    assert model.model == "gpt-4o-mini"
    assert "gpt-4o-mini" in repr(model)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize("dialect", ["anthropic", "gemini", "ollama"])
def test_a_run_with_a_tool_on_every_dialect(dialect: str, streamed: bool) -> None:
    """The same loop on the providers openai-agents has no model of its own for (but LiteLLM's):
    the call, its result sent back (Ollama pairs results by order: no ids), the answer."""
    with ScriptedServer([reply([tool_call("add", {"a": 2, "b": 3}, id="call_1")]), reply("5")]) as server:
        model, close = ours(dialect, server.url)
        agent = Agent(name="calc", model=model, tools=[add], model_settings=ModelSettings(max_tokens=100))

        async def go() -> Any:
            try:
                if streamed:
                    result = Runner.run_streamed(agent, "What is 2 + 3?", run_config=RunConfig(tracing_disabled=True))
                    async for _ in result.stream_events():
                        pass
                    return result
                return await Runner.run(agent, "What is 2 + 3?", run_config=RunConfig(tracing_disabled=True))
            finally:
                await close()

        result = asyncio.run(go())
        second = server.requests[1].json()
    assert result.final_output == "5"
    assert "5" in str(second)  # the tool's result went back
    calls = [i for i in result.to_input_list() if i.get("type") == "function_call"]
    assert len(calls) == 1
    assert calls[0]["call_id"]
