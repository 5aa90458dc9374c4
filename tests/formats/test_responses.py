"""Non-streamed responses: ``formats.to_response`` / ``from_response`` for the five dialects.

1. every body ``to_response`` writes is what the provider documents: validated by the official
   SDK types (``ChatCompletion``, anthropic ``Message``, ``Response``) for OpenAI Chat, Anthropic
   and Responses, and against the documented field set for Gemini and Ollama;
2. lossless same-provider round trips over ``tests/fixtures/responses/<dialect>/*.json``: body
   -> message -> body gives the body back, less the fields each dialect's docstring lists as
   not carried (``UNCARRIED`` below);
3. differential: the official SDK accumulators' final objects for the recorded streams, read by
   ``from_response``, equal ``msgwire.assemble`` of the same bytes;
4. hypothesis: message -> body -> message equals the message up to what the dialect cannot
   carry (``expected`` states it per dialect);
5. errors: JSON paths, error bodies, and no panic on mutated bodies.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import uuid
from pathlib import Path
from typing import Any

import anthropic.types
import msgspec
import openai.types.chat
import openai.types.responses
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    AssistantMessage,
    DecodeError,
    ProviderError,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
    _core,
    formats,
)
from tests._support.sdk import (
    CHAT_FIXTURES,
    RESPONSES_FIXTURES,
    anthropic_final,
    openai_final,
    sdk_events,
    wire_fixture,
)
from tests._support.strategies import chars, examples, json_objects, optional, rust_trim, timestamps

TESTS = Path(__file__).parents[1]
FIXTURES = TESTS / "fixtures" / "responses"
DIALECTS = ("openai", "anthropic", "openai-responses", "gemini", "ollama")
PROVIDER = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}
PROVIDER["ollama"] = "ollama"


def corpus(dialect: str) -> list[str]:
    return sorted(p.name for p in (FIXTURES / dialect).glob("*.json"))


def load(dialect: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / dialect / name).read_text())
    return body


# --- 1. the bodies are the providers' documented shapes ---------------------------------------

# Gemini's GenerateContentResponse and Ollama's chat reply, as their API references define them
# (the SDKs are not installed): the fields a body may have, by path ("[]" an array's elements).
GEMINI_FIELDS = {
    "": {"candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "createTime"},
    "candidates[]": {"content", "finishReason", "index", "safetyRatings", "citationMetadata", "avgLogprobs"},
    "candidates[].content": {"role", "parts"},
    "candidates[].content.parts[]": {"text", "thought", "thoughtSignature", "functionCall", "inlineData"},
    "candidates[].content.parts[].functionCall": {"id", "name", "args"},
    "usageMetadata": {
        "promptTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "cachedContentTokenCount",
        "totalTokenCount",
        "promptTokensDetails",
        "candidatesTokensDetails",
        "toolUsePromptTokenCount",
    },
}
GEMINI_FINISH = {"STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST"}
GEMINI_FINISH |= {"PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY"}
GEMINI_FINISH |= {"UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "FINISH_REASON_UNSPECIFIED"}
OLLAMA_FIELDS = {
    "": {"model", "created_at", "message", "done", "done_reason", "total_duration", "load_duration"}
    | {"prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"},
    "message": {"role", "content", "thinking", "tool_calls", "images", "tool_name"},
    "message.tool_calls[]": {"id", "function"},
    "message.tool_calls[].function": {"index", "name", "arguments"},
}


def check_fields(body: Any, allowed: dict[str, set[str]], path: str = "") -> None:
    """Every object of ``body`` that ``allowed`` describes has only documented fields."""
    if isinstance(body, dict):
        if path in allowed:
            assert set(body) <= allowed[path], (path, set(body) - allowed[path])
        for key, value in body.items():
            if key not in ("args", "arguments"):  # the model's own JSON
                check_fields(value, allowed, f"{path}.{key}" if path else key)
    elif isinstance(body, list):
        for item in body:
            check_fields(item, allowed, f"{path}[]")


def validate(body: dict[str, Any], dialect: str) -> None:
    """``body`` is a valid non-streamed response of ``dialect``."""
    if dialect == "openai":
        openai.types.chat.ChatCompletion.model_validate(body)
    elif dialect == "anthropic":
        anthropic.types.Message.model_validate(body)
    elif dialect == "openai-responses":
        openai.types.responses.Response.model_validate(body)
    elif dialect == "gemini":
        check_fields(body, GEMINI_FIELDS)
        [candidate] = body["candidates"]
        assert candidate["content"]["role"] == "model"
        assert candidate["finishReason"] in GEMINI_FINISH
        for part in candidate["content"]["parts"]:
            assert isinstance(part.get("text", ""), str)
            assert isinstance(part.get("functionCall", {}).get("args", {}), dict)
        assert all(isinstance(v, int) for v in body.get("usageMetadata", {}).values())
    else:
        check_fields(body, OLLAMA_FIELDS)
        assert body["done"] is True
        assert body["done_reason"] in ("stop", "length", "load", "unload")
        assert body["message"]["role"] == "assistant"
        assert isinstance(body["message"]["content"], str)
        assert all(isinstance(c["function"]["arguments"], dict) for c in body["message"].get("tool_calls", []))
        msgspec.json.decode(json.dumps(body["created_at"]), type=dt.datetime)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_wrong_body_fails_validation(dialect: str) -> None:
    """The checks are strict enough to catch a wrong shape: each refuses a damaged body."""
    body = formats.to_response(msgwire.assemble(_stream_of(dialect), dialect), dialect)
    validate(body, dialect)
    wrong = copy.deepcopy(body)
    if dialect == "openai":
        wrong["choices"][0]["finish_reason"] = "end_turn"
    elif dialect == "anthropic":
        wrong["content"][0]["type"] = "output_text"
    elif dialect == "openai-responses":
        del wrong["output"][-1]["call_id"]
    elif dialect == "gemini":
        wrong["candidates"][0]["content"]["parts"][0]["function_call"] = {}
    else:
        wrong["message"]["tool_calls"] = [{"function": {"name": "f", "arguments": "{}"}}]
    with pytest.raises((pydantic.ValidationError, AssertionError)):
        validate(wrong, dialect)


def _stream_of(dialect: str) -> bytes:
    return wire_fixture(
        {
            "openai": "openai/chat-parallel-tool-calls-usage.sse",
            "anthropic": "anthropic/thinking-signature-text.sse",
            "openai-responses": "openai/responses-encrypted-reasoning-text-function-call.sse",
            "gemini": "gemini/function-call-with-id.sse",
            "ollama": "ollama/cloud-gpt-oss-thinking-text.ndjson",
        }[dialect]
    )


# --- 2. lossless same-provider round trips ----------------------------------------------------


def _drop(obj: Any, *keys: str) -> None:
    for key in keys:
        obj.pop(key, None)


def uncarried(body: dict[str, Any], dialect: str) -> dict[str, Any]:
    """``body`` less what its dialect's writer documents as not carried (and with the values a
    body reads back to where the writer normalizes them)."""
    body = copy.deepcopy(body)
    if dialect == "openai":
        _drop(body, "service_tier", "system_fingerprint")
        message = body["choices"][0]["message"]
        _drop(message, "annotations")
        usage = body.get("usage") or {}
        _drop(usage.get("prompt_tokens_details", {}), "audio_tokens")
        _drop(usage.get("completion_tokens_details", {}), "audio_tokens")
        _drop(usage.get("completion_tokens_details", {}), "accepted_prediction_tokens", "rejected_prediction_tokens")
    elif dialect == "anthropic":
        _drop(body, "container", "stop_details")
        _drop(body["usage"], "service_tier", "server_tool_use", "cache_creation", "inference_geo")
        for block in body["content"]:
            _drop(block, "citations")
            if block["type"] == "tool_use":
                _drop(block, "caller")  # written back only on raw server blocks
    elif dialect == "openai-responses":
        keep = {"id", "object", "created_at", "status", "error", "incomplete_details", "model", "output", "usage"}
        keep |= {"parallel_tool_calls", "tool_choice", "tools"}
        for key in set(body) - keep:
            del body[key]
        body["tools"], body["tool_choice"], body["parallel_tool_calls"] = [], "auto", True
        if body.get("usage"):  # newer API versions send it always
            body["usage"]["input_tokens_details"].setdefault("cache_write_tokens", 0)
        for item in body["output"]:
            if item["type"] in ("message", "reasoning", "function_call"):
                _drop(item, "id")
            if item["type"] == "message":
                item["status"] = "completed"
                _drop(item, "phase")
                for part in item["content"]:
                    _drop(part, "logprobs")
            if item["type"] == "reasoning":
                if not item.get("content"):
                    _drop(item, "content")
                if len(item["summary"]) > 1:  # one thinking block: one summary part
                    text = "\n\n".join(part["text"] for part in item["summary"])
                    item["summary"] = [{"type": "summary_text", "text": text}]
    elif dialect == "gemini":
        for candidate in body["candidates"]:
            _drop(candidate, "index", "safetyRatings", "avgLogprobs", "citationMetadata")
        _drop(body.get("usageMetadata", {}), "promptTokensDetails", "candidatesTokensDetails")
    else:
        _drop(body, "total_duration", "load_duration", "prompt_eval_duration", "eval_duration")
        for call in body["message"].get("tool_calls", []):
            _drop(call["function"], "index")
        body["created_at"] = msgspec.json.decode(json.dumps(body["created_at"]), type=dt.datetime)
    return body


@pytest.mark.parametrize(("dialect", "name"), [(d, n) for d in DIALECTS for n in corpus(d)])
def test_fixture_round_trips_losslessly(dialect: str, name: str) -> None:
    body = load(dialect, name)
    message = formats.from_response(body, dialect)
    again = formats.to_response(message, dialect)
    validate(again, dialect)
    assert uncarried(again, dialect) == uncarried(body, dialect)
    # and the message reads the same from the body it wrote
    assert _same(formats.from_response(again, dialect), message)


def test_every_dialect_has_fixtures() -> None:
    assert all(len(corpus(d)) >= 3 for d in DIALECTS)


MADE_UP = re.compile(r"call_[0-9a-f-]+_[0-9]+")


def _same(a: AssistantMessage, b: AssistantMessage) -> bool:
    """Equal but for the fresh id (and the read time, in dialects whose bodies have none, and
    the ids made up for calls that came without one: they end with the message id)."""

    def plain(m: AssistantMessage) -> AssistantMessage:
        content = [
            msgspec.structs.replace(c, id="made-up") if isinstance(c, ToolCallBlock) and MADE_UP.fullmatch(c.id) else c
            for c in m.content
        ]
        return msgspec.structs.replace(m, id="x", timestamp=b.timestamp, content=content)

    return plain(a) == plain(b)


def test_fixture_reads_as_the_recorded_stream() -> None:
    """A body composed from a recorded stream reads as that stream assembles (ids aside)."""
    pairs = [
        ("openai", "text.json", "openai/chat-text-include-usage.sse"),
        ("openai", "parallel-tool-calls.json", "openai/chat-parallel-tool-calls-usage.sse"),
        ("anthropic", "thinking-tool-use.json", "anthropic/thinking-then-tool-use-empty-args.sse"),
        ("anthropic", "server-tool-use.json", "anthropic/server-tool-use-then-tool-use-with-args.sse"),
        ("gemini", "thought-parts-text.json", "gemini/thought-parts-then-text.sse"),
        ("gemini", "function-call-with-id.json", "gemini/function-call-with-id.sse"),
        ("ollama", "thinking-text.json", "ollama/cloud-gpt-oss-thinking-text.ndjson"),
    ]
    for dialect, name, stream in pairs:
        ours = formats.from_response(load(dialect, name), dialect)
        streamed = msgwire.assemble(wire_fixture(stream), dialect)
        assert (ours.response_id, ours.model, ours.stop_reason, ours.raw_stop_reason, ours.usage) == (
            streamed.response_id,
            streamed.model,
            streamed.stop_reason,
            streamed.raw_stop_reason,
            streamed.usage,
        ), name
        assert [_plain_block(b) for b in ours.content] == [_plain_block(b) for b in streamed.content], name


def test_timestamps_are_the_creation_time() -> None:
    chat = formats.from_response(load("openai", "text.json"), "openai")
    assert chat.timestamp == dt.datetime.fromtimestamp(load("openai", "text.json")["created"], dt.UTC)
    ollama = formats.from_response(load("ollama", "tool-calls.json"), "ollama")
    assert ollama.timestamp == dt.datetime(2025, 9, 2, 18, 35, 41, 123456, tzinfo=dt.UTC)
    before = msgwire.types.now()
    claude = formats.from_response(load("anthropic", "max-tokens.json"), "anthropic")
    assert before <= claude.timestamp <= msgwire.types.now()


def test_the_core_stamps_a_body_without_a_time_with_its_own_id_and_clock() -> None:
    """The id and the time of a body without one are the core's: its id generator is
    ``new_id`` (one order for ids made in Rust and in Python), its clock is ``now`` to the
    microsecond, as a message made in Python would hold."""
    body = json.dumps(load("anthropic", "max-tokens.json")).encode()
    first = msgwire.new_id()
    before = msgwire.types.now()
    stamped = [formats.from_response(body, "anthropic") for _ in range(25)]
    read = lambda: msgwire.loads(_core.from_response_json(body, "anthropic"), type=AssistantMessage)  # noqa: E731
    stamped += [read() for _ in range(25)]  # no id, no time given: the core's
    after = msgwire.types.now()
    last = msgwire.new_id()
    ids = [first, *(m.id for m in stamped), last]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(uuid.UUID(m.id).version == 7 for m in stamped)
    assert all(before <= m.timestamp <= after for m in stamped)
    assert any(m.timestamp.microsecond for m in stamped), "microseconds, not whole seconds"
    raw = _core.from_response_json(body, "anthropic", id="given", timestamp="2026-01-01T00:00:00Z")
    given = msgwire.loads(raw, type=AssistantMessage)
    assert (given.id, given.timestamp) == ("given", dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


# --- 3. differential: the SDKs' final objects read as msgwire assembles the stream ------------


def _plain_block(block: Any) -> Any:
    """A block to compare across readers: unknown blocks by their data without nulls (an SDK's
    dump writes every optional field), arguments parsed."""
    if isinstance(block, UnknownBlock):
        return _no_nulls(block.data())
    if isinstance(block, ToolCallBlock):
        return ("tool_call", block.id, block.name, block.parsed_arguments(), block.malformed, block.item_id)
    # provider objects by their data (other bytes: streamed, a body, an SDK's dump)
    if isinstance(block, ServerToolCallBlock):
        return (
            "server_tool_call",
            block.id,
            block.name,
            json.loads(block.arguments),
            block.kind,
            _no_nulls(block.data()),
        )
    if isinstance(block, ServerToolResultBlock):
        return ("server_tool_result", block.tool_call_id, block.kind, block.is_error, _no_nulls(block.data()))
    if isinstance(block, TextBlock) and block.citations:
        cited = [
            (c.kind, c.url, c.title, c.cited_text, c.start_index, c.end_index, _no_nulls(msgspec.json.decode(c.raw)))
            for c in block.citations
        ]
        return ("text", block.text, cited, block.item_id)
    return block


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def _compare(ours: AssistantMessage, streamed: AssistantMessage) -> None:
    assert [_plain_block(b) for b in ours.content] == [_plain_block(b) for b in streamed.content]
    assert (ours.stop_reason, ours.raw_stop_reason, ours.usage) == (
        streamed.stop_reason,
        streamed.raw_stop_reason,
        streamed.usage,
    )
    assert (ours.response_id, ours.model, ours.provider) == (streamed.response_id, streamed.model, streamed.provider)


@pytest.mark.parametrize("path", CHAT_FIXTURES)
def test_openai_sdk_final_completion_reads_as_the_stream(path: str) -> None:
    data = wire_fixture(path)
    final = openai_final([data])
    ours = formats.from_response(final, "openai")
    streamed = msgwire.assemble(data, "openai")
    _compare(ours, streamed)
    assert ours.timestamp == dt.datetime.fromtimestamp(final.created, dt.UTC)


ANTHROPIC_STREAMS = sorted(p.name for p in (TESTS / "fixtures" / "wire" / "anthropic").glob("*.sse"))


@pytest.mark.parametrize("name", ANTHROPIC_STREAMS)
def test_anthropic_sdk_final_message_reads_as_the_stream(name: str) -> None:
    data = wire_fixture(f"anthropic/{name}")
    final = anthropic_final([data])
    ours = formats.from_response(final, "anthropic")
    streamed = msgwire.assemble(data, "anthropic")
    _compare(ours, streamed)


@pytest.mark.parametrize("name", RESPONSES_FIXTURES)
def test_openai_sdk_final_response_reads_as_the_stream(name: str) -> None:
    data = wire_fixture(f"openai/{name}")
    _, final = sdk_events([data])
    ours = formats.from_response(final, "openai-responses")
    streamed = msgwire.assemble(data, "openai-responses")
    # by design of the API: `response.completed` carries the reasoning encrypted again (another
    # string than `output_item.done`, which the stream decoder keeps): the final object's is ours
    final_signatures = [item.encrypted_content for item in final.output if item.type == "reasoning"]
    ours_signatures = [b.signature for b in ours.content if isinstance(b, ThinkingBlock)]
    assert ours_signatures == [s or None for s in final_signatures]
    unsigned = [msgspec.structs.replace(b, signature=None) if isinstance(b, ThinkingBlock) else b for b in ours.content]
    streamed_unsigned = [
        msgspec.structs.replace(b, signature=None) if isinstance(b, ThinkingBlock) else b for b in streamed.content
    ]
    _compare(
        msgspec.structs.replace(ours, content=unsigned), msgspec.structs.replace(streamed, content=streamed_unsigned)
    )


# --- 4. hypothesis: message -> body -> message --------------------------------------------------

SMALL = st.integers(0, 2**40)  # the decoders add counts: far from overflow
usages = st.builds(
    Usage,
    input_tokens=SMALL,
    output_tokens=SMALL,
    cache_read_tokens=SMALL,
    cache_write_tokens=SMALL,
    reasoning_tokens=SMALL,
)
words = st.text(chars, min_size=1, max_size=30)
# ids msgwire did not make up (those are left out of Gemini and Ollama bodies by design)
call_ids = words.filter(lambda s: not s.startswith("call_"))
object_arguments = json_objects.map(lambda v: msgspec.json.encode(v).decode())
STOPS = [None, "end_turn", "length", "tool_use", "content_filter", "refusal", "pause", "error", "aborted", "unknown"]


@st.composite
def response_messages(draw: st.DrawFn, dialect: str) -> AssistantMessage:
    """An assistant message of the kinds of blocks a response of ``dialect`` carries, as the
    dialect's own provider made it (thinking signed where the dialect signs it)."""
    signed = dialect in ("anthropic",)
    signatures = words if signed else (optional(words) if dialect in ("openai-responses", "gemini") else st.none())
    thinking = st.builds(ThinkingBlock, thinking=words, signature=signatures)
    if dialect == "anthropic":
        thinking = thinking | st.builds(ThinkingBlock, redacted=words)
    arguments = object_arguments
    if dialect in ("openai", "openai-responses"):
        arguments = arguments | st.text(chars, max_size=20)  # taken exactly as received
    calls = st.builds(ToolCallBlock, id=call_ids, name=words, arguments=arguments)
    # call ids are unique in a response (an OpenAI Chat call without `index` is keyed by its id)
    unique = lambda b: b.id if isinstance(b, ToolCallBlock) else id(b)  # noqa: E731
    blocks: st.SearchStrategy[Any] = st.builds(TextBlock, text=words) | thinking | calls
    content: list[Any] = draw(st.lists(blocks, max_size=5, unique_by=unique))
    return AssistantMessage(
        id=str(draw(st.uuids())),
        timestamp=draw(timestamps),
        content=content,
        stop_reason=draw(st.sampled_from(STOPS)),
        raw_stop_reason=draw(optional(st.sampled_from(["stop", "end_turn", "STOP", "length", "eos"]) | words)),
        usage=draw(optional(usages)),
        model=draw(optional(words)),
        provider=PROVIDER[dialect],
        response_id=draw(optional(words)),
    )


