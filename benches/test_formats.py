"""Request formats: ``msgwire.formats.to_request_json`` of the 900-message session beside the
conversion people write by hand (Python dicts, then ``json.dumps``), same session, same run.

Group ``to-request-openai``: msgwire writes the Chat Completions ``messages`` in Rust from the
canonical JSON; ``rebuild_after_one_append`` is the same call after one message was appended,
with the conversation's ``formats.RequestCache`` (what the agent loop does each step: its ratio
is printed below 1, the fraction of a full build it costs); the hand-written version walks the
Structs and builds the same dicts; and pydantic-ai maps the same conversation (its own message
types, from ``benches.workload``) with ``OpenAIChatModel._map_messages``, the step it runs
before every request, then ``json.dumps`` as its client does. The untimed checks compare the
payloads after decoding, so all do the same work.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import msgspec
import pytest

import msgwire
from benches.workload import build
from msgwire.cli.workloads import edit_arguments, hostile_text

# rounds of the re-build bench (each needs its own set-up build): fewer under --benchmark-disable
ROUNDS = 200


def _by_hand(session: msgwire.Session) -> bytes:
    """A careful hand-written OpenAI conversion: system first, text joined, tool calls with
    their raw arguments, one tool message per result (results already follow their calls)."""
    messages: list[dict[str, Any]] = []
    if session.system_prompt:
        messages.append({"role": "system", "content": session.system_prompt})
    for message in session.messages:
        if isinstance(message, msgwire.UserMessage):
            parts: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, msgwire.TextBlock):
                    parts.append({"type": "text", "text": block.text})
                elif isinstance(block, msgwire.ImageBlock) and isinstance(block.source, msgwire.UrlSource):
                    parts.append({"type": "image_url", "image_url": {"url": block.source.url}})
                elif isinstance(block, msgwire.FileReferenceBlock) and block.resolved_content is not None:
                    lines = f' lines="{block.start_line}-{block.end_line}"' if block.start_line else ""
                    text = f'<file path="{block.path}"{lines}>{block.resolved_content}</file>'
                    parts.append({"type": "text", "text": text})
            content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
            messages.append({"role": "user", "content": content})
        elif isinstance(message, msgwire.AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, msgwire.TextBlock))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [
                {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": b.arguments}}
                for b in message.content
                if isinstance(b, msgwire.ToolCallBlock)
            ]
            if calls:
                entry["tool_calls"] = calls
            messages.append(entry)
        elif isinstance(message, msgwire.ToolResultMessage):
            text = "".join(b.text for b in message.content if isinstance(b, msgwire.TextBlock))
            messages.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": text})
    return json.dumps({"messages": messages}, ensure_ascii=False).encode()


@pytest.fixture(scope="module")
def session() -> msgwire.Session:
    return build().session


@pytest.mark.benchmark(group="to-request-openai")
def test_to_request_openai_msgwire(benchmark: Any, session: msgwire.Session) -> None:
    body = benchmark(msgwire.formats.to_request_json, session, "openai")
    assert len(json.loads(body)["messages"]) > 800


@pytest.mark.benchmark(group="to-request-openai")
def test_to_request_openai_rebuild_after_one_append(benchmark: Any, session: msgwire.Session) -> None:
    """What an agent loop pays each step: the request of the session re-built, with the
    conversation's ``RequestCache``, after its last message was appended to the 899 before it
    (each round starts from a cache that just built the 899)."""
    cache = msgwire.formats.RequestCache()
    before = msgspec.structs.replace(session, messages=session.messages[:-1])

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        msgwire.formats.to_request_json(before, "openai", cache=cache)
        return (session, "openai"), {"cache": cache}

    body = benchmark.pedantic(msgwire.formats.to_request_json, setup=setup, rounds=ROUNDS)
    assert body == msgwire.formats.to_request_json(session, "openai")


@pytest.mark.benchmark(group="to-request-openai")
def test_to_request_openai_by_hand(benchmark: Any, session: msgwire.Session) -> None:
    body = benchmark(_by_hand, session)
    ours = json.loads(msgwire.formats.to_request_json(session, "openai"))["messages"]
    theirs = json.loads(body)["messages"]
    assert [m["role"] for m in theirs] == [m["role"] for m in ours]
    assert [m.get("tool_calls") for m in theirs] == [m.get("tool_calls") for m in ours]


@pytest.mark.benchmark(group="to-request-openai")
def test_to_request_openai_pydantic_ai(benchmark: Any) -> None:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    workload = build()
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="unused"))
    parameters = ModelRequestParameters()

    def convert() -> bytes:
        messages = asyncio.run(model._map_messages(workload.pydantic_ai, parameters))
        return json.dumps(messages, ensure_ascii=False).encode()

    body = benchmark(convert)
    ours = json.loads(msgwire.formats.to_request_json(workload.session, "openai"))["messages"]
    theirs = json.loads(body)
    # pydantic-ai merges consecutive results into one request and has no system_control: the
    # conversation is the same, message for message, from the first user turn on
    assert [m.get("tool_call_id") for m in theirs if m["role"] == "tool"] == [
        m["tool_call_id"] for m in ours if m["role"] == "tool"
    ]


# --- non-streamed responses -------------------------------------------------------------------
#
# Groups ``from-response-<dialect>`` and ``to-response-<dialect>``: one large reply (~1 MB:
# 300 KB of signed thinking, 300 KB of text, 200 tool calls of 2-20 KB arguments) as each
# provider's non-streamed body. Reading: ``msgwire.from_response`` of the body's bytes beside the
# official SDK's ``model_validate_json`` of the same bytes (its typed object, what
# ``client.chat.completions.create`` hands back). Writing: ``msgwire.to_response_json`` of the
# canonical message beside the SDK's ``model_dump_json`` of its object for the same body.

RESPONSE_DIALECTS = ("openai", "anthropic", "openai-responses")


def _large_reply(dialect: str) -> msgwire.AssistantMessage:
    """~1 MB as hostile as a real reply (``workloads.hostile_text``: escapes, non-ASCII, code):
    300 KB of signed thinking, 300 KB of text, 195 calls of ~2 KB and 5 of ~20 KB of code."""
    rng = random.Random(20261128)
    calls = [
        msgwire.ToolCallBlock(
            id=f"call_{i:024d}", name="edit_file", arguments=edit_arguments(rng, 20_000 if i % 40 == 0 else 2_000)
        )
        for i in range(200)
    ]
    thinking = msgwire.ThinkingBlock(thinking=hostile_text(rng, 300_000), signature="EqQBCkYIBxgCKkA" + "x" * 400)
    return msgwire.AssistantMessage(
        content=[thinking, msgwire.TextBlock(text=hostile_text(rng, 300_000)), *calls],
        stop_reason="tool_use",
        raw_stop_reason={"openai": "tool_calls", "anthropic": "tool_use"}.get(dialect, "completed"),
        usage=msgwire.Usage(input_tokens=12000, output_tokens=90000, cache_read_tokens=8000, reasoning_tokens=30000),
        model="big-model-2026",
        provider="anthropic" if dialect == "anthropic" else "openai",
        response_id={"openai": "chatcmpl-big", "anthropic": "msg_big"}.get(dialect, "resp_big"),
    )


def _sdk_type(dialect: str) -> Any:
    if dialect == "openai":
        from openai.types.chat import ChatCompletion

        return ChatCompletion
    if dialect == "anthropic":
        from anthropic.types import Message

        return Message
    from openai.types.responses import Response

    return Response


@pytest.fixture(scope="module", params=RESPONSE_DIALECTS)
def reply(request: pytest.FixtureRequest) -> tuple[str, msgwire.AssistantMessage, bytes]:
    dialect: str = request.param
    message = _large_reply(dialect)
    body = msgwire.formats.to_response_json(message, dialect, policy=msgwire.Policy(thinking="keep"))
    assert len(body) > 900_000
    return dialect, message, body


def test_from_response_msgwire(benchmark: Any, reply: tuple[str, msgwire.AssistantMessage, bytes]) -> None:
    dialect, message, body = reply
    benchmark.group = f"from-response-{dialect}"
    read = benchmark(msgwire.from_response, body, dialect)
    assert len(read.tool_calls) == 200
    assert read.text == message.text


def test_from_response_sdk_model_validate_json(
    benchmark: Any, reply: tuple[str, msgwire.AssistantMessage, bytes]
) -> None:
    dialect, _, body = reply
    benchmark.group = f"from-response-{dialect}"
    sdk = benchmark(_sdk_type(dialect).model_validate_json, body)
    assert _calls(msgwire.from_response(sdk, dialect)) == _calls(msgwire.from_response(body, dialect))


def _calls(message: msgwire.AssistantMessage) -> list[tuple[str, Any]]:
    """The calls, arguments parsed (an SDK writes them again without spaces)."""
    return [(c.id, c.parsed_arguments()) for c in message.tool_calls]


def test_to_response_msgwire(benchmark: Any, reply: tuple[str, msgwire.AssistantMessage, bytes]) -> None:
    dialect, message, body = reply
    benchmark.group = f"to-response-{dialect}"
    policy = msgwire.Policy(thinking="keep")
    assert benchmark(msgwire.formats.to_response_json, message, dialect, policy=policy) == body


def test_to_response_sdk_model_dump_json(benchmark: Any, reply: tuple[str, msgwire.AssistantMessage, bytes]) -> None:
    dialect, _, body = reply
    benchmark.group = f"to-response-{dialect}"
    sdk = _sdk_type(dialect).model_validate_json(body)
    written = benchmark(sdk.model_dump_json)
    assert json.loads(written)["id"] == json.loads(body)["id"]
