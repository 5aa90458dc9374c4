"""msgwire's assembly against the official accumulators: the ``openai`` SDK's
``ChatCompletionStreamState`` (through ``client.chat.completions.stream``) and the ``anthropic``
SDK's ``MessageStream`` (``client.messages.stream``), on the same bytes.

Both SDKs are driven end to end over a mock HTTP transport that streams the bytes in the drawn
network chunks, so their SSE decoders are under test too. Three kinds of input:

1. generated streams (``streamgen``): msgwire, the SDK and the generator's plan must agree;
2. the recorded streams in ``tests/fixtures/wire``;
3. hand-written streams where an SDK breaks and msgwire does not: each asserts what the SDK
   does (so a fixed SDK shows up here) next to what msgwire does.

What differs by design (not compared):

- OpenAI reasoning (``reasoning_content`` / ``reasoning``): the SDK has no field for it; it
  keeps it only as an untyped extra attribute, concatenated like any string. We compare our
  thinking text with that attribute.
- OpenAI ``refusal``: the SDK keeps it apart from ``content``; msgwire makes it the message's
  text with ``stop_reason == "refusal"``.
- Anthropic usage: the SDK reports ``input_tokens`` without cache reads and writes; msgwire's
  ``input_tokens`` counts every input token (as OpenAI does). The parts are compared.
- Anthropic text blocks that got no text: the SDK keeps them, msgwire drops them.
- Anthropic citations: msgwire's text blocks keep them (``TextBlock.citations``, each with the
  SDK's object as ``raw``); compared one by one.
- Ids: msgwire gives every message its own id; the provider's id is ``response_id``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import openai
import pytest
from hypothesis import given

import msgwire
from msgwire import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from msgwire.errors import ProviderError, TruncatedStreamError
from tests._support.sdk import (
    CHAT_FIXTURES,
    anthropic_final,
    compare_chat,
    compare_messages,
    cuts,
    openai_final,
    openai_stream,
    ours,
    wire_fixture,
)
from tests._support.strategies import examples
from tests._support.streamgen import ChatStream, MessagesStream, chat_streams, messages_streams

WIRE = Path(__file__).parents[1] / "fixtures" / "wire"
EXAMPLES = examples(100)


# --- driving the SDKs over a mock transport -------------------------------------------------


# --- comparisons ------------------------------------------------------------------------------


_CHAT_STOP = {"stop": "end_turn", "length": "length", "tool_calls": "tool_use"}
_MESSAGES_STOP = {"end_turn": "end_turn", "stop_sequence": "end_turn", "max_tokens": "length", "tool_use": "tool_use"}


def check_chat_plan(message: AssistantMessage, codes: list[str], plan: ChatStream) -> None:
    """msgwire's message against what the generated stream was made of."""
    kinds = [type(b).__name__ for b in message.content]
    expected = []
    if plan.reasoning:
        expected.append("ThinkingBlock")
    if plan.text or plan.refusal:
        expected.append("TextBlock")
    expected += ["ToolCallBlock"] * len(plan.tool_calls)
    assert kinds == expected
    assert message.thinking == plan.reasoning
    assert message.text == plan.text + plan.refusal
    assert [(b.id, b.name, b.arguments, b.malformed) for b in message.tool_calls] == [
        (c.id, c.name, c.arguments, False) for c in plan.tool_calls
    ]
    assert message.raw_stop_reason == plan.finish_reason
    if plan.tool_calls:
        assert message.stop_reason == "tool_use"
    elif plan.refusal and plan.finish_reason == "stop":
        assert message.stop_reason == "refusal"
    else:
        assert message.stop_reason == _CHAT_STOP[plan.finish_reason]
    stop_with_tools = plan.finish_reason == "stop" and bool(plan.tool_calls)
    assert codes == (["stop_with_tool_calls"] if stop_with_tools else [])
    if plan.usage is None:
        assert message.usage is None
    else:
        assert message.usage == msgwire.Usage(
            input_tokens=plan.usage["prompt_tokens"],
            output_tokens=plan.usage["completion_tokens"],
            cache_read_tokens=plan.usage.get("prompt_tokens_details", {}).get("cached_tokens", 0),
            reasoning_tokens=plan.usage.get("completion_tokens_details", {}).get("reasoning_tokens", 0),
        )
    assert (message.model, message.response_id, message.provider) == (plan.model, plan.response_id, "openai")


