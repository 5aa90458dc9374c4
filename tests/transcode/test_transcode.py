"""``msgwire.transcode``: every recorded stream rewritten into every dialect.

For each pair the output is read back twice: by msgwire's own decoder of the target dialect,
which must give the source's message as the target can carry it (``carried`` below spells out
what each target keeps), and, for the three dialects that have one, by the official SDK's
stream reader (openai ``chat.completions.stream`` and ``responses.stream``, anthropic
``messages.stream``), compared with the same functions the differential tests use. Failures
of the source end the output with the target's error frame, which the SDKs raise on.

Split invariance and error frames of cut streams are also checked in Rust
(``rust/core/tests/transcode.rs``), where ids and times are fixed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import msgspec
import openai
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    AssistantMessage,
    Citation,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
)
from msgwire.errors import ProviderError, StreamError, TransportError, TruncatedStreamError
from msgwire.sse import iter_sse
from tests._support.sdk import (
    anthropic_final,
    compare_chat,
    compare_messages,
    compare_response,
    http_client,
    openai_final,
    sdk_events,
)
from tests._support.strategies import examples, rust_trim
from tests._support.wire import FIXTURE_IDS, FIXTURES, dialect_of

TARGETS = ["openai", "openai-responses", "anthropic", "gemini", "ollama"]
#: Targets whose stream has no block boundaries: adjacent text (or thinking) runs together.
UNBOUNDED = {"openai", "gemini", "ollama"}
#: Targets that carry a thinking signature.
SIGNED = {"anthropic", "openai-responses", "gemini"}


def _outcome(data: bytes, dialect: str) -> tuple[AssistantMessage, StreamError | None]:
    try:
        return msgwire.assemble(data, dialect), None
    except StreamError as failure:
        return failure.partial_message, failure


def _transcoded(data: bytes, source: str, target: str, *, chunk: int | None = None) -> tuple[bytes, Any]:
    chunks = [data] if chunk is None else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    out: list[bytes] = []
    try:
        out.extend(msgwire.transcode(iter(chunks), source, target))
    except StreamError as failure:
        return b"".join(out), failure
    return b"".join(out), None


# --- what a target carries ------------------------------------------------------------------


def _object_arguments(arguments: str) -> str:
    if not rust_trim(arguments):
        return "{}"
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return arguments
    return json.dumps({"_raw": arguments}, ensure_ascii=False, separators=(",", ":"))


ANTHROPIC_CITATIONS = {
    "char_location",
    "page_location",
    "content_block_location",
    "search_result_location",
    "web_search_result_location",
}
RESPONSES_ANNOTATIONS = {"url_citation", "file_citation", "container_file_citation", "file_path"}


def _citations(block: TextBlock, target: str) -> list[Citation]:
    """The citations a target stream carries: its own kinds as they came; for Responses also
    any with a URL, as a ``url_citation`` of its span (the whole text when it has none)."""
    own = {"anthropic": ANTHROPIC_CITATIONS, "openai-responses": RESPONSES_ANNOTATIONS}.get(target, set())
    carried: list[Citation] = []
    for c in block.citations:
        if (c.kind in own and c.raw is not msgspec.UNSET) or (target == "gemini" and c.kind == "grounding"):
            carried.append(c)
        elif target == "openai-responses" and c.url is not None:
            start, end = (c.start_index, c.end_index) if c.end_index is not None else (0, len(block.text))
            assert start is not None
            title = c.title if c.title is not None else c.url
            carried.append(
                Citation(
                    kind="url_citation",
                    url=c.url,
                    title=title,
                    cited_text=block.text[start:end],
                    start_index=start,
                    end_index=end,
                )
            )
    return carried


def _without_item_ids(block: Any) -> Any:
    """Item ids are the provider's (a Responses stream makes its own up): compared apart."""
    if isinstance(block, (TextBlock, ThinkingBlock, ToolCallBlock)) and block.item_id is not None:
        return msgspec.structs.replace(block, item_id=None)
    return block


