"""The official SDK accumulators, driven over a mock HTTP transport, and the comparisons of
their results with msgwire's, shared by the differential, real-world, response and transcode
tests: the ``openai`` SDK's ``ChatCompletionStreamState`` (``openai_final``) and
``ResponseStreamState`` (``sdk_events``), the ``anthropic`` SDK's ``MessageStream``
(``anthropic_final``), and msgwire's own message with its events replayed (``ours``).

What differs by design, and so is not compared, is told in tests/stream/test_differential.py
and tests/stream/test_differential_responses.py.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import msgspec
import openai
import pytest

import msgwire
from msgwire import (
    AssistantMessage,
    Citation,
    MessageEnd,
    MessageStart,
    ServerToolCallBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBegin,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallEnd,
    UnknownBlock,
    UsageEvent,
)
from msgwire.types import BlockEnd, ServerToolResultBlock
from tests._support.wire import WIRE

DIALECT = "openai-responses"

_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def http_client(chunks: list[bytes]) -> httpx2.Client:
    """An HTTP client whose every response is 200 ``text/event-stream`` streaming ``chunks``.

    Both SDKs are built on ``httpx2`` (``anthropic`` refuses a legacy ``httpx.Client``)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks))

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def openai_final(chunks: list[bytes]) -> Any:
    """The SDK's ``ParsedChatCompletion`` for a stream.

    ``get_final_completion()`` refuses a completion that finished with ``length`` (or
    ``content_filter``), even with no response format to parse: it raises
    ``LengthFinishReasonError``, which carries the accumulated completion. We take that one, so
    that the rest can still be compared (``test_length_finish_sdk_raises`` pins the behaviour).
    """
    with openai_stream(chunks) as stream:
        try:
            return stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as refused:
            return refused.completion


@contextlib.contextmanager
def openai_stream(chunks: list[bytes]) -> Iterator[Any]:
    with (
        openai.OpenAI(api_key="x", base_url="http://test", http_client=http_client(chunks), max_retries=0) as client,
        client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream,
    ):
        yield stream