def check_messages_plan(message: AssistantMessage, codes: list[str], plan: MessagesStream) -> None:
    wanted = [b for b in plan.blocks if not (b.kind == "text" and b.text == "")]
    assert len(message.content) == len(wanted)
    for block, want in zip(message.content, wanted, strict=True):
        if want.kind == "text":
            assert block == TextBlock(text=want.text)
        elif want.kind == "thinking":
            assert block == ThinkingBlock(thinking=want.text, signature=want.signature)
        elif want.kind == "redacted_thinking":
            assert block == ThinkingBlock(redacted=want.data)
        else:
            assert isinstance(block, ToolCallBlock)
            assert (block.id, block.name, block.arguments) == (want.id, want.name, want.arguments)
            assert not block.malformed
            assert block.parsed_arguments() == want.input
    assert message.raw_stop_reason == plan.stop_reason
    assert message.stop_reason == _MESSAGES_STOP[plan.stop_reason]
    assert message.usage == msgwire.Usage(
        input_tokens=plan.input_tokens + plan.cache_read_input_tokens + plan.cache_creation_input_tokens,
        output_tokens=plan.output_tokens,
        cache_read_tokens=plan.cache_read_input_tokens,
        cache_write_tokens=plan.cache_creation_input_tokens,
        reasoning_tokens=plan.thinking_tokens or 0,
    )
    assert (message.model, message.response_id, message.provider) == (plan.model, plan.message_id, "anthropic")
    assert codes == []


# --- 1. generated streams -------------------------------------------------------------------


@EXAMPLES
@given(chat_streams())
def test_generated_chat_stream_matches_openai_sdk(plan: ChatStream) -> None:
    message, codes = ours(plan.chunks, "openai")
    check_chat_plan(message, codes, plan)
    completion = openai_final(plan.chunks)
    compare_chat(message, completion)
    if plan.reasoning_field is not None:  # the SDK keeps reasoning only as an untyped extra
        assert getattr(completion.choices[0].message, plan.reasoning_field) == plan.reasoning


@EXAMPLES
@given(messages_streams())
def test_generated_messages_stream_matches_anthropic_sdk(plan: MessagesStream) -> None:
    message, codes = ours(plan.chunks, "anthropic")
    check_messages_plan(message, codes, plan)
    compare_messages(message, anthropic_final(plan.chunks))


# --- 2. recorded streams --------------------------------------------------------------------


@pytest.mark.parametrize("path", CHAT_FIXTURES)
def test_recorded_chat_stream_matches_openai_sdk(path: str) -> None:
    for chunks in cuts(wire_fixture(path)):
        message, codes = ours(chunks, "openai")
        assert codes == []
        compare_chat(message, openai_final(chunks))


def test_recorded_chat_fixtures_are_all_covered() -> None:
    """Every Chat Completions recording is compared somewhere in this module."""
    covered = {*CHAT_FIXTURES, *CHAT_FIXTURES_SDK_DIFFERS}
    recorded = {f"openai/{p.name}" for p in (WIRE / "openai").glob("chat-*.sse")}
    recorded |= {f"openai-compat/{p.name}" for p in (WIRE / "openai-compat").glob("*.sse")}
    assert recorded == covered


def test_recorded_openrouter_sdk_concatenates_repeated_fields() -> None:
    """SDK bug: ``accumulate_delta`` concatenates every string it sees twice. OpenRouter repeats
    ``role`` on every chunk and ``format`` on every reasoning detail, so the SDK's ``role``
    becomes ``"assistantassistant…"``. msgwire reads neither as a delta. The signature, sent
    once, survives in both."""
    chunks = [wire_fixture("openai-compat/openrouter-reasoning-details-comments.sse")]
    message, _ = ours(chunks, "openai")
    sdk = openai_final(chunks).choices[0].message
    assert sdk.role.startswith("assistantassistant")
    assert sdk.reasoning_details[0]["format"].startswith("anthropic-claude-v1anthropic-claude-v1")
    [thinking] = [b for b in message.content if isinstance(b, ThinkingBlock)]
    assert thinking.signature == sdk.reasoning_details[0]["signature"]


def test_recorded_groq_sdk_concatenates_channel() -> None:
    """The same SDK bug on Groq: ``channel: "analysis"`` on every reasoning delta."""
    chunks = [wire_fixture("openai-compat/groq-reasoning-tool-call-x_groq-usage.sse")]
    sdk = openai_final(chunks).choices[0].message
    assert sdk.channel.startswith("analysisanalysis")