def _blocks(message: AssistantMessage, target: str) -> list[Any]:
    blocks: list[Any] = []
    for block in message.content:
        if isinstance(block, UnknownBlock):
            continue  # provider parts kept whole have no events: not transcoded
        if isinstance(block, (ServerToolCallBlock, ServerToolResultBlock)):
            if block.dialect == target:  # only to its own dialect, whole
                blocks.append(block)
            continue
        if isinstance(block, TextBlock):
            block = TextBlock(text=block.text, citations=_citations(block, target))
        if isinstance(block, ThinkingBlock):
            if block.redacted is not None:
                if target == "openai-responses":  # the item's encrypted_content, read back as a signature
                    block = ThinkingBlock(signature=block.redacted)
                elif target != "anthropic":
                    continue
            else:
                signature = block.signature if target in SIGNED else None
                if not block.thinking and signature is None:
                    continue
                block = ThinkingBlock(thinking=block.thinking, signature=signature)
        if isinstance(block, TextBlock) and not block.text:
            continue
        if isinstance(block, ToolCallBlock):
            arguments = _object_arguments(block.arguments) if target in ("gemini", "ollama") else block.arguments
            if target in ("openai", "openai-responses") and not rust_trim(arguments):
                arguments = "{}"  # what json.loads reads
            elif target == "anthropic" and not rust_trim(arguments):
                arguments = ""  # whitespace alone is no arguments: no input_json_delta, as for none
            block = ToolCallBlock(id=block.id, name=block.name, arguments=arguments, malformed=block.malformed)
            if target in ("gemini", "ollama"):
                block = msgspec.structs.replace(block, malformed=False)
        last = blocks[-1] if blocks else None
        if target in UNBOUNDED and isinstance(block, TextBlock) and isinstance(last, TextBlock):
            blocks[-1] = TextBlock(text=last.text + block.text, citations=last.citations + block.citations)
            continue
        mergeable = isinstance(last, ThinkingBlock) and last.redacted is None
        if target in UNBOUNDED and isinstance(block, ThinkingBlock) and mergeable and block.redacted is None:
            assert isinstance(last, ThinkingBlock)
            signature = (last.signature or "") + (block.signature or "") or None
            blocks[-1] = ThinkingBlock(thinking=last.thinking + block.thinking, signature=signature)
            continue
        blocks.append(block)
    return blocks


def _stop_reason(message: AssistantMessage, target: str) -> str | None:
    """The stop reason the target's stream says, read back: the writers' tables
    (``rust/core/src/response/*.rs``, ``STOP``) through the target's decoder."""
    stop = message.stop_reason
    finished = "tool_use" if message.tool_calls else "end_turn"  # what a plain "stop" reads back as
    match target:
        case "openai":
            return stop if stop in ("length", "content_filter", "tool_use") else finished
        case "anthropic":
            if stop in ("refusal", "content_filter"):
                return "refusal"
            return stop if stop in ("length", "tool_use", "pause", "end_turn") else "end_turn"
        case "openai-responses":
            return stop if stop in ("length", "content_filter") else finished
        case "gemini":
            if stop in ("refusal", "content_filter"):
                return "content_filter"
            if stop in ("length", "error"):
                return stop
            return finished if stop in ("end_turn", "tool_use") else "unknown"
        case _:
            return "length" if stop == "length" else finished


def _usage(message: AssistantMessage, target: str) -> Usage | None:
    usage = message.usage
    if usage is None and target in ("openai", "openai-responses"):
        return None
    usage = usage or Usage()
    match target:
        case "openai" | "openai-responses":
            return msgspec.structs.replace(usage, cache_write_tokens=0)
        case "anthropic":
            return msgspec.structs.replace(usage, reasoning_tokens=0)
        case "gemini":
            return msgspec.structs.replace(usage, cache_write_tokens=0)
        case _:
            return Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)


def carried(message: AssistantMessage, source: str, target: str) -> dict[str, Any]:
    """What of ``message`` (decoded from a ``source`` stream) a ``target`` stream carries."""
    return {
        "content": _blocks(message, target),
        "stop_reason": _stop_reason(message, target),
        "usage": _usage(message, target),
        "model": message.model,
    }


def read_back(message: AssistantMessage) -> dict[str, Any]:
    return {
        "content": [_without_item_ids(b) for b in message.content],
        "stop_reason": message.stop_reason,
        "usage": message.usage,
        "model": message.model,
    }


# --- every recording into every dialect ------------------------------------------------------

PAIRS = [(path, target) for path in FIXTURES for target in TARGETS]
PAIR_IDS = [f"{name}->{target}" for name in FIXTURE_IDS for target in TARGETS]


