"""Providers against a real HTTP server on 127.0.0.1: recorded streams of every dialect read as
``msgwire.stream`` reads the same bytes, a scripted conversation with tool calls over two
turns, non-streamed replies, and the async calls. Every request is checked against the SDK
param types when each test ends (``conftest.server``)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire import (
    AssistantMessage,
    MessageStart,
    ProviderError,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolCallBegin,
    ToolCallBlock,
    ToolCallEnd,
    tool_result,
    user,
)
from msgwire.formats import from_request
from msgwire.harness.providers import HTTPProvider, Request
from msgwire.testing import ScriptedServer, recorded, reply, tool_call
from tests._support.providers import DIALECTS

WIRE = Path(__file__).resolve().parents[2] / "fixtures" / "wire"
EPOCH = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
Connect = Callable[..., HTTPProvider]


def _dialect(path: Path) -> str:
    if path.parent.name == "openai":
        return "openai-responses" if path.name.startswith("responses-") else "openai"
    return "openai" if path.parent.name == "openai-compat" else path.parent.name


RECORDINGS = sorted(p for p in WIRE.glob("*/*") if p.suffix in (".sse", ".ndjson"))
TOOLS = [
    Tool(
        name="read_file",
        description="Read a file",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    Tool(name="grep", description="Search", parameters={"type": "object", "properties": {"q": {"type": "string"}}}),
]


def _call_id(call_id: str, data: bytes) -> str:
    """A call id the stream carried, or a mark for one the decoder made up (from the message id,
    different for each decoding)."""
    return call_id if call_id.encode() in data else "<made up>"


def _same(message: AssistantMessage, data: bytes) -> AssistantMessage:
    """The message without what each decoding makes up anew (its id and time, call ids)."""
    content = [
        msgspec.structs.replace(b, id=_call_id(b.id, data)) if isinstance(b, ToolCallBlock) else b
        for b in message.content
    ]
    return msgspec.structs.replace(message, id="-", timestamp=EPOCH, content=content)


def _events(events: list[Any], data: bytes) -> list[Any]:
    same = []
    for e in events:
        if isinstance(e, MessageStart):
            e = msgspec.structs.replace(e, message_id=None)
        elif isinstance(e, ToolCallBegin):
            e = msgspec.structs.replace(e, id=_call_id(e.id, data))
        elif isinstance(e, ToolCallEnd):
            e = msgspec.structs.replace(e, block=msgspec.structs.replace(e.block, id=_call_id(e.block.id, data)))
        same.append(e)
    return same


def _expected(data: bytes, dialect: str) -> tuple[list[Any], AssistantMessage, type[Exception] | None]:
    """What ``msgwire.stream`` makes of the same bytes: events, message, and error type."""
    reference = msgwire.stream(data, dialect)
    events: list[Any] = []
    try:
        events.extend(reference)
    except msgwire.StreamError as failure:
        return events, reference.message(), type(failure)
    return events, reference.message(), None


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_recorded_stream_reads_as_msgwire_stream_reads_its_bytes(
    server: ScriptedServer, connect: Connect, path: Path
) -> None:
    dialect = _dialect(path)
    data = path.read_bytes()
    want_events, want_message, want_error = _expected(data, dialect)
    server.add(recorded(data, dialect))
    events: list[Any] = []
    with connect(dialect).stream(Request(messages=[user("hi")], max_tokens=64)) as stream:
        if want_error is None:
            events.extend(stream)
        else:
            with pytest.raises(want_error) as failure:
                events.extend(stream)
            assert _same(failure.value.partial_message, data) == _same(want_message, data)
            if isinstance(failure.value, ProviderError):  # reported inside a 200 stream
                assert failure.value.status is None
                assert failure.value.request_id == "req_scripted_0001"
        assert _events(events, data) == _events(want_events, data)
        assert _same(stream.message(), data) == _same(want_message, data)
        assert stream.request_id == "req_scripted_0001"
    assert stream.message().stop_reason == want_message.stop_reason  # not "aborted": it ended
    (received,) = server.wait(1)
    if want_error is None:
        assert received.completed
        assert received.bytes_sent == len(data)
    else:  # the client stops at the error: what the server sent after it may not have gone out
        assert received.bytes_sent <= len(data)


def _conversation(dialect: str, server: ScriptedServer, connect: Connect) -> list[AssistantMessage]:
    """Two turns: the model calls two tools, gets their results, and answers."""
    thinking = ThinkingBlock(thinking="Two lookups.", signature="c2ln") if dialect != "openai" else None
    first = [tool_call("read_file", {"path": "notes.txt"}), tool_call("grep", {"q": "TODO"})]
    server.add(
        reply(
            [thinking, TextBlock(text="Let me look."), *first] if thinking else [TextBlock(text="Let me look."), *first]
        )
    )
    server.add(reply("notes.txt has 2 TODOs."))
    model = connect(dialect)
    settings: dict[str, Any] = {"tools": TOOLS, "max_tokens": 200, "temperature": 0.5}
    question = user("What is left to do?")
    with model.stream(Request(messages=[question], system_prompt="Be brief.", **settings)) as stream:
        calls = stream.until_done()
    results = [tool_result(call.id, f"result of {call.name}", tool_name=call.name) for call in calls.tool_calls]
    history = [question, calls, *results]
    with model.stream(Request(messages=history, system_prompt="Be brief.", **settings)) as stream:
        answer = stream.until_done()
    return [calls, answer]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_scripted_conversation_with_tool_calls(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    calls, answer = _conversation(dialect, server, connect)
    assert [(c.name, c.parsed_arguments()) for c in calls.tool_calls] == [
        ("read_file", {"path": "notes.txt"}),
        ("grep", {"q": "TODO"}),
    ]
    assert calls.stop_reason == "tool_use"
    assert calls.text == "Let me look."
    assert answer.text == "notes.txt has 2 TODOs."
    assert answer.stop_reason == "end_turn"
    assert answer.model == "test-model"  # the server answers with the model asked for
    first, second = server.wait(2)
    assert (first.dialect, first.stream, second.dialect) == (dialect, True, dialect)
    # What the second call sent: the question, the calls, and both results, as the dialect writes them.
    sent = from_request(second.json(), dialect)
    assert sent.system_prompt == "Be brief."
    kinds = [m.type for m in sent.messages]
    assert kinds[:2] == ["user", "assistant"]
    assert sorted(m.tool_call_id for m in sent.messages if m.type == "tool_result") == sorted(
        c.id for c in sent.messages[1].tool_calls
    )
    assert [m.text for m in sent.messages if m.type == "tool_result"] == ["result of read_file", "result of grep"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_complete_reads_a_non_streamed_reply(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    server.add(reply([TextBlock(text="Sure."), tool_call("grep", {"q": "x"}, id="call_7")]))
    message = connect(dialect).complete(Request(messages=[user("go")], tools=TOOLS, max_tokens=50))
    assert message.text == "Sure."
    assert [(c.id, c.name, c.parsed_arguments()) for c in message.tool_calls] == [("call_7", "grep", {"q": "x"})]
    (received,) = server.wait(1)
    assert received.stream is False


@pytest.mark.parametrize("dialect", DIALECTS)
def test_astream_and_acomplete(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    server.add(reply("one"), reply("two"), reply("three"))
    model = connect(dialect)
    request = Request(messages=[user("count")], max_tokens=20)

    async def run() -> list[str]:
        texts = []
        async with model.astream(request) as stream:  # sent when entered, closed on exit
            texts.append("".join([e.text async for e in stream if e.type == "text_delta"]))
            assert stream.request_id == "req_scripted_0001"
        stream = await model.astream(request)  # or awaited
        texts.append((await stream.until_done()).text)
        await stream.aclose()
        texts.append((await model.acomplete(request)).text)
        await model.aclose()
        return texts

    assert asyncio.run(run()) == ["one", "two", "three"]
    assert [r.stream for r in server.wait(3)] == [True, True, False]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_astream_sends_nothing_until_awaited(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    pending = connect(dialect).astream(Request(messages=[user("hi")], max_tokens=5))
    assert server.requests == []
    del pending


def test_a_provider_reads_any_dialect_the_server_transcodes(server: ScriptedServer, connect: Connect) -> None:
    """A recorded Anthropic stream served to an OpenAI client, as a gateway would rewrite it."""
    data = (WIRE / "anthropic" / "thinking-then-tool-use-empty-args.sse").read_bytes()
    server.add(recorded(data, "anthropic"))
    with connect("openai").stream(Request(messages=[user("hi")])) as stream:
        message = stream.until_done()
    want = msgwire.assemble(data, "anthropic")
    assert [(c.id, c.name) for c in message.tool_calls] == [(c.id, c.name) for c in want.tool_calls]
    assert message.text == want.text
