"""The stream bugs users report in pydantic-ai's own models, each as a stream on a
``ScriptedServer``: the correct outcome is stated and asserted for ``MsgwireModel``, streamed and
not. What pydantic-ai 2.68's native model does on each is in ``NATIVE`` (the closing note of
issue 29; measured with ``tests/_support/pai_models.native_model`` on the same replies)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, ToolCallPart

from msgwire.testing import ScriptedServer, recorded, stream_error
from tests._support.pai_models import API_ERROR, MODEL_ERRORS, msgwire_model, respond

REALWORLD = Path(__file__).resolve().parents[1] / "fixtures" / "realworld"

NATIVE = {
    "choices_null": "right: skips it (2.68; pydantic-ai issue 5165 crashed before)",
    "responses_incomplete": "right: finish_reason 'length'",
    "responses_failed": "right: ModelServerError (500, in_stream)",
    "usage_twice": "wrong: counts Groq's usage twice, 402 input tokens for 201 (x_groq.usage added to usage)",
    "index_zero": 'wrong: one call \'get_weatherget_weather\', arguments \'{"city":"A"}{"city":"B"}\', id call_b',
    "arguments_missing": "a call whose args are None (validated as {} later); MsgwireModel gives '{}'",
    "mid_stream_error": "right: ModelServerError (500, in_stream)",
    "cut_in_tool_call": "right: ModelConnectionError",
}


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o"}
    if delta is not None or finish is not None:
        base["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return {**base, **fields}


def call(index: int, id: str | None, name: str | None, arguments: str | None) -> dict[str, Any]:  # noqa: A002
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    entry: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if id is not None:
        entry["id"] = id
    return {"tool_calls": [entry]}


async def _respond(body: bytes, dialect: str, streamed: bool, **delivery: Any) -> ModelResponse:
    with ScriptedServer([recorded(body, dialect, **delivery)]) as server:
        model = msgwire_model(dialect, server.url)
        try:
            return await respond(model, streamed)
        finally:
            await model.msgwire_provider.aclose()


def answer(body: bytes, dialect: str = "openai", streamed: bool = True, **delivery: Any) -> ModelResponse:
    return asyncio.run(_respond(body, dialect, streamed, **delivery))


STREAMED = pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "not-streamed"])


@STREAMED
def test_a_chunk_whose_choices_are_null_is_skipped(streamed: bool) -> None:
    body = sse(chunk({"role": "assistant", "content": "Hel"}), chunk(choices=None), chunk({"content": "lo"}, "stop"))
    response = answer(body, streamed=streamed)
    assert [p.content for p in response.parts] == ["Hello"]  # type: ignore[union-attr]
    assert response.finish_reason == "stop"


@STREAMED
def test_a_responses_stream_ending_incomplete_says_length(streamed: bool) -> None:
    body = (REALWORLD / "openai-responses" / "openai-gpt-4o-incomplete-max-output-tokens.sse").read_bytes()
    response = answer(body, "openai-responses", streamed)
    assert response.finish_reason == "length"
    assert response.provider_details == {"finish_reason": "max_output_tokens"}
    assert response.parts  # what came before the cut is kept


def test_a_responses_stream_ending_failed_raises() -> None:
    async def main() -> None:
        with ScriptedServer([stream_error("the model failed", type="server_error", partial="Half")]) as server:
            model = msgwire_model("openai-responses", server.url)
            try:
                with pytest.raises(MODEL_ERRORS, match="the model failed"):
                    await respond(model, True)
            finally:
                await model.msgwire_provider.aclose()

    asyncio.run(main())


@STREAMED
def test_usage_sent_twice_is_counted_once(streamed: bool) -> None:
    body = (REALWORLD / "openai" / "groq-kimi-k2-parallel-tools-x-groq.sse").read_bytes()
    usage = answer(body, streamed=streamed).usage
    assert (usage.input_tokens, usage.output_tokens) == (201, 58)  # the stream's usage chunk, once


@STREAMED
def test_parallel_calls_that_all_say_index_0_stay_two_calls(streamed: bool) -> None:
    body = sse(
        chunk(call(0, "call_a", "get_weather", '{"city":"A"}')),
        chunk(call(0, "call_b", "get_weather", '{"city":"B"}')),
        chunk({}, "tool_calls"),
    )
    parts = answer(body, streamed=streamed).parts
    assert [(p.tool_call_id, p.args) for p in parts if isinstance(p, ToolCallPart)] == [
        ("call_a", '{"city":"A"}'),
        ("call_b", '{"city":"B"}'),
    ]


@STREAMED
def test_a_call_whose_arguments_never_came_has_an_empty_object(streamed: bool) -> None:
    body = sse(chunk(call(0, "call_x", "now", None)), chunk({}, "tool_calls"))
    (part,) = answer(body, streamed=streamed).parts
    assert isinstance(part, ToolCallPart)
    assert (part.tool_name, part.args, part.tool_call_id) == ("now", "{}", "call_x")


def test_an_error_inside_the_stream_raises_and_is_not_a_reply() -> None:
    async def main() -> None:
        with ScriptedServer([stream_error("overloaded", type="server_error", partial="It is")]) as server:
            model = msgwire_model("openai", server.url)
            try:
                with pytest.raises(ModelHTTPError, match="overloaded") as raised:
                    await respond(model, True)
            finally:
                await model.msgwire_provider.aclose()
        assert getattr(raised.value, "in_stream", True)  # (pydantic-ai 1.x has no in_stream)
        assert raised.value.status_code == 500  # as the same error before the stream

    asyncio.run(main())


def test_a_connection_cut_inside_a_tool_call_raises() -> None:
    body = sse(
        chunk(call(0, "call_c", "write_file", '{"path": "a.txt", "text": "hal')), chunk(call(0, None, None, 'f"}'))
    )
    cut = body.index(b"hal") + 2
    with pytest.raises(API_ERROR, match=r"source failed|closed|cut"):
        answer(body, close_after=cut)  # never a call with half its arguments passed on to the tool