CHAT_FIXTURES_SDK_DIFFERS = [
    "openai-compat/mistral-magistral-content-array-thinking.sse",
    "openai-compat/openrouter-midstream-error.sse",
    "openai-compat/groq-event-error.sse",
]


def test_recorded_magistral_array_content_sdk_drops_thinking() -> None:
    """Magistral sends ``delta.content`` as an array of typed parts (thinking) before plain_data
    strings. The SDK cannot add a list to the string it already holds: it drops every array
    delta silently (with a pydantic serializer warning per chunk) and loses the reasoning.
    msgwire keeps the reasoning as a thinking block and the same text."""
    for chunks in cuts(wire_fixture("openai-compat/mistral-magistral-content-array-thinking.sse")):
        message, codes = ours(chunks, "openai")
        assert codes == []
        assert message.thinking.startswith("Okay, the user is asking how to cross the street.")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            completion = openai_final(chunks)
        assert any("PydanticSerializationUnexpectedValue" in str(w.message) for w in caught)
        sdk = completion.choices[0].message
        assert sdk.content == message.text
        assert "Okay" not in (sdk.content or "")
        assert completion.choices[0].finish_reason == message.raw_stop_reason == "stop"


@pytest.mark.parametrize(
    ("path", "provider_message"),
    [
        ("openai-compat/openrouter-midstream-error.sse", "Token limit reached"),
        ("openai-compat/groq-event-error.sse", "Tool call validation failed"),
    ],
)
def test_recorded_in_band_errors_raise_on_both_sides(path: str, provider_message: str) -> None:
    """An error inside the stream raises on both sides; msgwire's error also carries the
    message assembled so far (the SDK's ``APIError`` carries only the error body)."""
    for chunks in cuts(wire_fixture(path)):
        with pytest.raises(ProviderError) as ours_failed:
            msgwire.assemble(iter(chunks), "openai")
        with pytest.raises(openai.APIError) as sdk_failed:
            openai_final(chunks)
        assert ours_failed.value.provider_message is not None
        assert ours_failed.value.provider_message.startswith(provider_message)
        assert sdk_failed.value.message.startswith(provider_message)
        partial = ours_failed.value.partial_message
        assert partial.stop_reason == "error"
        assert partial.content  # what arrived before the error is kept


ANTHROPIC_FIXTURES = sorted(p.name for p in (WIRE / "anthropic").glob("*.sse"))


@pytest.mark.parametrize("name", ANTHROPIC_FIXTURES)
def test_recorded_messages_stream_matches_anthropic_sdk(name: str) -> None:
    for chunks in cuts(wire_fixture(f"anthropic/{name}")):
        message, codes = ours(chunks, "anthropic")
        final = anthropic_final(chunks)
        compare_messages(message, final)  # citations included
        assert codes == []


# --- 3. where an SDK breaks -----------------------------------------------------------------


def _chat(*payloads: str, done: bool = True) -> bytes:
    body = "".join(f"data: {p}\n\n" for p in payloads) + ("data: [DONE]\n\n" if done else "")
    return body.encode()


def _chunk(delta: str, finish: str | None = None, *, index: int = 0) -> str:
    reason = "null" if finish is None else f'"{finish}"'
    return (
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
        f'"choices":[{{"index":{index},"delta":{delta},"finish_reason":{reason}}}]}}'
    )


def test_tool_call_without_index_sdk_raises() -> None:
    """Gemini's OpenAI-compatible endpoint sends whole tool calls without ``index``. The SDK's
    ``accumulate_delta`` requires one and raises; msgwire keys the calls by id."""
    data = _chat(
        _chunk('{"role":"assistant","content":null}'),
        _chunk('{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\\"x\\":1}"}}]}'),
        _chunk('{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}'),
        _chunk("{}", "stop"),
    )
    with pytest.raises(TypeError, match="list indices must be integers"):
        openai_final([data])
    message, codes = ours([data], "openai")
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("a", "f", '{"x":1}'), ("b", "g", "{}")]
    assert message.stop_reason == "tool_use"
    assert codes == ["tool_call_without_index", "tool_call_without_index", "stop_with_tool_calls"]


