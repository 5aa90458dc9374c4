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
from typing import Any

import msgspec
import pytest

import msgwire
from benches.formats_workload import RESPONSE_DIALECTS, by_hand, large_reply, sdk_type
from benches.workload import build

# rounds of the re-build bench (each needs its own set-up build): fewer under --benchmark-disable
ROUNDS = 200


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
    body = benchmark(by_hand, session)
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


@pytest.fixture(scope="module", params=RESPONSE_DIALECTS)
def reply(request: pytest.FixtureRequest) -> tuple[str, msgwire.AssistantMessage, bytes]:
    dialect: str = request.param
    message = large_reply(dialect)
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
    sdk = benchmark(sdk_type(dialect).model_validate_json, body)
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
    sdk = sdk_type(dialect).model_validate_json(body)
    written = benchmark(sdk.model_dump_json)
    assert json.loads(written)["id"] == json.loads(body)["id"]
