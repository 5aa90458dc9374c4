"""Numbers no double holds, integers beyond 64 bits and the spellings a double changes, in
responses and requests (docs/wire.md, "Numbers"): the provider JSON msgwire keeps (raw items and
blocks, tool-call arguments) comes out and goes back byte for byte; a typed number its field
cannot hold is a ``DecodeError`` placed at it; request settings are values."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import msgwire
from msgwire import (
    DecodeError,
    Request,
    ServerToolCallBlock,
    Tool,
    ToolCallBlock,
    UnknownBlock,
    ValidationError,
    formats,
    user,
)

FINDING = Path(__file__).parents[2] / "fuzz" / "regressions" / "response" / "number-out-of-range-in-a-raw-item"
NUMBERS = ["1e400", "-1e400", "1E+309", "1e-400", "123456789012345678901234567890", "-0", "0e0", "1.50"]


def test_the_fuzzed_response_keeps_its_1e400() -> None:
    """The fuzz finding: a Responses body whose one output item msgwire has no type for holds
    ``"typeary": [1e400]`` (the fuzz input is a mode byte, then the body)."""
    body = FINDING.read_bytes()[1:]
    message = msgwire.from_response(body, "openai-responses")
    (block,) = message.content
    assert isinstance(block, UnknownBlock)
    start = body.index(b'{\n      "id": "rs_')
    item = body[start : body.index(b"\n    }", start) + 6]
    assert b'"typeary": [1e400]' in item
    # kept whole, as the body has it, in a provider part of the dialect
    assert block.raw == b'{"type":"provider_part","dialect":"openai-responses","part":' + item + b"}"
    assert msgwire.loads(msgwire.dumps(message), type=msgwire.AssistantMessage) == message
    # written back as it came, and read again the same
    written = msgwire.to_response_json(message, "openai-responses")
    assert b'"output":[' + item + b"]" in written
    assert msgwire.from_response(written, "openai-responses").content == message.content
    # decoding it to Python is where 1e400 cannot go: no float holds it
    with pytest.raises(ValueError, match="out of range"):
        block.data()


def _responses(n: str) -> dict[str, bytes]:
    """A body per dialect holding ``n`` in a tool call's arguments and in JSON msgwire keeps raw."""
    return {
        "openai": (
            '{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":'
            '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":'
            '{"name":"f","arguments":' + json.dumps('{"x":' + n + "}") + '}}]},"finish_reason":"tool_calls"}]}'
        ).encode(),
        "anthropic": (
            '{"id":"msg_1","type":"message","role":"assistant","model":"m","content":['
            '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"x":' + n + "}},"
            '{"type":"container_upload","x":' + n + "},"
            '{"type":"tool_use","id":"toolu_1","name":"f","input":{"x":' + n + "}}],"
            '"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}'
        ).encode(),
        "openai-responses": (
            '{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":['
            '{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","x":' + n + "}},"
            '{"type":"zz","id":"z","x":[' + n + "]},"
            '{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":'
            + json.dumps('{"x":' + n + "}")
            + "}]}"
        ).encode(),
        "gemini": (
            '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":' + n + "}}}]},"
            '"finishReason":"STOP","index":0}],"modelVersion":"m","responseId":"r"}'
        ).encode(),
        "ollama": (
            '{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"",'
            '"tool_calls":[{"function":{"name":"f","arguments":{"x":' + n + '}}}]},"done":true,"done_reason":"stop"}'
        ).encode(),
    }


@pytest.mark.parametrize("n", NUMBERS)
@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_responses_keep_the_numbers_of_what_they_keep(dialect: str, n: str) -> None:
    message = msgwire.from_response(_responses(n)[dialect], dialect)  # type: ignore[arg-type]
    (call,) = [b for b in message.content if isinstance(b, ToolCallBlock)]
    assert call.arguments == '{"x":' + n + "}"
    kept = [b for b in message.content if isinstance(b, (UnknownBlock, ServerToolCallBlock))]
    for block in kept:
        raw = block.raw if isinstance(block, UnknownBlock) else bytes(block.raw)
        assert n.encode() in raw
    if dialect == "openai-responses":
        server = next(b for b in message.content if isinstance(b, ServerToolCallBlock))
        assert server.arguments == '{"type":"search","x":' + n + "}"
    written = msgwire.to_response_json(message, dialect)  # type: ignore[arg-type]
    assert written.count(n.encode()) >= 1 + len(kept)
    again = msgwire.from_response(written, dialect)  # type: ignore[arg-type]
    if dialect not in ("gemini", "ollama"):  # which make up the call ids their bodies lack
        assert again.content == message.content


@pytest.mark.parametrize("n", ["1e400", "-1e400", "123456789012345678901234567890", "-1", "1.5", "1e-400"])
@pytest.mark.parametrize(
    ("dialect", "body", "path"),
    [
        ("openai", '{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":N}}', "$.usage.prompt_tokens"),
        ("anthropic", '{"content":[],"usage":{"input_tokens":N}}', "$.usage.input_tokens"),
        ("openai-responses", '{"status":"completed","output":[],"usage":{"input_tokens":N}}', "$.usage.input_tokens"),
        ("gemini", '{"candidates":[],"usageMetadata":{"promptTokenCount":N}}', "$.usageMetadata.promptTokenCount"),
        ("ollama", '{"message":{"content":"hi"},"done":true,"prompt_eval_count":N}', "$.prompt_eval_count"),
    ],
)
def test_a_token_count_its_field_cannot_hold_is_a_decode_error_at_the_number(
    dialect: str, body: str, path: str, n: str
) -> None:
    data = body.replace("N", n).encode()
    with pytest.raises(DecodeError) as failure:
        msgwire.from_response(data, dialect)  # type: ignore[arg-type]
    assert failure.value.path == path
    at = data.index(n.encode())
    assert failure.value.offset is not None
    assert at <= failure.value.offset <= at + len(n)