@pytest.mark.parametrize(("path", "target"), PAIRS, ids=PAIR_IDS)
def test_transcoded_stream_reads_back_as_the_source_message(path: Path, target: str) -> None:
    source = dialect_of(path)
    data = path.read_bytes()
    _, failure = _outcome(data, source)
    transcoder = msgwire.Transcoder(source, target)
    out = b""
    transcode_failure: StreamError | None = None
    try:
        for i in range(0, len(data), 97):
            out += transcoder.feed(data[i : i + 97])
        out += transcoder.finish()
    except StreamError as error:
        out += error.output
        transcode_failure = error
    # the source message as the transcoder decoded it (calls without ids got its synthetic ones)
    message = transcoder.message()
    assert type(transcode_failure) is type(failure)
    if failure is not None:
        assert transcode_failure is not None
        assert transcode_failure.output  # the error frame, yielded before the raise
        with pytest.raises(ProviderError) as back:
            msgwire.assemble(out, target)
        if isinstance(failure, ProviderError) and target != "ollama":
            assert back.value.error_type == failure.error_type
        assert back.value.partial_message.text == message.text
        return
    back = msgwire.assemble(out, target)
    assert read_back(back) == carried(message, source, target)
    if target != "ollama":  # Ollama's stream has no response id
        assert back.response_id is not None
    if message.response_id is not None and target != "ollama":
        assert back.response_id == message.response_id


def _ok(path: Path) -> bool:
    return _outcome(path.read_bytes(), dialect_of(path))[1] is None


OK_FIXTURES = [p for p in FIXTURES if _ok(p)]
OK_IDS = [f"{p.parent.name}/{p.name}" for p in OK_FIXTURES]


@pytest.mark.parametrize("path", OK_FIXTURES, ids=OK_IDS)
def test_openai_sdk_reads_transcoded_chat_chunks(path: Path) -> None:
    out, failure = _transcoded(path.read_bytes(), dialect_of(path), "openai")
    assert failure is None
    completion = openai_final([out[i : i + 61] for i in range(0, len(out), 61)])
    compare_chat(msgwire.assemble(out, "openai"), completion)


@pytest.mark.parametrize("path", OK_FIXTURES, ids=OK_IDS)
def test_anthropic_sdk_reads_transcoded_messages_stream(path: Path) -> None:
    out, failure = _transcoded(path.read_bytes(), dialect_of(path), "anthropic")
    assert failure is None
    final = anthropic_final([out[i : i + 61] for i in range(0, len(out), 61)])
    compare_messages(msgwire.assemble(out, "anthropic"), final)


@pytest.mark.parametrize("path", OK_FIXTURES, ids=OK_IDS)
def test_openai_sdk_reads_transcoded_responses_stream(path: Path) -> None:
    out, failure = _transcoded(path.read_bytes(), dialect_of(path), "openai-responses")
    assert failure is None
    events, response = sdk_events([out[i : i + 61] for i in range(0, len(out), 61)])
    compare_response(msgwire.assemble(out, "openai-responses"), events, response)
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(numbers)))


# --- failures -------------------------------------------------------------------------------

ERROR_FIXTURES = [p for p in FIXTURES if not _ok(p)]


def test_error_fixtures_exist() -> None:
    assert len(ERROR_FIXTURES) >= 2


@pytest.mark.parametrize("path", ERROR_FIXTURES, ids=[p.name for p in ERROR_FIXTURES])
def test_sdks_raise_on_a_transcoded_provider_error(path: Path) -> None:
    data = path.read_bytes()
    source = dialect_of(path)
    _, failure = _outcome(data, source)
    assert isinstance(failure, ProviderError)
    out, _ = _transcoded(data, source, "openai")
    with pytest.raises(openai.APIError) as chat_failed:
        openai_final([out])
    assert failure.provider_message is not None
    assert failure.provider_message in chat_failed.value.message
    out, _ = _transcoded(data, source, "anthropic")
    with pytest.raises(anthropic.APIStatusError) as messages_failed:
        anthropic_final([out])
    assert failure.provider_message in str(messages_failed.value)
    out, _ = _transcoded(data, source, "openai-responses")
    events, _ = _responses_events_until_failure(out)
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]