# What each dialect writes for a stop reason: its own values ("raw kept when it is one of them").
STOP_VALUES: dict[str, dict[str | None, list[str]]] = {
    "openai": {
        "end_turn": ["stop"],
        "tool_use": ["tool_calls", "function_call"],
        "length": ["length"],
        "content_filter": ["content_filter"],
        "refusal": ["stop"],
    },
    "anthropic": {
        "end_turn": ["end_turn", "stop_sequence"],
        "length": ["max_tokens", "model_context_window_exceeded"],
        "tool_use": ["tool_use"],
        "pause": ["pause_turn"],
        "refusal": ["refusal"],
        "content_filter": ["refusal"],
    },
    "openai-responses": {
        "end_turn": ["completed"],
        "tool_use": ["completed"],
        "refusal": ["completed"],
        "length": ["max_output_tokens"],
        "content_filter": ["content_filter"],
        "aborted": ["cancelled"],
    },
    "gemini": {
        "end_turn": ["STOP"],
        "tool_use": ["STOP"],
        "length": ["MAX_TOKENS"],
        "content_filter": [
            *("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE")
        ],
        "refusal": ["SAFETY"],
        "error": ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"],
    },
    "ollama": {"end_turn": ["stop", "load", "unload"], "tool_use": ["stop"], "length": ["length"]},
}
OTHERWISE = {"openai": "stop", "anthropic": None, "openai-responses": "incomplete", "gemini": "OTHER", "ollama": "stop"}


