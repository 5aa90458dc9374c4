"""Numbers no double holds, integers beyond 64 bits and the spellings a double changes, in the
streams of every dialect (docs/wire.md, "Numbers"): a tool call's arguments and a block msgwire
keeps raw come out as they were sent, byte for byte; a token count that no u64 holds is a
``MalformedStreamError`` placed at the number."""

from __future__ import annotations

import json

import pytest

import msgwire
from msgwire import MalformedStreamError, ToolCallBlock, ToolCallDelta, UnknownBlock

NUMBERS = [
    "1e400",
    "-1e400",
    "1E+309",
    "1e-400",
    "123456789012345678901234567890",
    "-9223372036854775809",
    "-0",
    "0e0",
    "1.50",
]
TOO_BIG_COUNTS = ["1e400", "123456789012345678901234567890", "18446744073709551616", "1E+309"]


def _sse(*events: tuple[str, dict[str, object] | str]) -> str:
    out = ""
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out += (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
    return out


def stream(dialect: str, n: str, tokens: str = "3") -> tuple[bytes, str]:
    """A stream of ``dialect`` whose one tool call has the arguments ``{"x": n}`` (and, where the
    dialect has blocks msgwire keeps raw, one such block holding ``n``), its input tokens
    ``tokens``; and the arguments as sent."""
    args = '{"x": ' + n + "}"
    if dialect == "openai":
        head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": args}}
        body = _sse(
            ("", {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]}),
            ("", {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ("", json.dumps({**head, "choices": []})[:-1] + ',"usage":{"prompt_tokens":' + tokens + "}}"),
            ("", "[DONE]"),
        )
    elif dialect == "anthropic":
        start = '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":' + tokens + "}}}"
        body = _sse(
            ("message_start", start),
            (
                "content_block_start",
                '{"type":"content_block_start","index":0,"content_block":{"type":"zz","x":' + n + "}}",
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": args[:5]},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": args[5:]},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}},
            ),
            ("message_stop", {"type": "message_stop"}),
        )
    elif dialect == "openai-responses":
        response = {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": "in_progress",
            "model": "m",
            "output": [],
        }
        call = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "f",
            "arguments": "",
            "status": "in_progress",
        }
        done = {**call, "arguments": args, "status": "completed"}
        completed = json.dumps({**response, "status": "completed"})[:-1] + ',"usage":{"input_tokens":' + tokens + "}}"
        body = _sse(
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                '{"type":"response.output_item.added","output_index":0,"item":{"type":"zz","id":"z","x":[' + n + "]}}",
            ),
            (
                "response.output_item.done",
                '{"type":"response.output_item.done","output_index":0,"item":{"type":"zz","id":"z","x":[' + n + "]}}",
            ),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 1, "item": call}),
            (
                "response.function_call_arguments.delta",
                {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": args},
            ),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 1, "item": done}),
            ("response.completed", '{"type":"response.completed","response":' + completed + "}"),
        )
    elif dialect == "gemini":
        part = '{"functionCall":{"name":"f","args":' + args + "}}"
        usage = '"usageMetadata":{"promptTokenCount":' + tokens + ',"candidatesTokenCount":1}'
        candidate = '{"content":{"role":"model","parts":[' + part + ']},"finishReason":"STOP","index":0}'
        body = _sse(("", '{"candidates":[' + candidate + "]," + usage + ',"modelVersion":"m","responseId":"r"}'))
    else:
        call = '{"function":{"name":"f","arguments":' + args + "}}"
        message = '{"role":"assistant","content":"","tool_calls":[' + call + "]}"
        body = (
            '{"model":"m","created_at":"2026-01-01T00:00:00Z","message":' + message + ',"done":true,'
            '"done_reason":"stop","prompt_eval_count":' + tokens + ',"eval_count":1}\n'
        )
    return body.encode(), args


DIALECTS = ["openai", "anthropic", "openai-responses", "gemini", "ollama"]


@pytest.mark.parametrize("n", NUMBERS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_arguments_and_raw_blocks_keep_their_numbers(dialect: str, n: str) -> None:
    data, args = stream(dialect, n)
    decoder = msgwire.Decoder(dialect)
    events = decoder.feed(data) + decoder.end()
    message = decoder.message()
    (call,) = [b for b in message.content if isinstance(b, ToolCallBlock)]
    # the arguments as the model sent them (Gemini and Ollama send an object: its text)
    assert call.arguments == args
    assert "".join(e.fragment for e in events if isinstance(e, ToolCallDelta)) == call.arguments
    raw = [b for b in message.content if isinstance(b, UnknownBlock)]
    if dialect in ("anthropic", "openai-responses"):
        (kept,) = raw
        assert n.encode() in kept.raw
        assert msgwire.loads(msgwire.dumps(message), type=msgwire.AssistantMessage) == message
    # the same stream through the fast path
    assert msgwire.assemble([data], dialect).content == message.content


@pytest.mark.parametrize("n", TOO_BIG_COUNTS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_token_count_no_u64_holds_is_an_error_at_the_number(dialect: str, n: str) -> None:
    data, _ = stream(dialect, "1", tokens=n)
    with pytest.raises(MalformedStreamError) as failure:
        msgwire.assemble([data], dialect)
    at = data.index(n.encode())
    assert failure.value.offset is not None
    assert at <= failure.value.offset <= at + len(n), str(failure.value)
    assert isinstance(failure.value, ValueError)