def _responses_events_until_failure(out: bytes) -> tuple[list[Any], Any]:

    with (
        openai.OpenAI(api_key="x", base_url="http://test", http_client=http_client([out]), max_retries=0) as client,
        client.responses.stream(model="m", input="hi") as stream,
    ):
        return list(stream), None


def test_cut_source_ends_with_error_frame_and_raises() -> None:
    data = (FIXTURES[0].parent.parent / "anthropic" / "thinking-signature-text.sse").read_bytes()
    cut = data[: len(data) // 2]
    out: list[bytes] = []
    with pytest.raises(TruncatedStreamError) as failed:
        out.extend(msgwire.transcode(cut, "anthropic", "openai"))
    body = b"".join(out)
    assert body.endswith(b'"type":"stream_truncated","code":null}}\n\n')
    assert b"[DONE]" not in body
    assert failed.value.output
    assert body.endswith(failed.value.output)
    assert failed.value.partial_message.stop_reason == "error"
    assert failed.value.partial_message.thinking  # what arrived is kept


def test_failing_source_is_a_transport_error_with_an_error_frame() -> None:
    data = (FIXTURES[0].parent.parent / "openai" / "chat-text-include-usage.sse").read_bytes()

    def source() -> Any:
        yield data[:200]
        raise ConnectionResetError("peer went away")

    out: list[bytes] = []
    with pytest.raises(TransportError) as failed:
        out.extend(msgwire.transcode(source(), "openai", "anthropic"))
    assert out[-1].startswith(b"event: error\n")
    assert b"peer went away" in out[-1]
    assert isinstance(failed.value.__cause__, ConnectionResetError)


def test_push_style_transcoder() -> None:
    data = (FIXTURES[0].parent.parent / "openai" / "chat-parallel-tool-calls-usage.sse").read_bytes()
    transcoder = msgwire.Transcoder("openai", "anthropic")
    out = b"".join(transcoder.feed(data[i : i + 10]) for i in range(0, len(data), 10)) + transcoder.finish()
    assert out.endswith(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    source, back = transcoder.message(), msgwire.assemble(out, "anthropic")
    assert len(source.tool_calls) == 2
    assert [(c.id, c.name, c.arguments) for c in back.tool_calls] == [
        (c.id, c.name, c.arguments) for c in source.tool_calls
    ]
    assert (back.stop_reason, back.usage) == (source.stop_reason, source.usage)


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        list(msgwire.transcode(b"", "openai", "cohere"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_atranscode_matches_transcode() -> None:
    data = (FIXTURES[0].parent.parent / "gemini" / "thought-parts-then-text.sse").read_bytes()

    async def source() -> Any:
        for i in range(0, len(data), 50):
            yield data[i : i + 50]

    out = [chunk async for chunk in msgwire.atranscode(source(), "gemini", "openai-responses")]
    assert msgwire.assemble(b"".join(out), "openai-responses").text == msgwire.assemble(data, "gemini").text


# --- a Responses source without the events that announce parts --------------------------------

REALWORLD = Path(__file__).parents[1] / "fixtures" / "realworld" / "openai-responses"
_PART_EVENTS = {
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.content_part.added",
    "response.content_part.done",
}


def _without_part_events(data: bytes) -> tuple[bytes, dict[str, Any]]:
    """The stream without the events that only announce or repeat a part (as LiteLLM's proxy
    sends it), and its terminal ``response``."""
    kept = [e for e in iter_sse([data]) if e.event not in _PART_EVENTS]
    return b"".join(f"event: {e.event}\ndata: {e.data}\n\n".encode() for e in kept), json.loads(kept[-1].data)[
        "response"
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_a_responses_summary_without_part_events_is_transcoded_once(target: str) -> None:
    """Issue 27, bug 6: a summary streamed without ``reasoning_summary_part.added`` was appended
    again from ``output_item.done``, and the transcoder wrote it twice (this recording's 417
    characters of summary went out as 834)."""
    data, final = _without_part_events((REALWORLD / "openai-gpt-5-reasoning-summary-text.sse").read_bytes())
    summary = "\n\n".join(p["text"] for item in final["output"] if item["type"] == "reasoning" for p in item["summary"])
    assert len(summary) == 417
    out, failure = _transcoded(data, "openai-responses", target, chunk=61)
    assert failure is None
    back = msgwire.assemble(out, target)
    assert back.thinking == summary
    source = msgwire.assemble(data, "openai-responses")
    assert read_back(back) == carried(source, "openai-responses", target)
    if target == "anthropic":
        [thinking] = [b for b in anthropic_final([out]).content if b.type == "thinking"]
        assert thinking.thinking == summary


# --- interleaved parallel tool calls -----------------------------------------------------------


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@examples(40)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.text(max_size=6)), max_size=30),
    st.sampled_from(["anthropic", "openai-responses", "gemini", "ollama", "openai"]),
)
# found by make test-deep: whitespace-only arguments went out, then the "{}" of a blank call after them
@example(pieces=[(0, "\r")], target="openai")
@example(pieces=[(0, " "), (1, "\n"), (0, "\t")], target="openai-responses")
@example(pieces=[(2, " "), (2, '{"a"'), (2, ": 1}")], target="anthropic")
@example(pieces=[(1, "\r\n")], target="anthropic")
def test_interleaved_tool_arguments_are_serialized_per_call(pieces: list[tuple[int, str]], target: str) -> None:
    """OpenAI servers may interleave the argument fragments of parallel calls; targets with one
    block open at a time get each call whole and in order."""
    body = [_chat_chunk({"role": "assistant", "content": ""})]
    for index in range(3):
        call = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": f"f{index}"}}
        body.append(_chat_chunk({"tool_calls": [call]}))
    for index, text in pieces:
        body.append(_chat_chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]}))
    body += [_chat_chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    data = b"".join(body)
    source = msgwire.assemble(data, "openai")
    out, failure = _transcoded(data, "openai", target, chunk=33)
    assert failure is None
    back = msgwire.assemble(out, target)
    assert read_back(back) == carried(source, "openai", target)


# --- every stop reason --------------------------------------------------------------------------


def _anthropic_stream(stop_reason: str) -> bytes:
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "model": "m",
                    "content": [],
                    "usage": {"input_tokens": 5, "output_tokens": 0},
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 2}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode() for kind, data in events)