def written_stop(message: AssistantMessage, dialect: str) -> str | None:
    values = STOP_VALUES[dialect].get(message.stop_reason or "unknown")
    if values is None:
        return OTHERWISE[dialect]
    return message.raw_stop_reason if message.raw_stop_reason in values else values[0]


def read_stop(raw: str | None, dialect: str, calls: bool, refused: bool) -> str:
    """The stream decoders' mapping (rust/core/src/dialect/), for the values a writer emits."""
    if dialect == "openai":
        if raw == "stop":
            return "tool_use" if calls else "refusal" if refused else "end_turn"
        return {"length": "length", "tool_calls": "tool_use", "function_call": "tool_use"}.get(
            raw or "", "content_filter"
        )
    if dialect == "anthropic":
        table = {"end_turn": "end_turn", "stop_sequence": "end_turn", "max_tokens": "length", "tool_use": "tool_use"}
        table |= {"model_context_window_exceeded": "length", "pause_turn": "pause", "refusal": "refusal"}
        return table.get(raw or "", "unknown")
    if dialect == "openai-responses":
        if raw == "completed":
            return "tool_use" if calls else "refusal" if refused else "end_turn"
        return {"max_output_tokens": "length", "content_filter": "content_filter", "cancelled": "aborted"}.get(
            raw or "", "unknown"
        )
    if dialect == "gemini":
        if raw == "STOP":
            return "tool_use" if calls else "end_turn"
        if raw == "MAX_TOKENS":
            return "length"
        if raw in STOP_VALUES["gemini"]["content_filter"]:
            return "content_filter"
        return "error" if raw in STOP_VALUES["gemini"]["error"] else "unknown"
    if raw == "length":
        return "length"
    return "tool_use" if calls else "end_turn"