def test_repeated_index_with_new_id_sdk_merges_two_calls() -> None:
    """A server that reuses ``index`` 0 for a second call: the SDK merges both into one call,
    concatenating the ids, the names and the arguments; msgwire keeps two calls."""
    data = _chat(
        _chunk('{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}'),
        _chunk('{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}'),
        _chunk("{}", "tool_calls"),
    )
    [call] = openai_final([data]).choices[0].message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == ("ab", "fg", "{}{}")
    message, codes = ours([data], "openai")
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("a", "f", "{}"), ("b", "g", "{}")]
    assert codes == ["repeated_index_new_id"]


def test_fresh_id_on_every_fragment_sdk_concatenates_ids() -> None:
    """LM Studio sends each fragment of one call with a new id and no name: the SDK's call id
    becomes all of them end to end; msgwire keeps the first (``tool_call_id_changed``)."""
    fragment = '{"tool_calls":[{"index":0,"id":"%s","type":"function","function":{"arguments":"%s"}}]}'
    data = _chat(
        _chunk('{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}'),
        _chunk(fragment % ("c2", '{\\"x\\":')),
        _chunk(fragment % ("c3", "1}")),
        _chunk("{}", "tool_calls"),
    )
    [call] = openai_final([data]).choices[0].message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == ("c1c2c3", "f", '{"x":1}')
    message, codes = ours([data], "openai")
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("c1", "f", '{"x":1}')]
    assert codes == ["tool_call_id_changed"]


def test_name_repeated_on_every_delta_sdk_concatenates() -> None:
    """Servers that repeat ``id`` (DeepSeek and Qwen, per langchain4j#4544) and ``name`` on every
    delta: the SDK concatenates them; msgwire keeps the first and recognises the call."""
    head = '{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"%s"}}]}'
    data = _chat(_chunk(head % '{\\"x\\":'), _chunk(head % "1}"), _chunk("{}", "tool_calls"))
    [call] = openai_final([data]).choices[0].message.tool_calls
    assert (call.id, call.function.name) == ("aa", "ff")
    message, codes = ours([data], "openai")
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("a", "f", '{"x":1}')]
    assert codes == []


def test_length_finish_sdk_raises() -> None:
    """A reply cut by ``max_tokens`` is still a reply: msgwire returns it with
    ``stop_reason == "length"``. The SDK's ``get_final_completion()`` raises
    ``LengthFinishReasonError`` instead, even though no response format was asked for; the text
    is only reachable through the exception."""
    data = _chat(_chunk('{"role":"assistant","content":"The answer is"}'), _chunk("{}", "length"))
    with openai_stream([data]) as stream, pytest.raises(openai.LengthFinishReasonError) as refused:
        stream.get_final_completion()
    assert refused.value.completion.choices[0].message.content == "The answer is"
    message, codes = ours([data], "openai")
    assert (message.text, message.stop_reason, message.raw_stop_reason, codes) == (
        "The answer is",
        "length",
        "length",
        [],
    )


def test_truncated_chat_stream_sdk_returns_partial_silently() -> None:
    """A connection cut mid-call: the SDK's final completion looks complete (no finish_reason,
    but no error either, and cut arguments); msgwire raises, with the partial message marked
    ``error`` and the cut call ``malformed``."""
    data = _chat(
        _chunk('{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}'),
        _chunk('{"tool_calls":[{"index":0,"function":{"arguments":"{\\"path\\": \\"/et"}}]}'),
        done=False,
    )
    completion = openai_final([data])
    assert completion.choices[0].finish_reason is None
    assert completion.choices[0].message.tool_calls[0].function.arguments == '{"path": "/et'
    with pytest.raises(TruncatedStreamError) as failed:
        msgwire.assemble([data], "openai")
    partial = failed.value.partial_message
    assert partial.stop_reason == "error"
    assert partial.tool_calls[0].malformed
    assert partial.tool_calls[0].arguments == '{"path": "/et'


def test_azure_prompt_filter_frame_both_skip() -> None:
    """Azure's first frame has empty ``choices``, ``id`` and ``model``. The SDK skips it
    (``object`` is not ``chat.completion.chunk``); msgwire ignores its empty fields. Both take
    the id and model of the next chunk."""
    prelude = (
        '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":'
        '[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}'
    )
    data = _chat(prelude, _chunk('{"role":"assistant","content":"Hi"}'), _chunk("{}", "stop"))
    for chunks in cuts(data):
        message, codes = ours(chunks, "openai")
        compare_chat(message, openai_final(chunks))
        assert (message.model, message.response_id, codes) == ("gpt-4o", "chatcmpl-1", [])


