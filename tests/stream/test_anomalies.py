"""The tool-call anomalies of real OpenAI-compatible servers, one minimal stream each.

Each test asserts the assembled message and the diagnostic codes the stream recorded, and
every stream is decoded twice, whole and one byte at a time: the events, the message and the
diagnostics (with their offsets) must be identical. See ``rust/core/src/dialect/openai_chat.rs``
for the keying rules and docs/wire.md section 2 for where each anomaly comes from.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import msgspec

import msgwire
from msgwire import (
    AssistantMessage,
    Diagnostic,
    Event,
    MessageEnd,
    MessageStart,
    TextDelta,
    ToolCallBegin,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallEnd,
    UsageEvent,
)

EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

# --- streams ----------------------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, *, index: int = 0, **top: Any
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice (``delta=None``: ``choices: []``)."""
    body: dict[str, Any] = {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    body["choices"] = [] if delta is None else [{"index": index, "delta": delta, "finish_reason": finish}]
    body.update(top)
    return body


def call(
    index: int | None = None, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    """One ``tool_calls[]`` delta; only the given fields are written."""
    delta: dict[str, Any] = {}
    if index is not None:
        delta["index"] = index
    if call_id is not None:
        delta |= {"id": call_id, "type": "function"}
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    if function:
        delta["function"] = function
    return delta


def calls(*deltas: dict[str, Any]) -> dict[str, Any]:
    """A chunk carrying tool-call deltas."""
    return chunk({"tool_calls": list(deltas)})


ROLE = chunk({"role": "assistant", "content": None})


def sse(*payloads: dict[str, Any], done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(p, ensure_ascii=False, separators=(',', ':'))}\n\n" for p in payloads]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


# --- decoding ---------------------------------------------------------------------------------


@dataclass
class Decoded:
    events: list[Event]
    message: AssistantMessage
    diagnostics: list[Diagnostic]

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self.events]


def _decode(chunks: list[bytes]) -> Decoded:
    stream = msgwire.stream(iter(chunks), "openai")
    events = list(stream)
    return Decoded(events, stream.message(), stream.diagnostics)


def _own_ids(text: str, message_id: str) -> str:
    """``text`` with a decoding's message id, and the synthetic call ids made from its tail,
    replaced: two decodings of one stream then compare equal."""
    return text.replace(message_id, "<id>").replace(message_id[-12:], "<tail>")


def _message_json(message: AssistantMessage) -> str:
    return _own_ids(msgspec.json.encode(msgspec.structs.replace(message, timestamp=EPOCH)).decode(), message.id)


def _normal(decoded: Decoded) -> tuple[str, str, list[Diagnostic]]:
    start = decoded.events[0]
    assert isinstance(start, MessageStart)
    assert start.message_id == decoded.message.id
    events = _own_ids(msgspec.json.encode(decoded.events).decode(), decoded.message.id)
    return events, _message_json(decoded.message), decoded.diagnostics


def decode(data: bytes) -> Decoded:
    """Decode whole and byte by byte: both must give the same events, message and diagnostics
    (offsets included), and the fast path (``assemble``) the same message. The message must
    also pass ``msgwire.validate``."""
    whole = _decode([data])
    bytewise = _decode([data[i : i + 1] for i in range(len(data))])
    assert _normal(whole) == _normal(bytewise)
    assert _message_json(msgwire.assemble(data, "openai")) == _message_json(whole.message)
    msgwire.validate(whole.message)
    assert isinstance(whole.events[-1], MessageEnd)
    return whole


def tool_calls(message: AssistantMessage) -> list[tuple[str, str, str]]:
    return [(c.id, c.name, c.arguments) for c in message.tool_calls]


def tool_events(decoded: Decoded) -> list[tuple[Any, ...]]:
    """The tool-call events, shortly: ``("begin", index, id, name)``, ``("delta", index,
    fragment)``, ``("end", index, id)``."""
    out: list[tuple[Any, ...]] = []
    for event in decoded.events:
        match event:
            case ToolCallBegin(index=index, id=call_id, name=name):
                out.append(("begin", index, call_id, name))
            case ToolCallDelta(index=index, fragment=fragment):
                out.append(("delta", index, fragment))
            case ToolCallEnd(index=index, block=block):
                out.append(("end", index, block.id))
    return out


# --- the anomalies ----------------------------------------------------------------------------


def test_parallel_calls() -> None:
    """The normal case: calls one after the other, each keyed by its ``index``."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "call_a", "get_weather", "")),
            calls(call(0, arguments='{"city": ')),
            calls(call(0, arguments='"Paris"}')),
            calls(call(1, "call_b", "get_time", "")),
            calls(call(1, arguments="{}")),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [
        ("call_a", "get_weather", '{"city": "Paris"}'),
        ("call_b", "get_time", "{}"),
    ]
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("tool_use", "tool_calls")
    assert decoded.codes == []
    assert tool_events(decoded) == [
        ("begin", 0, "call_a", "get_weather"),
        ("delta", 0, '{"city": '),
        ("delta", 0, '"Paris"}'),
        ("begin", 1, "call_b", "get_time"),
        ("delta", 1, "{}"),
        ("end", 0, "call_a"),
        ("end", 1, "call_b"),
    ]


def test_interleaved_fragments() -> None:
    """Fragments of several calls interleaved across chunks (and two in one chunk): each goes
    to its call by ``index``, and each delta event names its block."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "call_a", "f", "")),
            calls(call(1, "call_b", "g", "")),
            calls(call(1, arguments='{"y":')),
            calls(call(0, arguments='{"x":')),
            calls(call(2, "call_c", "h", ""), call(0, arguments="1}")),
            calls(call(2, arguments="[]"), call(1, arguments='"é😀"}')),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [
        ("call_a", "f", '{"x":1}'),
        ("call_b", "g", '{"y":"é😀"}'),
        ("call_c", "h", "[]"),
    ]
    assert decoded.codes == []
    assert tool_events(decoded) == [
        ("begin", 0, "call_a", "f"),
        ("begin", 1, "call_b", "g"),
        ("delta", 1, '{"y":'),
        ("delta", 0, '{"x":'),
        ("begin", 2, "call_c", "h"),
        ("delta", 0, "1}"),
        ("delta", 2, "[]"),
        ("delta", 1, '"é😀"}'),
        ("end", 0, "call_a"),
        ("end", 1, "call_b"),
        ("end", 2, "call_c"),
    ]


def test_call_without_index() -> None:
    """No ``index`` (Gemini's compatible endpoint, some proxies): a call is keyed by its id; a
    later delta with the same id and no index appends to it; a delta with neither index nor id
    continues the latest call; a new id is a new call. Each new call records the anomaly."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(None, "a", "f", '{"x"')),
            calls(call(None, "a", arguments=":1")),
            calls(call(None, arguments="}")),
            calls(call(None, "b", "g", "{")),
            calls(call(None, arguments="}")),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [("a", "f", '{"x":1}'), ("b", "g", "{}")]
    assert decoded.codes == ["tool_call_without_index", "tool_call_without_index"]
    assert tool_events(decoded) == [
        ("begin", 0, "a", "f"),
        ("delta", 0, '{"x"'),
        ("delta", 0, ":1"),
        ("delta", 0, "}"),
        ("begin", 1, "b", "g"),
        ("delta", 1, "{"),
        ("delta", 1, "}"),
        ("end", 0, "a"),
        ("end", 1, "b"),
    ]


def test_repeated_index_with_new_id() -> None:
    """An ``index`` reused with a different id is a second call, not more of the first; later
    deltas with that index continue the second call."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "a", "f", '{"n": 1}')),
            calls(call(0, "b", "g", "")),
            calls(call(0, arguments='{"n": 2}')),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [("a", "f", '{"n": 1}'), ("b", "g", '{"n": 2}')]
    assert decoded.codes == ["repeated_index_new_id"]
    assert [e[:2] for e in tool_events(decoded)] == [
        ("begin", 0),
        ("delta", 0),
        ("begin", 1),
        ("delta", 1),
        ("end", 0),
        ("end", 1),
    ]


def test_nameless_deltas_with_new_ids_continue_the_call() -> None:
    """LM Studio (Gemma) sends every argument fragment of one call with a fresh id and no name,
    at the same ``index``. A delta without a name cannot start a call: the fragments continue
    it, the call keeps its first id, and the anomaly is recorded once."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "call_1", "run_shell", "")),
            calls(call(0, "call_2", "", '{"cmd"')),
            calls(call(0, "call_3", None, ': "ls"')),
            calls(call(0, "call_4", None, "}")),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [("call_1", "run_shell", '{"cmd": "ls"}')]
    assert decoded.codes == ["tool_call_id_changed"]
    assert tool_events(decoded) == [
        ("begin", 0, "call_1", "run_shell"),
        ("delta", 0, '{"cmd"'),
        ("delta", 0, ': "ls"'),
        ("delta", 0, "}"),
        ("end", 0, "call_1"),
    ]


def test_name_after_arguments() -> None:
    """The name arrives after the first argument fragment: ``ToolCallBegin`` waits for it, and
    is followed by one ``ToolCallDelta`` carrying the fragments that came before."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "a", None, '{"x":')),
            calls(call(0, arguments=" 1,")),
            calls(call(0, name="f")),
            calls(call(0, arguments=' "y": 2}')),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [("a", "f", '{"x": 1, "y": 2}')]
    assert decoded.codes == ["name_after_arguments"]
    assert tool_events(decoded) == [
        ("begin", 0, "a", "f"),
        ("delta", 0, '{"x": 1,'),
        ("delta", 0, ' "y": 2}'),
        ("end", 0, "a"),
    ]


def test_whole_call_in_one_chunk() -> None:
    """Ollama ``/v1``, Groq and Mistral send each call whole, in one delta (here two calls in
    one chunk): one begin, one delta, one end each."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "a", "f", '{"q": "x"}'), call(1, "b", "g", "{}")),
            chunk({}, "tool_calls"),
        )
    )
    assert tool_calls(decoded.message) == [("a", "f", '{"q": "x"}'), ("b", "g", "{}")]
    assert decoded.codes == []
    assert tool_events(decoded) == [
        ("begin", 0, "a", "f"),
        ("delta", 0, '{"q": "x"}'),
        ("begin", 1, "b", "g"),
        ("delta", 1, "{}"),
        ("end", 0, "a"),
        ("end", 1, "b"),
    ]


AZURE_PRELUDE = {
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {
                "hate": {"filtered": False, "severity": "safe"},
                "self_harm": {"filtered": False, "severity": "safe"},
            },
        }
    ],
}
AZURE_FILTER_FRAME = {  # Azure's asynchronous filter: an annotation, no delta
    "choices": [
        {
            "index": 0,
            "finish_reason": None,
            "content_filter_results": {"violence": {"filtered": False, "severity": "safe"}},
            "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 5},
        }
    ],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
}


def test_chunks_with_empty_choices() -> None:
    """Chunks that carry no delta: Azure's first frame (empty ``choices``, ``id`` and
    ``model``), a content-filter annotation frame, and the ``include_usage`` chunk. None is an
    anomaly, and ``MessageStart`` names the id and model of the first chunk that has them."""
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 5,
        "total_tokens": 17,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }
    decoded = decode(
        sse(
            AZURE_PRELUDE,
            chunk({"role": "assistant", "content": ""}),
            calls(call(0, "a", "f", "{}")),
            AZURE_FILTER_FRAME,
            chunk({"content": None}, "tool_calls"),
            chunk(None, usage=usage),
        )
    )
    assert decoded.events[0] == MessageStart(
        message_id=decoded.message.id, response_id="chatcmpl-9", model="gpt-4o", provider="openai"
    )
    message = decoded.message
    assert (message.response_id, message.model) == ("chatcmpl-9", "gpt-4o")
    assert tool_calls(message) == [("a", "f", "{}")]
    assert message.usage == msgwire.Usage(input_tokens=12, output_tokens=5, cache_read_tokens=4, reasoning_tokens=2)
    assert decoded.kinds()[-2:] == ["UsageEvent", "MessageEnd"]
    assert decoded.codes == []


def test_second_finish_keeps_the_first() -> None:
    """A second, different finish_reason: the first is kept, and the second recorded."""
    decoded = decode(sse(chunk({"role": "assistant", "content": "Hi"}), chunk({}, "stop"), chunk({}, "length")))
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("end_turn", "stop")
    assert decoded.codes == ["second_finish"]
    assert decoded.events[-1] == MessageEnd(stop_reason="end_turn", raw_stop_reason="stop")


def test_openrouter_usage_chunk_with_null_finish() -> None:
    """OpenRouter's usage chunk repeats the choice with ``finish_reason: null``: not a second
    finish, and the stop stays."""
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    decoded = decode(
        sse(
            chunk({"role": "assistant", "content": "Hi"}),
            chunk({"role": "assistant", "content": ""}, "stop", native_finish_reason="stop"),
            chunk({"role": "assistant", "content": ""}, None, usage=usage),
        )
    )
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("end_turn", "stop")
    assert decoded.message.usage == msgwire.Usage(input_tokens=3, output_tokens=2)
    assert decoded.message.text == "Hi"
    assert decoded.codes == []


def test_stop_with_tool_calls() -> None:
    """Gemini's compatible endpoint finishes a tool-call turn with ``"stop"``: the stop reason
    is ``tool_use`` (the caller must run the calls), the raw reason is kept."""
    decoded = decode(sse(ROLE, calls(call(0, "a", "f", "{}")), chunk({}, "stop")))
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("tool_use", "stop")
    assert decoded.codes == ["stop_with_tool_calls"]


def test_extra_choices() -> None:
    """``n > 1``: choices other than index 0 are not assembled (recorded once)."""
    decoded = decode(
        sse(
            chunk({"role": "assistant", "content": "A"}),
            chunk({"role": "assistant", "content": "B"}, index=1),
            chunk({"content": "a"}),
            chunk({"tool_calls": [call(0, "z", "zz", "{}")]}, index=1),
            chunk({}, "stop"),
            chunk({}, "length", index=1),
        )
    )
    assert decoded.message.text == "Aa"
    assert decoded.message.tool_calls == []
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("end_turn", "stop")
    assert decoded.codes == ["extra_choices"]
    assert [e.text for e in decoded.events if isinstance(e, TextDelta)] == ["A", "a"]


def test_deprecated_function_call() -> None:
    """The deprecated ``function_call`` delta (no index, no id): one call, given a synthetic id
    so that a tool result can answer it (the same id in ``ToolCallBegin`` and the block)."""
    decoded = decode(
        sse(
            ROLE,
            chunk({"function_call": {"name": "get_weather", "arguments": ""}}),
            chunk({"function_call": {"arguments": '{"city":'}}),
            chunk({"function_call": {"arguments": ' "Oslo"}'}}),
            chunk({}, "function_call"),
        )
    )
    [block] = decoded.message.tool_calls
    assert (block.name, block.arguments, block.malformed) == ("get_weather", '{"city": "Oslo"}', False)
    assert block.id.startswith("call_")
    assert block.id.endswith("_0")
    assert (decoded.message.stop_reason, decoded.message.raw_stop_reason) == ("tool_use", "function_call")
    assert decoded.codes == []
    assert tool_events(decoded) == [
        ("begin", 0, block.id, "get_weather"),
        ("delta", 0, '{"city":'),
        ("delta", 0, ' "Oslo"}'),
        ("end", 0, block.id),
    ]
    answer = msgwire.tool_result(block.id, "12°C", tool_name=block.name)
    msgwire.validate([msgwire.user("weather?"), decoded.message, answer])


def test_custom_tool_calls() -> None:
    """``type: "custom"`` tools stream free-form ``custom.input`` instead of JSON arguments. The
    schema has no free-form field: the input is kept exactly as ``arguments``, and flagged
    ``malformed`` (with its diagnostic) when it is not JSON, as ``validate`` requires."""
    custom = {"index": 0, "id": "ct_1", "type": "custom", "custom": {"name": "run_shell", "input": ""}}
    as_json = {"index": 1, "id": "ct_2", "type": "custom", "custom": {"name": "echo", "input": '{"a": 1}'}}
    decoded = decode(
        sse(
            ROLE,
            chunk({"tool_calls": [custom]}),
            chunk({"tool_calls": [{"index": 0, "custom": {"input": "ls -la "}}]}),
            chunk({"tool_calls": [{"index": 0, "custom": {"input": "/tmp"}}]}),
            chunk({"tool_calls": [as_json]}),
            chunk({}, "tool_calls"),
        )
    )
    assert decoded.message.tool_calls == [
        ToolCallBlock(id="ct_1", name="run_shell", arguments="ls -la /tmp", malformed=True),
        ToolCallBlock(id="ct_2", name="echo", arguments='{"a": 1}'),
    ]
    assert decoded.codes == ["malformed_arguments"]
    assert ("delta", 0, "ls -la ") in tool_events(decoded)


def test_invalid_json_arguments() -> None:
    """Arguments that are not JSON are kept as sent, never repaired: the block is
    ``malformed``, the anomaly recorded, the other calls unaffected."""
    decoded = decode(
        sse(
            ROLE,
            calls(call(0, "a", "f", "")),
            calls(call(0, arguments='{"path": "/tmp", ')),
            calls(call(0, arguments="}")),
            calls(call(1, "b", "g", '{"ok": true}')),
            chunk({}, "tool_calls"),
        )
    )
    assert decoded.message.tool_calls == [
        ToolCallBlock(id="a", name="f", arguments='{"path": "/tmp", }', malformed=True),
        ToolCallBlock(id="b", name="g", arguments='{"ok": true}'),
    ]
    assert decoded.codes == ["malformed_arguments"]
    [end] = [e for e in decoded.events if isinstance(e, ToolCallEnd) and e.index == 0]
    assert end.block.malformed
    assert not any(isinstance(e, UsageEvent) for e in decoded.events)