def anthropic_final(chunks: list[bytes]) -> Any:
    """The SDK's final ``Message`` for a stream."""
    with (
        anthropic.Anthropic(
            api_key="x", base_url="http://test", http_client=http_client(chunks), max_retries=0
        ) as client,
        client.messages.stream(model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream,
    ):
        return stream.get_final_message()


def ours(chunks: list[bytes], dialect: str) -> tuple[AssistantMessage, list[str]]:
    """msgwire's message (fast path) and its diagnostic codes; the event path must agree."""
    message = msgwire.assemble(iter(chunks), dialect)
    stream = msgwire.stream(iter(chunks), dialect)
    events = list(stream)
    assert strip_identity(stream.message()) == strip_identity(message)
    assert strip_identity(replay(events, message)) == strip_identity(message)
    msgwire.validate(message)
    return message, [d.code for d in stream.diagnostics]


def strip_identity(message: AssistantMessage) -> AssistantMessage:
    """What two decodings of one stream share (each message has its own id and timestamp)."""
    return msgspec.structs.replace(message, id="", timestamp=_EPOCH)


def replay(events: list[Any], message: AssistantMessage) -> AssistantMessage:
    """The message the events describe, rebuilt from them alone: proves the events add up.

    Provider parts kept whole have no event; they are the only blocks taken from ``message``,
    with what the events do not carry: text citations and provider item ids (on the blocks)."""
    content: dict[int, Any] = {}
    begun: dict[int, tuple[str, str]] = {}
    arguments: dict[int, str] = {}
    start = end = usage = None
    for event in events:
        match event:
            case MessageStart():
                assert start is None, "two MessageStart"
                start = event
            case TextDelta(text=text, index=index):
                block = content.get(index, TextBlock(text=""))
                content[index] = TextBlock(text=block.text + text)
            case ThinkingDelta(index=index):
                block = content.get(index, ThinkingBlock())
                assert isinstance(block, ThinkingBlock)
                signature = None
                if event.signature is not None:
                    signature = (block.signature or "") + event.signature
                content[index] = ThinkingBlock(
                    thinking=block.thinking + event.thinking,
                    signature=signature if signature is not None else block.signature,
                    redacted=event.redacted if event.redacted is not None else block.redacted,
                )
            case ToolCallBegin(index=index, id=call_id, name=name):
                assert index not in begun, "two ToolCallBegin"
                begun[index] = (call_id, name)
                arguments[index] = ""
            case ToolCallDelta(index=index, fragment=fragment):
                assert index in begun, "ToolCallDelta before ToolCallBegin"
                arguments[index] += fragment
            case ToolCallEnd(index=index, block=block):
                assert begun[index] == (block.id, block.name), "ToolCallBegin and the final block disagree"
                assert arguments[index] == block.arguments, "the deltas do not add up to the arguments"
                content[index] = block
            case BlockEnd(index=index, block=block):
                assert index not in content, "a whole block had other events"
                content[index] = block
            case UsageEvent(usage=u):
                usage = u
            case MessageEnd():
                end = event
    assert start is not None
    assert end is not None
    assert isinstance(events[-1], MessageEnd)
    for index, block in enumerate(message.content):
        if isinstance(block, UnknownBlock):
            assert index not in content
            content[index] = block
        elif isinstance(block, TextBlock) and index in content:
            content[index] = msgspec.structs.replace(content[index], citations=block.citations, item_id=block.item_id)
        elif isinstance(block, ThinkingBlock) and index in content:
            content[index] = msgspec.structs.replace(content[index], item_id=block.item_id)
    assert sorted(content) == list(range(len(content))), "block indexes have gaps"
    return AssistantMessage(
        content=[content[i] for i in range(len(content))],
        stop_reason=end.stop_reason,
        raw_stop_reason=end.raw_stop_reason,
        usage=usage,
        model=start.model,
        provider=start.provider,
        response_id=start.response_id,
    )


def compare_chat(message: AssistantMessage, completion: Any) -> None:
    """msgwire's message against the openai SDK's final completion, on what both keep."""
    choice = completion.choices[0]
    sdk = choice.message
    if sdk.refusal:  # by design: the refusal is our text, and the stop reason says so
        assert message.text == sdk.refusal
        assert message.stop_reason == ("refusal" if choice.finish_reason == "stop" else "length")
    else:
        assert message.text == (sdk.content or "")
    reasoning = getattr(sdk, "reasoning_content", None) or getattr(sdk, "reasoning", None) or ""
    assert message.thinking == reasoning
    assert [(c.id, c.function.name, c.function.arguments) for c in sdk.tool_calls or []] == [
        (b.id, b.name, b.arguments) for b in message.tool_calls
    ]
    assert message.raw_stop_reason == choice.finish_reason
    if completion.usage is None:
        assert message.usage is None
    else:
        usage = message.usage
        prompt, details = completion.usage.prompt_tokens_details, completion.usage.completion_tokens_details
        assert usage is not None
        assert usage.input_tokens == completion.usage.prompt_tokens
        assert usage.output_tokens == completion.usage.completion_tokens
        assert usage.cache_read_tokens == ((prompt.cached_tokens if prompt else None) or 0)
        assert usage.reasoning_tokens == ((details.reasoning_tokens if details else None) or 0)
        assert usage.cache_write_tokens == 0
    assert message.model == completion.model
    assert message.response_id == completion.id


def compare_messages(message: AssistantMessage, final: Any) -> None:
    """msgwire's message against the anthropic SDK's final message, block by block."""
    # by design: a text block that got no text is dropped (no event could describe it, and
    # the API refuses empty text blocks sent back); the SDK keeps it
    blocks = [b for b in final.content if not (b.type == "text" and b.text == "")]
    assert len(message.content) == len(blocks)
    for block, sdk in zip(message.content, blocks, strict=True):
        if sdk.type == "text":
            assert isinstance(block, TextBlock)
            assert block.text == sdk.text
            # the citations, each the SDK's own object (``raw``) with its typed fields read off it
            sdk_citations = plain_data(sdk.citations or [])
            assert [msgspec.json.decode(c.raw) for c in block.citations] == sdk_citations
            for citation, plain in zip(block.citations, sdk_citations, strict=True):
                assert citation.kind == plain["type"]
                assert citation.url == plain.get("url")
                assert citation.cited_text == plain.get("cited_text")
                assert citation.title == plain.get("title", plain.get("document_title"))
        elif sdk.type == "thinking":
            assert block == ThinkingBlock(thinking=sdk.thinking, signature=sdk.signature or None)
        elif sdk.type == "redacted_thinking":
            assert block == ThinkingBlock(redacted=sdk.data)
        elif sdk.type == "tool_use":
            assert isinstance(block, ToolCallBlock)
            assert (block.id, block.name) == (sdk.id, sdk.name)
            assert not block.malformed  # the SDK repairs cut arguments (jiter's partial mode)
            assert block.parsed_arguments() == sdk.input
        elif sdk.type in ("server_tool_use", "mcp_tool_use"):  # a server tool call, the block kept whole
            assert isinstance(block, ServerToolCallBlock)
            assert (block.id, block.name, block.kind, block.dialect) == (sdk.id, sdk.name, sdk.type, "anthropic")
            assert json.loads(block.arguments) == plain_data(sdk.input)
            raw = block.data()
            for key, value in plain_data(sdk).items():  # the block kept whole
                assert raw[key] == value, key
        elif sdk.type.endswith("_tool_result"):  # its result
            assert isinstance(block, ServerToolResultBlock)
            assert (block.tool_call_id, block.kind, block.dialect) == (sdk.tool_use_id, sdk.type, "anthropic")
            assert block.content() == plain_data(sdk.content)
            content_type = getattr(sdk.content, "type", "")
            assert block.is_error == (bool(getattr(sdk, "is_error", False)) or content_type.endswith("_error"))
        else:  # a block msgwire has no type for: kept whole, as a provider part
            assert isinstance(block, UnknownBlock)
            assert block.type == "provider_part"
            assert block.data() == {"type": "provider_part", "dialect": "anthropic", "part": plain_data(sdk)}
    assert message.raw_stop_reason == final.stop_reason
    usage, sdk_usage = message.usage, final.usage
    assert usage is not None
    cache_read = sdk_usage.cache_read_input_tokens or 0
    cache_write = sdk_usage.cache_creation_input_tokens or 0
    # by design: our input_tokens counts every input token, cached or not
    assert usage.input_tokens == sdk_usage.input_tokens + cache_read + cache_write
    assert usage.output_tokens == sdk_usage.output_tokens
    assert usage.cache_read_tokens == cache_read
    assert usage.cache_write_tokens == cache_write
    details = sdk_usage.output_tokens_details
    assert usage.reasoning_tokens == ((details.thinking_tokens if details else None) or 0)
    assert message.model == final.model
    assert message.response_id == final.id


def plain_data(value: Any) -> Any:
    """An SDK value as plain JSON data."""
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def wire_fixture(path: str) -> bytes:
    return (WIRE / path).read_bytes()


def cuts(data: bytes) -> Iterator[list[bytes]]:
    """The recorded bytes whole, and cut in 7-byte pieces (cuts fall inside UTF-8 and CRLF)."""
    yield [data]
    yield [data[i : i + 7] for i in range(0, len(data), 7)]


CHAT_FIXTURES = [
    "openai/chat-text-include-usage.sse",
    "openai/chat-parallel-tool-calls-usage.sse",
    "openai-compat/deepseek-reasoning-content.sse",
    "openai-compat/groq-reasoning-tool-call-x_groq-usage.sse",
    "openai-compat/openrouter-reasoning-details-comments.sse",
]


# --- the Responses API: the SDK's ResponseStreamState ------------------------------------------


def sdk_events(chunks: list[bytes]) -> tuple[list[Any], Any]:
    """Every event the SDK's ``ResponseStream`` yields, and its final response: the one
    ``get_final_response()`` returns, or (when there was no ``response.completed``) the
    ``response`` of the terminal ``response.incomplete`` event."""
    with (
        openai.OpenAI(api_key="x", base_url="http://test", http_client=http_client(chunks), max_retries=0) as client,
        client.responses.stream(model="m", input="hi") as stream,
    ):
        events = list(stream)
        if events and events[-1].type == "response.completed":
            return events, stream.get_final_response()
        with pytest.raises(RuntimeError, match=r"response\.completed"):
            stream.get_final_response()
        assert events[-1].type == "response.incomplete"
        return events, events[-1].response


def compare_response(message: AssistantMessage, events: list[Any], response: Any) -> None:
    """msgwire's message against the SDK's final ``Response`` (and, for the reasoning
    signature, the ``output_item.done`` events it yielded), on what both keep."""
    done = {e.item.id: e.item for e in events if e.type == "response.output_item.done"}
    expected: list[Any] = []
    for item in response.output:
        if item.type == "reasoning":
            # by design: the signature is the encrypted content of ``output_item.done``; the
            # server encrypts again for ``response.completed`` (a different string)
            signature = done[item.id].encrypted_content
            thinking = ThinkingBlock(
                thinking="\n\n".join(part.text for part in item.summary), signature=signature or None
            )
            if thinking != ThinkingBlock():  # by design: no text and no signature make no block
                expected.append(msgspec.structs.replace(thinking, item_id=item.id))
        elif item.type == "message":
            # by design: a refusal part is the message's text, and the stop reason says so
            for part in item.content:
                text = part.text if part.type == "output_text" else part.refusal
                if text:
                    citations = [_citation(a, text) for a in getattr(part, "annotations", None) or []]
                    expected.append(TextBlock(text=text, citations=citations, item_id=item.id))
        elif item.type == "function_call":
            expected.append(ToolCallBlock(id=item.call_id, name=item.name, arguments=item.arguments, item_id=item.id))
        elif item.type.endswith("_call"):  # built-in tool items (web search...): server tool calls
            [block] = [b for b in message.content if isinstance(b, ServerToolCallBlock) and b.id == item.id]
            assert (block.kind, block.dialect) == (item.type, "openai-responses")
            assert block.name == getattr(item, "name", None) or item.type.removesuffix("_call")
            action = getattr(item, "action", None)
            if action is not None:
                assert json.loads(block.arguments) == action.to_dict()
            # kept whole, as the item of output_item.done
            assert block.data() == done[item.id].to_dict()
            expected.append(block)
        else:  # other items: kept whole, as provider parts
            part = {"type": "provider_part", "dialect": DIALECT, "part": done[item.id].to_dict()}
            expected.append(UnknownBlock(msgspec.json.encode(part), "provider_part"))
    assert [_comparable(b) for b in message.content] == [_comparable(b) for b in expected]
    refusals = "".join(
        p.refusal for i in response.output if i.type == "message" for p in i.content if p.type == "refusal"
    )
    assert message.text == response.output_text + refusals
    if refusals:
        assert message.stop_reason == "refusal"
    assert all(not call.malformed for call in message.tool_calls)
    reason = response.incomplete_details.reason if response.incomplete_details else None
    assert message.raw_stop_reason == (reason or response.status)
    usage, sdk = message.usage, response.usage
    assert usage is not None
    assert usage.input_tokens == sdk.input_tokens
    assert usage.output_tokens == sdk.output_tokens
    assert usage.cache_read_tokens == sdk.input_tokens_details.cached_tokens
    assert usage.cache_write_tokens == 0
    assert usage.reasoning_tokens == sdk.output_tokens_details.reasoning_tokens
    assert message.model == response.model
    assert message.response_id == response.id
    assert message.provider == "openai"


def _citation(annotation: Any, text: str) -> Citation:
    """An SDK annotation as msgwire's citation: the typed fields read off it, the object kept
    (``raw``) unless the typed fields say it all, as OpenAI writes a ``url_citation``."""
    plain = annotation.to_dict()
    start, end = plain.get("start_index"), plain.get("end_index")
    citation = Citation(
        kind=plain["type"],
        url=plain.get("url"),
        title=plain.get("title", plain.get("filename")),
        cited_text=text[start:end] if start is not None and end is not None else None,
        start_index=start,
        end_index=end,
    )
    if plain["type"] != "url_citation":  # said only in part by the typed fields: kept whole
        citation = msgspec.structs.replace(citation, raw=msgspec.Raw(msgspec.json.encode(plain)))
    return citation


def _comparable(block: Any) -> Any:
    """A block as plain data: raw JSON by its decoded value (the SDK writes keys its own way)."""
    if isinstance(block, (UnknownBlock, ServerToolCallBlock)):
        return (block.type, block.data())
    if isinstance(block, TextBlock):
        # a url_citation keeps its object only when OpenAI wrote it otherwise than msgwire would
        # (key order, spacing), which the SDK's parsed object does not show
        raws = [msgspec.json.decode(c.raw) if c.kind != "url_citation" else None for c in block.citations]
        plain = [msgspec.structs.replace(c, raw=msgspec.UNSET) for c in block.citations]
        return (msgspec.structs.replace(block, citations=plain), raws)
    return block


RESPONSES_FIXTURES = sorted(p.name for p in (WIRE / "openai").glob("responses-*.sse"))


def drain(value: Any) -> Any:
    """Pydantic validates ``Iterable[...]`` fields lazily: iterate every one, so that each item
    is validated (and its own iterables too)."""
    if isinstance(value, dict):
        return {k: drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)):
        return [drain(v) for v in value]
    return value