_MESSAGE_START = (
    '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",'
    '"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}'
)


def _messages(*events: tuple[str, str]) -> bytes:
    return "".join(f"event: {name}\ndata: {data}\n\n" for name, data in events).encode()


def _tool_use_stream(*fragments: str) -> bytes:
    """An Anthropic stream with one tool call whose input arrives in ``fragments``."""
    deltas = [
        (
            "content_block_delta",
            json.dumps(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": fragment},
                }
            ),
        )
        for fragment in fragments
    ]
    return _messages(
        ("message_start", _MESSAGE_START),
        (
            "content_block_start",
            '{"type":"content_block_start","index":0,"content_block":'
            '{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}',
        ),
        *deltas,
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        ("message_delta", '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}'),
        ("message_stop", '{"type":"message_stop"}'),
    )


def test_invalid_tool_json_anthropic_sdk_raises_mid_stream() -> None:
    """A model that emits broken tool input: the SDK's partial JSON parser raises ``ValueError``
    in the middle of the stream, and the message is lost; msgwire finishes the message and keeps
    the raw text on a ``malformed`` call."""
    data = _tool_use_stream('{"a": 1,', ',"b": 2}')
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        anthropic_final([data])
    message, codes = ours([data], "anthropic")
    [call] = message.tool_calls
    assert (call.arguments, call.malformed) == ('{"a": 1,,"b": 2}', True)
    assert message.stop_reason == "tool_use"
    assert codes == ["malformed_arguments"]


def test_trailing_garbage_tool_json_anthropic_sdk_accepts_a_prefix() -> None:
    """SDK bug: it parses tool input with jiter in partial mode, which stops at the end of the
    first value and ignores what follows, so ``{"a": 1}}`` (or ``{"a": 1} {"b": 2}``) silently
    becomes ``{"a": 1}``. msgwire marks the call ``malformed`` and keeps the text as sent."""
    for fragments in (('{"a": 1', "}}"), ('{"a": 1}', ' {"b": 2}')):
        data = _tool_use_stream(*fragments)
        assert anthropic_final([data]).content[0].input == {"a": 1}
        message, codes = ours([data], "anthropic")
        [call] = message.tool_calls
        assert (call.arguments, call.malformed) == ("".join(fragments), True)
        assert codes == ["malformed_arguments"]


def test_truncated_messages_stream_anthropic_sdk_returns_partial_silently() -> None:
    """No ``message_delta`` / ``message_stop``: the SDK's final message has ``stop_reason``
    ``None`` and no error; msgwire raises ``TruncatedStreamError`` with the partial message."""
    data = _messages(
        ("message_start", _MESSAGE_START),
        ("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
        ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}'),
    )
    final = anthropic_final([data])
    assert final.stop_reason is None
    assert final.content[0].text == "Hel"
    with pytest.raises(TruncatedStreamError) as failed:
        msgwire.assemble([data], "anthropic")
    assert failed.value.partial_message.text == "Hel"
    assert failed.value.partial_message.stop_reason == "error"


def test_empty_text_block_sdk_keeps_it() -> None:
    """Claude sometimes opens a text block and sends no text before a tool call. The SDK keeps
    ``TextBlock(text="")``, which the API rejects when the message is sent back ("text content
    blocks must be non-empty"); msgwire drops it (no event could describe it either)."""
    data = _messages(
        ("message_start", _MESSAGE_START),
        ("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
        ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}'),
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        (
            "content_block_start",
            '{"type":"content_block_start","index":1,"content_block":'
            '{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}',
        ),
        ("content_block_stop", '{"type":"content_block_stop","index":1}'),
        ("message_delta", '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}'),
        ("message_stop", '{"type":"message_stop"}'),
    )
    final = anthropic_final([data])
    assert [(b.type, getattr(b, "text", None)) for b in final.content] == [("text", ""), ("tool_use", None)]
    message, codes = ours([data], "anthropic")
    assert message.content == [ToolCallBlock(id="toolu_1", name="f", arguments="")]
    assert message.tool_calls[0].parsed_arguments() == final.content[1].input == {}
    assert codes == []
    compare_messages(message, final)