def _arguments(call: ToolCallBlock, dialect: str) -> str:
    """The arguments text a call reads back with: exact where the dialect sends text, the JSON
    object as embedded where it sends an object (`{}` for none; Anthropic's decoder keeps an
    empty input as no arguments)."""
    if dialect in ("openai", "openai-responses"):
        return call.arguments if rust_trim(call.arguments) else "{}"  # what json.loads reads
    text = rust_trim(call.arguments) or "{}"
    return "" if dialect == "anthropic" and text == "{}" else text


def join_reply(texts: list[str]) -> str:
    """The texts of one reply as one string (``request::join_reply``): run together, but marked
    text (``<tag ...>...</tag>``) stands apart by a blank line."""
    marked = [t.startswith("<") and t.endswith(">") for t in texts]
    out = texts[0] if texts else ""
    for i in range(1, len(texts)):
        out += ("\n\n" if marked[i] or marked[i - 1] else "") + texts[i]
    return out


def expected(message: AssistantMessage, dialect: str) -> AssistantMessage:
    """What ``from_response(to_response(message, dialect), dialect)`` must be, but for ``id``
    (always fresh) and, for Anthropic and Gemini, ``timestamp`` (their bodies have none)."""
    calls = [
        ToolCallBlock(id=c.id, name=c.name, arguments=_arguments(c, dialect))
        for c in message.content
        if isinstance(c, ToolCallBlock)
    ]
    calls = [msgspec.structs.replace(c, malformed=_malformed(c.arguments)) for c in calls]
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    thoughts = [b for b in message.content if isinstance(b, ThinkingBlock)]
    refused = message.stop_reason == "refusal" and any(texts)
    content: list[Any]
    if dialect in ("openai", "ollama"):
        # one string of each kind: thinking, then text, then the calls (joined as the stream's
        # deltas add up)
        content = [ThinkingBlock(thinking=join_reply([t.thinking for t in thoughts]))] if thoughts else []
        content += [TextBlock(text=join_reply(texts))] if texts else []
        content += calls
    else:
        content = []
        call_iter = iter(calls)
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                content.append(next(call_iter))
            elif (
                dialect == "gemini" and content and isinstance(block, TextBlock) and isinstance(content[-1], TextBlock)
            ):
                # Gemini's parts are deltas: the decoder joins consecutive text, and thoughts
                content[-1] = TextBlock(text=content[-1].text + block.text)
            elif dialect == "gemini" and content and isinstance(block, ThinkingBlock):
                last = content[-1]
                if isinstance(last, ThinkingBlock):
                    signature = (last.signature or "") + (block.signature or "")
                    content[-1] = ThinkingBlock(thinking=last.thinking + block.thinking, signature=signature or None)
                else:
                    content.append(block)
            else:
                content.append(block)
    raw = written_stop(message, dialect)
    usage = message.usage
    if usage is None:
        usage = Usage() if dialect in ("anthropic", "ollama") else None
    elif dialect == "openai":
        usage = msgspec.structs.replace(usage, cache_write_tokens=0)
    elif dialect == "anthropic":
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        usage = msgspec.structs.replace(usage, input_tokens=max(usage.input_tokens, cached))
    elif dialect == "gemini":
        output = max(usage.output_tokens, usage.reasoning_tokens)
        usage = msgspec.structs.replace(usage, output_tokens=output, cache_write_tokens=0)
    elif dialect == "ollama":
        usage = Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    prefix = {"openai": "chatcmpl-", "anthropic": "msg_", "openai-responses": "resp_", "gemini": "", "ollama": None}
    response_id = message.response_id
    if response_id is None and prefix[dialect] is not None:
        response_id = f"{prefix[dialect]}{message.id}"
    timestamp = message.timestamp
    if dialect in ("openai", "openai-responses"):
        timestamp = timestamp.replace(microsecond=0)
    return AssistantMessage(
        id=message.id,
        timestamp=timestamp,
        content=content,
        stop_reason=read_stop(raw, dialect, bool(calls), refused),  # type: ignore[arg-type]
        raw_stop_reason=raw,
        usage=usage,
        model=message.model,
        provider=PROVIDER[dialect],
        response_id=response_id if dialect != "ollama" else None,
    )