def test_a_creation_time_out_of_range() -> None:
    body = '{"id":"c","created":N,"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}'
    with pytest.raises(DecodeError, match="out of range") as failure:
        msgwire.from_response(body.replace("N", "1e400"), "openai")
    assert failure.value.path == "$.created"
    # a double that is no time of years 1 to 9999 (milliseconds): the time the body was read
    before = datetime.now(UTC)
    read = msgwire.from_response(body.replace("N", "1785273853000"), "openai")
    assert read.timestamp >= before.replace(microsecond=0)
    assert msgwire.from_response(body.replace("N", "1785273853"), "openai").timestamp.year == 2026


# --- requests ------------------------------------------------------------------------------------


def _conversation(n: str) -> dict[str, str]:
    """A request body per dialect whose conversation holds ``n`` in a tool call's arguments and, where
    the dialect has parts msgwire keeps whole, in one of those."""
    args = json.dumps('{"x":' + n + "}")
    return {
        "openai": '{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"x":' + n + "}}]},"
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":'
        '{"name":"f","arguments":' + args + '}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]}',
        "anthropic": '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":'
        '[{"type":"tool_use","id":"t","name":"f","input":{"x":' + n + '}},{"type":"zz","x":' + n + "}]},"
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}',
        "gemini": '{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":'
        '[{"functionCall":{"name":"f","args":{"x":' + n + "}}}]},"
        '{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":"ok"}}}]}]}',
        "ollama": '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"",'
        '"tool_calls":[{"function":{"name":"f","arguments":{"x":' + n + "}}}]},"
        '{"role":"tool","content":"ok","tool_name":"f"}]}',
        "openai-responses": '{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},'
        '{"type":"function_call","call_id":"c","name":"f","arguments":' + args + '},{"type":"zz","x":' + n + "},"
        '{"type":"function_call_output","call_id":"c","output":"ok"}]}',
    }


@pytest.mark.parametrize("n", NUMBERS)
@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_a_request_conversation_keeps_its_numbers(dialect: str, n: str) -> None:
    body = _conversation(n)[dialect].encode()
    session = formats.from_request(body, dialect)  # type: ignore[arg-type]
    (call,) = [b for m in session.messages for b in getattr(m, "content", []) if isinstance(b, ToolCallBlock)]
    assert call.arguments == '{"x":' + n + "}"
    again = formats.to_request_json(session, dialect)  # type: ignore[arg-type]
    assert again.count(n.encode()) == body.count(n.encode())
    assert formats.to_request_json(formats.from_request(again, dialect), dialect) == again  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dialect", "body", "n"),
    [
        ("openai", '{"messages":[],"temperature":1e400}', "1e400"),
        ("openai", '{"messages":[],"seed":123456789012345678901234567890}', "123456789012345678901234567890"),
        ("openai", '{"messages":[],"metadata":{"a":[1,-1E+309]}}', "-1E+309"),
        ("gemini", '{"contents":[],"generationConfig":{"topK":18446744073709551616}}', "18446744073709551616"),
        ("anthropic", '{"messages":[],"tools":[{"name":"f","input_schema":{"maximum":1e999}}]}', "1e999"),
    ],
)
def test_request_settings_refuse_numbers_a_value_cannot_hold(dialect: str, body: str, n: str) -> None:
    with pytest.raises(DecodeError, match="out of range") as failure:
        formats.read_request(body, dialect)  # type: ignore[arg-type]
    assert failure.value.offset == body.index(n)


def test_a_setting_its_field_cannot_hold_stays_an_extra_field() -> None:
    body = b'{"messages":[{"role":"user","content":"hi"}],"max_tokens":1e30,"temperature":1e-400}'
    request = formats.read_request(body, "openai")
    assert request.max_tokens is None
    assert request.temperature == 0.0
    assert request.extra is not None
    assert request.extra.fields == {"max_tokens": 1e30}
    assert json.loads(formats.to_request_json(request, "openai"))["max_tokens"] == 1e30
    assert [loss.reason for loss in formats.convert_request(request, "anthropic").report.entries] == [
        "openai's `max_tokens` has no equivalent in anthropic"
    ]


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"temperature": math.inf}, "$.temperature"),
        ({"top_p": math.nan}, "$.top_p"),
        ({"max_tokens": 2**64}, "$.max_tokens"),
        ({"metadata": {"a": [1, -(2**63) - 1]}}, "$.metadata.a[1]"),
        (
            {"tools": [Tool(name="f", parameters={"type": "object", "maximum": -math.inf})]},
            "$.tools[0].parameters.maximum",
        ),
    ],
)
def test_writing_a_request_refuses_numbers_json_cannot_carry(fields: dict[str, Any], path: str) -> None:
    request = Request(model="m", messages=[user("hi")], **fields)
    with pytest.raises(ValidationError) as failure:
        formats.to_request_json(request, "openai")
    assert failure.value.path == path
    # the edges themselves go through
    edges = Request(model="m", messages=[user("hi")], temperature=1e308, metadata={"a": [-(2**63), 2**64 - 1]})
    written = json.loads(formats.to_request_json(edges, "openai"))
    assert written["metadata"] == {"a": [-(2**63), 2**64 - 1]}