def _chat_stream(finish_reason: str) -> bytes:
    return b"".join(
        [
            _chat_chunk({"role": "assistant", "content": "hi"}),
            _chat_chunk({}, finish_reason),
            b"data: [DONE]\n\n",
        ]
    )


STOPS = [("anthropic", r) for r in ("end_turn", "max_tokens", "tool_use", "pause_turn", "refusal", "stop_sequence")]
STOPS += [("openai", r) for r in ("stop", "length", "content_filter", "eos")]


@pytest.mark.parametrize(("source", "raw"), STOPS, ids=[f"{s}:{r}" for s, r in STOPS])
@pytest.mark.parametrize("target", TARGETS)
def test_every_stop_reason_reads_back_as_the_target_says_it(source: str, raw: str, target: str) -> None:
    data = _anthropic_stream(raw) if source == "anthropic" else _chat_stream(raw)
    transcoder = msgwire.Transcoder(source, target)
    out = transcoder.feed(data) + transcoder.finish()
    message = transcoder.message()
    assert message.raw_stop_reason == raw
    back = msgwire.assemble(out, target)
    assert read_back(back) == carried(message, source, target)
    if target == source and raw != "eos":  # the provider's own word survives a trip to the same dialect
        assert back.raw_stop_reason == raw
    if raw == "eos":  # a compatible server's word: OpenAI's own is written (the SDK types refuse others)
        assert back.raw_stop_reason == {"openai": "stop", "ollama": "stop", "gemini": "STOP"}.get(
            target, back.raw_stop_reason
        )


def test_made_up_call_ids_agree_between_assemble_and_transcode() -> None:
    """A Gemini call without an id gets one derived from the response (its id and the payload
    that carried the call): the same bytes give the same id, read directly or transcoded."""
    body = (
        Path(__file__).parents[1] / "fixtures" / "realworld" / "gemini" / "gemini-2.5-pro-parallel-function-calls.sse"
    ).read_bytes()
    direct = msgwire.assemble(body, "gemini")
    via_openai = msgwire.assemble(b"".join(msgwire.transcode(body, "gemini", "openai")), "openai")
    assert [c.id for c in direct.tool_calls] == [c.id for c in via_openai.tool_calls]
    assert len({c.id for c in direct.tool_calls}) == len(direct.tool_calls) > 1
    assert [c.id for c in msgwire.assemble(body, "gemini").tool_calls] == [c.id for c in direct.tool_calls]