# What Rust's `str::trim` removes (Unicode White_Space; Python's `strip` removes \x1c-\x1f too).
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)


def _malformed(arguments: str) -> bool:
    """How the decoder flags arguments: blank is none, anything else must be JSON (RFC 8259,
    as msgspec reads it: no NaN, no lone surrogate)."""
    if not arguments.strip(RUST_WHITESPACE):
        return False
    try:
        msgspec.json.decode(arguments)
    except msgspec.DecodeError:
        return True
    return False


def _check_round_trip(message: AssistantMessage, dialect: str) -> None:
    body = formats.to_response(message, dialect)
    validate(body, dialect)
    again = formats.from_response(body, dialect)
    if dialect == "openai-responses":  # each item is written with an id, one marked made up when it has none
        for item in body["output"]:
            assert item["id"], item
    want = msgspec.structs.replace(expected(message, dialect), id=again.id)
    if dialect in ("anthropic", "gemini"):
        want = msgspec.structs.replace(want, timestamp=again.timestamp)
    assert again == want


@pytest.mark.parametrize("dialect", DIALECTS)
@given(data=st.data())
@examples(150)
def test_message_round_trips_up_to_what_the_dialect_carries(dialect: str, data: st.DataObject) -> None:
    _check_round_trip(data.draw(response_messages(dialect)), dialect)


