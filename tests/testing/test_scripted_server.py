"""The scripted model server (``msgwire.testing``): what it writes is what the
providers' own SDKs read (the openai and anthropic clients, streamed and not), its error
bodies are what ``msgwire.from_response`` reads as the provider's error, and its script
(replies in turn, a responder, exhaustion, unknown paths) behaves as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx
import msgspec
import openai
import pytest

import msgwire
from msgwire import AssistantMessage, ProviderError, TextBlock, ThinkingBlock, Usage
from msgwire.testing import (
    Received,
    ScriptedServer,
    error,
    error_body,
    recorded,
    reply,
    stream_bytes,
    tool_call,
)

DIALECTS = ("openai", "openai-responses", "anthropic", "gemini", "ollama")
WIRE = Path(__file__).resolve().parents[1] / "fixtures" / "wire"
MESSAGE = AssistantMessage(
    content=[
        ThinkingBlock(thinking="Check both.", signature="c2lnbmF0dXJl"),
        TextBlock(text="Looking — 2 files."),
        tool_call("read_file", {"path": "a.txt"}, id="call_a"),
        tool_call("grep", {"q": "TODO", "n": 3}, id="call_b"),
    ],
    stop_reason="tool_use",
    usage=Usage(input_tokens=12, output_tokens=34),
    model="scripted-1",
)
CALLS = [("call_a", "read_file", {"path": "a.txt"}), ("call_b", "grep", {"q": "TODO", "n": 3})]


@pytest.fixture
def server() -> Any:
    with ScriptedServer() as scripted:
        yield scripted
    assert scripted.errors == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_scripted_message_streams_back_as_itself(dialect: str) -> None:
    back = msgwire.assemble(stream_bytes(MESSAGE, dialect), dialect)
    assert back.text == MESSAGE.text
    assert back.thinking == MESSAGE.thinking
    assert [(c.id, c.name, c.parsed_arguments()) for c in back.tool_calls] == CALLS
    assert (back.stop_reason, back.usage, back.model) == ("tool_use", MESSAGE.usage, "scripted-1")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_error_bodies_read_as_the_providers_error(dialect: str) -> None:
    for status in (400, 401, 429, 500, 529):
        with pytest.raises(ProviderError) as failure:
            msgwire.from_response(error_body(dialect, status, None, "went wrong"), dialect)
        assert failure.value.provider_message == "went wrong"
        assert failure.value.error_type


def test_the_openai_sdk_reads_the_scripted_chat_stream_and_reply(server: ScriptedServer) -> None:
    server.add(reply(MESSAGE), reply(MESSAGE))
    with openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client:
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
            final = stream.get_final_completion()
        plain = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    for completion in (final, plain):
        choice = completion.choices[0]
        assert choice.message.content == MESSAGE.text
        assert choice.finish_reason == "tool_calls"
        calls = [
            (c.id, c.function.name, msgspec.json.decode(c.function.arguments)) for c in choice.message.tool_calls or []
        ]  # type: ignore[union-attr]
        assert calls == CALLS
        assert completion.usage is not None
        assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 34)


def test_the_openai_sdk_reads_the_scripted_responses_stream(server: ScriptedServer) -> None:
    server.add(reply(MESSAGE))
    with (
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
        client.responses.stream(model="m", input="hi") as stream,
    ):
        response = stream.get_final_response()
    assert response.output_text == MESSAGE.text
    calls = [
        (i.call_id, i.name, msgspec.json.decode(i.arguments)) for i in response.output if i.type == "function_call"
    ]
    assert calls == CALLS


def test_the_anthropic_sdk_reads_the_scripted_stream_and_reply(server: ScriptedServer) -> None:
    server.add(reply(MESSAGE), reply(MESSAGE))
    with anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0) as client:
        with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
            final = stream.get_final_message()
        plain = client.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    for message in (final, plain):
        assert [b.type for b in message.content] == ["thinking", "text", "tool_use", "tool_use"]
        assert message.content[0].signature == "c2lnbmF0dXJl"  # type: ignore[union-attr]
        assert [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"] == CALLS
        assert message.stop_reason == "tool_use"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 34)


def test_sdk_errors_carry_the_scripted_status_and_request_id(server: ScriptedServer) -> None:
    server.add(error(401, "bad key"))
    with (
        anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.AuthenticationError) as failure,
    ):
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert failure.value.request_id == "req_scripted_0001"
    assert "bad key" in str(failure.value)


def test_replies_are_served_in_turn_then_the_script_is_exhausted(server: ScriptedServer) -> None:
    server.add(reply("first"), reply("second"))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(base_url=server.url) as client:
        texts = [
            client.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"] for _ in range(2)
        ]
        exhausted = client.post("/v1/chat/completions", json=body)
        unknown = client.post("/v2/elsewhere", json=body)
    assert texts == ["first", "second"]
    assert exhausted.status_code == 400
    assert exhausted.json()["error"]["type"] == "script_exhausted"
    assert unknown.status_code == 404
    assert [r.dialect for r in server.wait(4)] == ["openai", "openai", "openai", None]
    assert server.pending == 0


def test_a_responder_answers_every_request() -> None:
    def echo(received: Received) -> Any:
        last = received.json()["messages"][-1]["content"]
        return reply(f"you said: {last}")

    with ScriptedServer(respond=echo) as server, httpx.Client(base_url=server.url) as client:
        answer = client.post(
            "/api/chat", json={"model": "m", "stream": False, "messages": [{"role": "user", "content": "ping"}]}
        )
    assert answer.json()["message"]["content"] == "you said: ping"
    assert server.requests[0].model == "m"


def test_a_recording_for_a_non_streamed_request_is_served_assembled(server: ScriptedServer) -> None:
    data = (WIRE / "anthropic" / "text-minimal.sse").read_bytes()
    server.add(recorded(data, "anthropic"))
    with httpx.Client(base_url=server.url) as client:
        body = client.post("/v1/messages", json={"model": "m", "max_tokens": 5, "messages": []}).json()
    assert msgwire.from_response(body, "anthropic").text == msgwire.assemble(data, "anthropic").text


def test_wait_times_out_when_nothing_came(server: ScriptedServer) -> None:
    with pytest.raises(TimeoutError):
        server.wait(1, timeout=0.05)
