"""The scripted model server (``msgwire.testing``): what it writes is what the
providers' own SDKs read (the openai and anthropic clients, streamed and not), its error
bodies are what ``msgwire.from_response`` reads as the provider's error, and its script
(replies in turn, a responder, exhaustion, unknown paths) behaves as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx_sse
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
    stream_error,
    tool_call,
)
from tests._support.providers import LONG

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


# --- failures inside the stream, keep-alives, SSE-framed error bodies: as the SDKs read them ------


def test_the_openai_sdk_raises_the_in_band_error_of_a_chat_stream(server: ScriptedServer) -> None:
    server.add(stream_error("upstream overloaded", type="server_error", code=503, partial="It is 21 d"))
    texts: list[str] = []

    def read(chunks: Any) -> None:
        texts.extend(c.choices[0].delta.content or "" for c in chunks if c.choices)

    with openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client:
        chunks = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        with pytest.raises(openai.APIError) as failure:
            read(chunks)
    assert "".join(texts) == "It is 21 d"
    assert failure.value.message == "upstream overloaded"
    assert failure.value.body == {"message": "upstream overloaded", "type": "server_error", "param": None, "code": 503}


def test_the_openai_sdk_reads_the_in_band_failure_of_a_responses_stream(server: ScriptedServer) -> None:
    server.add(stream_error("the model failed", partial="It is"))
    with (
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
        client.responses.stream(model="m", input="hi") as stream,
    ):
        events = list(stream)
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    failed = events[-1]
    assert deltas == ["It is"]
    assert failed.type == "response.failed"
    assert failed.response.error is not None
    assert (failed.response.error.code, failed.response.error.message) == ("server_error", "the model failed")


def test_the_anthropic_sdk_raises_the_in_band_error_event(server: ScriptedServer) -> None:
    server.add(stream_error("Overloaded", type="overloaded_error", partial="It is"))
    with (
        anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.APIStatusError) as failure,
        client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream,
    ):
        for _ in stream:
            pass
    assert failure.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert stream.current_message_snapshot.content[0].text == "It is"  # type: ignore[union-attr]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_in_band_error_is_the_dialects_own_frame_after_the_partial_content(
    server: ScriptedServer, dialect: str
) -> None:
    server.add(stream_error("upstream overloaded", partial="It is 21 d"), stream_error("not streamed"))
    with httpx.Client(base_url=server.url) as client:
        streamed = client.post(_PATHS[dialect], json={"model": "m", "stream": True, "messages": []}).content
        plain = client.post(_PATHS[dialect].replace("streamGenerateContent?alt=sse", "generateContent"), json={})
    with pytest.raises(ProviderError) as failure:
        msgwire.assemble(streamed, dialect)
    assert failure.value.provider_message == "upstream overloaded"
    assert failure.value.partial_message is not None
    assert failure.value.partial_message.text == "It is 21 d"
    assert plain.status_code == 200
    with pytest.raises(ProviderError) as in_body:
        msgwire.from_response(plain.content, dialect)
    assert in_body.value.provider_message == "not streamed"


_PATHS = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/m:streamGenerateContent?alt=sse",
    "ollama": "/api/chat",
}


def test_keep_alives_go_between_events_and_the_sdks_skip_them(server: ScriptedServer) -> None:
    server.add(reply(MESSAGE, delay=0.05, keepalive=0.01), reply(MESSAGE, delay=0.05, keepalive=0.01))
    hi: Any = [{"role": "user", "content": "hi"}]
    with (
        anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0) as claude,
        claude.messages.stream(model="m", max_tokens=100, messages=hi) as stream,
    ):
        final = stream.get_final_message()
    with (
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
        client.chat.completions.stream(model="m", messages=hi) as chat,
    ):
        completion = chat.get_final_completion()
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert completion.choices[0].message.content == MESSAGE.text
    for received in server.wait(2):
        assert received.keepalives > 0
        assert received.completed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_hold_with_keep_alives_starts_after_a_whole_event(server: ScriptedServer, dialect: str) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, hold_after=len(data) // 2, keepalive=0.02))
    received = b""
    with (
        httpx.Client(base_url=server.url) as client,
        client.stream("POST", _PATHS[dialect], json={"model": "m", "stream": True, "messages": []}) as response,
    ):
        for chunk in response.iter_raw():
            received += chunk
            if server.requests[0].keepalives >= 2:
                break
    (record,) = server.wait(1)
    keepalive, event_end = (b"\n", (b"\n",)) if dialect == "ollama" else (b": keep-alive\n\n", (b"\n\n", b"\r\n\r\n"))
    assert 0 < record.bytes_sent <= len(data) // 2
    assert data[: record.bytes_sent].endswith(event_end)  # the hold starts after a whole event
    assert received.startswith(data[: record.bytes_sent] + keepalive)
    assert record.client_closed


def test_an_sse_framed_error_body_is_read_by_httpx_sse(server: ScriptedServer) -> None:
    server.add(error(500, "upstream failed", type="internal_server_error", code="500", sse=True))
    with (
        httpx.Client(base_url=server.url) as client,
        httpx_sse.connect_sse(client, "POST", "/v1/responses", json={"model": "m", "stream": True}) as source,
    ):
        events = list(source.iter_sse())
        status = source.response.status_code
    assert status == 500
    assert [e.json() for e in events] == [
        {"error": {"message": "upstream failed", "type": "internal_server_error", "param": None, "code": "500"}}
    ]