def test_foreign_blocks_follow_the_policy_and_are_reported() -> None:
    """What no response carries (a file reference, another provider's thinking) goes through
    the request policy, each step in the report."""
    message = AssistantMessage(
        content=[
            ThinkingBlock(thinking="hmm", signature="sig"),
            msgwire.FileReferenceBlock(path="a.py", resolved_content="x = 1", status="resolved"),
            TextBlock(text="done"),
        ],
        provider="anthropic",
        stop_reason="end_turn",
    )
    converted = formats.convert_response(message, "openai")
    body, report = converted.dict(), converted.report
    assert body["choices"][0]["message"]["content"] == '<file path="a.py">\n1 | x = 1\n</file>\n\ndone'
    assert "reasoning_content" not in body["choices"][0]["message"]
    assert [(e.kind, e.action) for e in report.entries] == [("thinking", "drop"), ("file_reference", "to_text")]
    kept = formats.to_response(message, "openai", policy=msgwire.Policy(thinking="keep"))
    assert kept["choices"][0]["message"]["reasoning_content"] == "hmm"


def test_what_a_body_has_no_field_for_is_reported() -> None:
    message = AssistantMessage(
        content=[TextBlock(text="wait")],
        stop_reason="pause",
        usage=Usage(input_tokens=5, output_tokens=2, cache_write_tokens=3),
    )
    converted = formats.convert_response(message, "openai")
    body, report = converted.dict(), converted.report
    assert body["choices"][0]["finish_reason"] == "stop"
    assert [(e.kind, e.action) for e in report.entries] == [
        ("cache_write_tokens", "strip"),
        ("stop_reason", "fallback"),
    ]
    report = formats.convert_response(message, "anthropic").report
    assert [(e.kind, e.action) for e in report.entries] == []  # pause_turn, and cache writes have a field


