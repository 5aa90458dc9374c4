"""pydantic-ai's whole loop (``Agent.run``, ``run_stream``, ``iter``) with function tools and
structured output, on ``MsgwireModel`` and on pydantic-ai's own model of the same API, each
against its own ``ScriptedServer`` with the same replies: the same final output and the same
history (each response's parts, usage and finish reason; each request's parts)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse

from msgwire.testing import ScriptedServer, reply, tool_call
from tests._support.pai_models import close, msgwire_model, native_comparison, native_model, shape

pytestmark = native_comparison


class Forecast(BaseModel):
    city: str
    celsius: int


def script() -> list[Any]:
    return [
        reply([tool_call("get_weather", {"city": "Oslo"}, id="call_1"), tool_call("get_time", {}, id="call_2")]),
        reply([tool_call("final_result", {"city": "Oslo", "celsius": -3}, id="call_3")]),
    ]


def agent_on(model: Any) -> Agent[None, Forecast]:
    agent = Agent(model, output_type=Forecast, instructions="Answer with a forecast.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"-3 C in {city}"

    @agent.tool_plain
    def get_time() -> str:
        """The time."""
        return "noon"

    return agent


# Each server run makes new response ids; the native Responses model's 'stop' for function calls is
# allow-listed in test_pydantic_ai_differential.py (RESPONSES_STOP).
UNCOMPARED = {
    "openai": {"response_id"},
    "anthropic": {"response_id"},
    "openai-responses": {"response_id", "finish_reason"},
}


def history(messages: list[ModelMessage], dialect: str) -> list[Any]:
    """The history as compared: a response's shape, a request's parts by kind and what they say."""
    out: list[Any] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            out.append({k: v for k, v in shape(message).items() if k not in UNCOMPARED[dialect]})
        else:
            out.append([(p.part_kind, str(getattr(p, "content", ""))) for p in message.parts])
    return out


async def _run(how: str, make: Any, dialect: str) -> tuple[Forecast, list[Any]]:
    with ScriptedServer(script()) as server:
        model = make(dialect, server.url)
        try:
            agent = agent_on(model)
            if how == "run":
                result = await agent.run("Weather in Oslo?")
                return result.output, history(result.all_messages(), dialect)
            if how == "run_stream":
                async with agent.run_stream("Weather in Oslo?") as streamed:
                    output = await streamed.get_output()
                return output, history(streamed.all_messages(), dialect)
            async with agent.iter("Weather in Oslo?") as run:
                async for _ in run:
                    pass
            assert run.result is not None
            return run.result.output, history(run.result.all_messages(), dialect)
        finally:
            await close(model)


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "openai-responses"])
@pytest.mark.parametrize("how", ["run", "run_stream", "iter"])
def test_the_whole_loop_gives_the_native_models_output_and_history(how: str, dialect: str) -> None:
    ours = asyncio.run(_run(how, msgwire_model, dialect))
    native = asyncio.run(_run(how, native_model, dialect))
    assert ours[0] == Forecast(city="Oslo", celsius=-3)
    assert ours == native