def test_to_response_json_is_the_dict_encoded() -> None:
    message = formats.from_response(load("anthropic", "thinking-text.json"), "anthropic")
    assert json.loads(formats.to_response_json(message, "anthropic")) == formats.to_response(message, "anthropic")
    with pytest.raises(TypeError):
        formats.to_response(msgwire.user("hi"), "openai")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="unknown dialect"):
        formats.to_response(message, "cohere")


# --- 5. errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "name", "damage", "path"),
    [
        (
            "openai",
            "parallel-tool-calls.json",
            lambda b: b["choices"][0]["message"]["tool_calls"][1]["function"].update(arguments=5),
            "$.choices[0].message.tool_calls[1].function.arguments",
        ),
        ("openai", "text.json", lambda b: b["choices"][0].update(finish_reason=[]), "$.choices[0].finish_reason"),
        ("openai", "text.json", lambda b: b.pop("choices"), "$.choices"),
        ("anthropic", "thinking-text.json", lambda b: b["content"][1].update(text=5), "$.content[1].text"),
        ("anthropic", "max-tokens.json", lambda b: b["usage"].update(output_tokens="ten"), "$.usage.output_tokens"),
        (
            "openai-responses",
            "incomplete.json",
            lambda b: b["output"][0]["content"][0].update(text=7),
            "$.output[0].content[0].text",
        ),
        ("openai-responses", "function-call.json", lambda b: b["output"][0].update(call_id=1), "$.output[0].call_id"),
        (
            "gemini",
            "function-call-with-id.json",
            lambda b: b["candidates"][0]["content"]["parts"][0]["functionCall"].update(name=[]),
            "$.candidates[0].content.parts[0].functionCall.name",
        ),
        ("ollama", "text.json", lambda b: b["message"].update(content={}), "$.message.content"),
    ],
)
def test_errors_name_the_json_path(dialect: str, name: str, damage: Any, path: str) -> None:
    body = load(dialect, name)
    damage(body)
    with pytest.raises(DecodeError) as failed:
        formats.from_response(body, dialect)
    assert failed.value.path == path
    assert f"- at `{path}`" in str(failed.value)
    assert isinstance(failed.value, ValueError)


def test_malformed_json_has_an_offset() -> None:
    with pytest.raises(DecodeError) as failed:
        formats.from_response(b'{"choices": [', "openai")
    assert failed.value.offset == 13
    with pytest.raises(DecodeError, match="stream chunk"):
        formats.from_response({"object": "chat.completion.chunk", "choices": []}, "openai")
    with pytest.raises(DecodeError, match="message_start"):
        formats.from_response({"type": "message_start", "message": {}}, "anthropic")
    with pytest.raises(TypeError):
        formats.from_response(42, "openai")


@pytest.mark.parametrize(
    ("dialect", "body", "error_type", "provider_message"),
    [
        (
            "openai",
            {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit"}},
            "requests",
            "Rate limit reached",
        ),
        (
            "anthropic",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "overloaded_error",
            "Overloaded",
        ),
        (
            "openai-responses",
            {
                "id": "resp_1",
                "object": "response",
                "status": "failed",
                "error": {"code": "server_error", "message": "The server had an error"},
                "output": [],
            },
            "server_error",
            "The server had an error",
        ),
        (
            "gemini",
            {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}},
            "RESOURCE_EXHAUSTED",
            "Resource exhausted",
        ),
        ("ollama", {"error": "model 'llama9' not found"}, "error", "model 'llama9' not found"),
    ],
)
def test_error_bodies_raise_the_providers_error(
    dialect: str, body: dict[str, Any], error_type: str, provider_message: str
) -> None:
    """An error body is the provider's error, raised as a stream raises it (``ProviderError``)."""
    with pytest.raises(ProviderError) as failed:
        formats.from_response(body, dialect)
    assert (failed.value.error_type, failed.value.provider_message) == (error_type, provider_message)
    assert failed.value.dialect == dialect
    assert failed.value.partial_message is None


ALL_FIXTURES = [(d, n) for d in DIALECTS for n in corpus(d)]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A fixture body with a value replaced somewhere, or its bytes cut or overwritten."""
    dialect, name = draw(st.sampled_from(ALL_FIXTURES))
    body: Any = load(dialect, name)
    if draw(st.booleans()):
        node = body
        for _ in range(draw(st.integers(0, 6))):
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
            if not children:
                break
            _, node = draw(st.sampled_from(children))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if keys:
            node[draw(st.sampled_from(keys))] = draw(
                st.none() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2) | json_objects
            )
        return dialect, json.dumps(body).encode()
    data = bytearray(json.dumps(body).encode())
    at = draw(st.integers(0, len(data)))
    if draw(st.booleans()):
        return dialect, bytes(data[:at])
    data[at:at] = draw(st.binary(max_size=8))
    return dialect, bytes(data)


@given(mutated())
@examples(400)
def test_hostile_bodies_raise_typed_errors_never_panic(case: tuple[str, bytes]) -> None:
    dialect, data = case
    try:
        message = formats.from_response(data, dialect)
    except (DecodeError, ProviderError):
        return
    assert isinstance(message, AssistantMessage)
    # whatever was read writes back (raw provider blocks as they came, valid or not)
    assert isinstance(formats.to_response(message, dialect), dict)
