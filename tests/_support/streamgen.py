"""Hypothesis strategies for realistic provider streams, as the bytes a server sends.

Each strategy draws a stream *plan* (what the message must turn out to be), renders it as SSE
bytes the way the provider does, and cuts the bytes into network chunks. The plan is the
oracle: a test can check msgwire and an official SDK against it and against each other.

- ``chat_streams()``: OpenAI Chat Completions (``stream: true``). A role chunk, optional
  reasoning deltas (``reasoning_content`` as DeepSeek / older vLLM send it, or ``reasoning`` as
  OpenRouter / Ollama / Groq do), text deltas or refusal deltas, 0-4 parallel tool calls whose
  argument fragments are interleaved across chunks (the first delta of a call carries ``id``,
  ``type`` and ``name`` with ``arguments: ""`` or, as vLLM and Ollama send it, the first
  fragment; later ones only ``index`` and a fragment), the
  finish chunk, usage on the finish chunk or in an ``include_usage`` chunk with
  ``choices: []``, then ``data: [DONE]``.
- ``messages_streams()``: Anthropic Messages. ``message_start`` with usage, ``ping``s, then the
  blocks in order: optional thinking (``thinking_delta``s and one ``signature_delta``), optional
  ``redacted_thinking``, text blocks and ``tool_use`` blocks (``input_json_delta`` fragments;
  a no-argument tool gets one ``""`` fragment, or none), ``message_delta`` with the stop reason
  and cumulative usage, ``message_stop``; data lines padded with trailing spaces as Anthropic
  pads them.

Text is hostile on purpose: non-ASCII, emoji (4-byte UTF-8, ZWJ sequences, flags), quotes,
backslashes, CR / LF, U+2028, NUL, text that looks like SSE framing. JSON is written compact or
spaced, ASCII-escaped (emoji as surrogate pairs) or raw UTF-8; lines end in LF or CRLF.
Chunking favours the hard cuts: 1-byte pieces, cuts inside multi-byte UTF-8 sequences and
between the CR and LF of a pair.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "ChatStream",
    "MessagesBlock",
    "MessagesStream",
    "ToolCallPlan",
    "chat_streams",
    "json_arguments",
    "messages_streams",
    "network_chunks",
    "split_text",
]

# --- text ---------------------------------------------------------------------------------------

HOSTILE = (
    "é",
    "ß",
    "Ω",
    "中文",
    "日本語",
    "😀",
    "🦀",
    "👩\u200d👩\u200d👧",  # ZWJ sequence
    "🇫🇷",  # flag: two regional indicators
    "e\u0301",  # combining accent
    "\n",
    "\r\n",
    "\r",
    "\t",
    '"',
    "\\",
    "'",
    "\\n",
    '\\"',
    "\u2028",
    "\u2029",
    "\x00",
    "\x7f",
    "\ufeff",
    "data: ",
    "\n\ndata: [DONE]\n\n",
    "event: ping",
    ": comment",
    "{",
    "}",
    "</s>",
    " ",
)

_piece = st.one_of(st.text(max_size=6), st.sampled_from(HOSTILE))
#: One delta's worth of text (may be empty: servers send ``""`` deltas).
fragment_text = st.lists(_piece, max_size=3).map("".join)
#: A non-empty short text.
some_text = st.lists(_piece, min_size=1, max_size=4).map("".join).filter(bool)

_names = st.sampled_from(
    [
        "get_weather",
        "get_product_name",
        "search",
        "read_file",
        "run_shell",
        "lookup_äöü",
        "f",
        "tool_with_a_long_name_x",
    ]
)


def split_text(draw: st.DrawFn, text: str, *, max_pieces: int = 6) -> list[str]:
    """Cut ``text`` into pieces (by code point) at drawn positions; pieces may be empty."""
    if not text:
        return [""]
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=max_pieces - 1))
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


# --- JSON arguments -------------------------------------------------------------------------

_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    # finite, and small enough that every parser reads the same float
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
    fragment_text,
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=6) | st.sampled_from(HOSTILE), inner, max_size=3),
    ),
    max_leaves=8,
)
#: Tool arguments: a JSON object (what both the OpenAI and the Anthropic tool APIs produce).
json_arguments = st.dictionaries(st.text(max_size=8) | st.sampled_from(HOSTILE), _json_values, max_size=4)


@st.composite
def _json_style(draw: st.DrawFn) -> dict[str, Any]:
    """How a server writes JSON: compact or spaced, raw UTF-8 (mostly) or ASCII escapes."""
    compact = draw(st.booleans())
    return {
        "ensure_ascii": draw(st.sampled_from([False, False, False, True])),
        "separators": (",", ":") if compact else (", ", ": "),
    }


def _dumps(value: Any, style: dict[str, Any]) -> str:
    return json.dumps(value, **style)


# --- network chunking -----------------------------------------------------------------------


@st.composite
def network_chunks(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """How ``data`` arrives: whole, one byte at a time, or cut at drawn places, favouring cuts
    inside multi-byte UTF-8 sequences and between a CR and its LF."""
    mode = draw(st.sampled_from(["cuts", "cuts", "bytes", "whole"]))
    if mode == "whole" or len(data) < 2:
        return [data]
    if mode == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    hard = [i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80 or (data[i - 1] == 0x0D and data[i] == 0x0A)]
    position = st.integers(1, len(data) - 1)
    if hard:
        position = st.one_of(position, st.sampled_from(hard))
    cuts = sorted(set(draw(st.lists(position, min_size=1, max_size=40))))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def _sse(lines: list[tuple[str | None, str, str]], eol: str) -> bytes:
    """SSE bytes from ``(event, data, padding)`` triples."""
    out = []
    for event, data, padding in lines:
        head = f"event: {event}{eol}" if event is not None else ""
        out.append(f"{head}data: {data}{padding}{eol}{eol}")
    return "".join(out).encode()


_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=8, max_size=24)
_tokens = st.integers(0, 200_000)


# --- OpenAI Chat Completions ----------------------------------------------------------------


@dataclass(frozen=True)
class ToolCallPlan:
    id: str
    name: str
    arguments: str  # the raw JSON text, exactly as the fragments concatenate


@dataclass(frozen=True)
class ChatStream:
    """A generated Chat Completions stream and what it must assemble to."""

    data: bytes
    chunks: list[bytes]
    response_id: str
    model: str
    text: str
    refusal: str
    reasoning: str
    reasoning_field: str | None
    tool_calls: list[ToolCallPlan]
    finish_reason: str
    usage: dict[str, Any] | None
    description: list[str] = field(default_factory=list)


@st.composite
def _chat_usage(draw: st.DrawFn, reasoning: bool) -> dict[str, Any]:
    prompt, completion = draw(_tokens), draw(_tokens)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if draw(st.booleans()):
        usage["prompt_tokens_details"] = {"cached_tokens": draw(st.integers(0, prompt)), "audio_tokens": 0}
    if draw(st.booleans()) or reasoning:
        usage["completion_tokens_details"] = {
            "reasoning_tokens": draw(st.integers(0, completion)),
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
    return usage


def _interleave(draw: st.DrawFn, calls: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Merge the deltas of several calls: each call's deltas stay in order, and call k's first
    delta comes after call k-1's (indices first appear in increasing order, as OpenAI sends
    them), but fragments of different calls interleave freely."""
    position = [0] * len(calls)
    merged: list[dict[str, Any]] = []
    started = 0
    while len(merged) < sum(map(len, calls)):
        ready = [k for k in range(started) if position[k] < len(calls[k])]
        if started < len(calls):
            ready.append(started)
        k = draw(st.sampled_from(ready))
        if k == started:
            started += 1
        merged.append(calls[k][position[k]])
        position[k] += 1
    return merged


@st.composite
def chat_streams(draw: st.DrawFn) -> ChatStream:
    style = draw(_json_style())
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    response_id = "chatcmpl-" + draw(_ids)
    model = draw(st.sampled_from(["gpt-4o-2024-08-06", "gpt-4.1-mini", "deepseek-reasoner", "o4-mini", "m"]))
    created = draw(st.integers(1_600_000_000, 1_900_000_000))
    include_usage = draw(st.booleans())
    obfuscation = draw(st.booleans())
    description: list[str] = []

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
        body: dict[str, Any] = {
            "id": response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_07871e2ad8",
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            body["usage"] = None
        body.update(extra)
        if obfuscation:
            body["obfuscation"] = draw(_ids)
        return _dumps(body, style)

    payloads: list[str] = [chunk({"role": "assistant", "content": "", "refusal": None})]

    reasoning_field = draw(st.sampled_from([None, None, "reasoning_content", "reasoning"]))
    reasoning_parts: list[str] = []
    if reasoning_field is not None:
        reasoning_parts = draw(st.lists(fragment_text, min_size=1, max_size=5))
        description.append(f"reasoning via {reasoning_field}")
        payloads.extend(chunk({"content": None, reasoning_field: part}) for part in reasoning_parts)

    refusal_parts: list[str] = []
    text_parts: list[str] = []
    if draw(st.integers(0, 9)) == 0:
        refusal_parts = draw(st.lists(some_text, min_size=1, max_size=4))
        description.append("refusal")
        payloads.extend(chunk({"refusal": part}) for part in refusal_parts)
    else:
        text_parts = draw(st.lists(fragment_text, max_size=6))
        payloads.extend(chunk({"content": part}) for part in text_parts)

    plans: list[ToolCallPlan] = []
    if not refusal_parts:
        count = draw(st.integers(0, 4))
        per_call: list[list[dict[str, Any]]] = []
        for index in range(count):
            call_id = f"call_{draw(_ids)}{index}"  # ids are unique
            name = draw(_names)
            empty = draw(st.integers(0, 9)) == 0  # a server that sends "" for a no-argument call
            arguments = "" if empty else _dumps(draw(json_arguments), style)
            fragments = [f for f in split_text(draw, arguments, max_pieces=8) if f] if arguments else []
            first = ""
            if fragments and draw(st.integers(0, 3)) == 0:  # vLLM, Ollama: the head carries arguments
                first = fragments.pop(0)
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": first}}
            per_call.append([head, *({"index": index, "function": {"arguments": f}} for f in fragments)])
            plans.append(ToolCallPlan(call_id, name, arguments))
        deltas = _interleave(draw, per_call)
        if count:
            description.append(f"{count} tool call(s), {len(deltas)} deltas")
        while deltas:  # mostly one delta per chunk, sometimes two
            take = draw(st.sampled_from([1, 1, 1, 2]))
            payloads.append(chunk({"tool_calls": deltas[:take]}))
            deltas = deltas[take:]

    if plans:
        finish = draw(st.sampled_from(["tool_calls", "tool_calls", "tool_calls", "stop"]))
    else:
        finish = draw(st.sampled_from(["stop", "stop", "length"]))

    usage: dict[str, Any] | None = None
    where = draw(st.sampled_from(["chunk", "finish", "none"]) if not include_usage else st.just("chunk"))
    if where != "none":
        usage = draw(_chat_usage(reasoning_field is not None))
        description.append(f"usage on the {where} chunk")
    if where == "finish":
        payloads.append(chunk({}, finish, usage=usage))
    else:
        payloads.append(chunk({}, finish))
    if where == "chunk":
        payloads.append(chunk(None, usage=usage))
    payloads.append("[DONE]")

    lines: list[tuple[str | None, str, str]] = [(None, p, "") for p in payloads]
    if draw(st.booleans()):  # keep-alive comments (OpenRouter), anywhere
        at = draw(st.integers(0, len(lines)))
        comment = f": OPENROUTER PROCESSING{eol}{eol}"
        data = _sse(lines[:at], eol) + comment.encode() + _sse(lines[at:], eol)
        description.append("comment")
    else:
        data = _sse(lines, eol)
    chunks = draw(network_chunks(data))
    description.append(f"eol {eol!r}, {len(chunks)} network chunks")
    return ChatStream(
        data=data,
        chunks=chunks,
        response_id=response_id,
        model=model,
        text="".join(text_parts),
        refusal="".join(refusal_parts),
        reasoning="".join(reasoning_parts),
        reasoning_field=reasoning_field,
        tool_calls=plans,
        finish_reason=finish,
        usage=usage,
        description=description,
    )


# --- Anthropic Messages ---------------------------------------------------------------------


@dataclass(frozen=True)
class MessagesBlock:
    kind: str  # "text" | "thinking" | "redacted_thinking" | "tool_use"
    text: str = ""  # text, or thinking text
    signature: str = ""
    data: str = ""  # redacted_thinking
    id: str = ""
    name: str = ""
    arguments: str = ""  # the concatenated partial_json ("" for a no-argument tool)
    input: Any = None  # the arguments as Python data ({} when empty)


@dataclass(frozen=True)
class MessagesStream:
    """A generated Anthropic Messages stream and what it must assemble to."""

    data: bytes
    chunks: list[bytes]
    message_id: str
    model: str
    blocks: list[MessagesBlock]
    stop_reason: str
    stop_sequence: str | None
    #: Final usage as Anthropic counts it (input excludes cache reads and writes).
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    thinking_tokens: int | None
    description: list[str] = field(default_factory=list)


_base64ish = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", min_size=16, max_size=120
)


@st.composite
def messages_streams(draw: st.DrawFn) -> MessagesStream:
    style = draw(_json_style())
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    message_id = "msg_" + draw(_ids)
    model = draw(st.sampled_from(["claude-sonnet-4-20250514", "claude-haiku-4-5-20251001", "claude-opus-4-1"]))
    description: list[str] = []
    events: list[tuple[str, dict[str, Any]]] = []

    input_tokens, cache_read, cache_write = draw(_tokens), draw(_tokens), draw(_tokens)
    start_usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "output_tokens": draw(st.integers(0, 5)),
        "service_tier": "standard",
    }
    message = {
        "model": model,
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events.append(("message_start", {"type": "message_start", "message": message}))

    blocks: list[MessagesBlock] = []
    if draw(st.booleans()):
        parts = draw(st.lists(fragment_text, min_size=1, max_size=4))
        if draw(st.booleans()):
            parts.append("")  # the empty thinking delta that often precedes the signature
        blocks.append(MessagesBlock("thinking", text="".join(parts), signature=draw(_base64ish)))
        events.append(("thinking", {"parts": parts}))
    if draw(st.integers(0, 4)) == 0:
        blocks.append(MessagesBlock("redacted_thinking", data=draw(_base64ish)))
        events.append(("redacted_thinking", {}))
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            parts = draw(st.lists(fragment_text, min_size=1, max_size=5))
            blocks.append(MessagesBlock("text", text="".join(parts)))
            events.append(("text", {"parts": parts}))
        else:
            value = draw(json_arguments)
            empty = not value and draw(st.booleans())
            arguments = "" if empty else _dumps(value, style)
            fragments = split_text(draw, arguments, max_pieces=8) if arguments else []
            if empty and draw(st.booleans()):
                fragments = [""]  # the no-argument tool: one "" delta (else no delta at all)
            elif fragments and draw(st.booleans()):
                fragments.insert(0, "")  # Anthropic's usual leading "" delta
            tool = MessagesBlock(
                "tool_use", id=f"toolu_{draw(_ids)}{len(blocks)}", name=draw(_names), arguments=arguments, input=value
            )
            blocks.append(tool)
            events.append(("tool_use", {"fragments": fragments}))

    has_tools = any(b.kind == "tool_use" for b in blocks)
    ends = ["end_turn", "end_turn", "max_tokens", "stop_sequence"]
    stop_reason = "tool_use" if has_tools else draw(st.sampled_from(ends))
    stop_sequence = draw(some_text) if stop_reason == "stop_sequence" else None

    output_tokens = draw(_tokens)
    thinking_tokens = draw(st.integers(0, output_tokens)) if draw(st.booleans()) else None
    delta_usage: dict[str, Any] = {"output_tokens": output_tokens}
    cumulative = draw(st.sampled_from(["output only", "full", "full with nulls"]))
    if cumulative != "output only":
        # newer API versions repeat the cumulative input figures, possibly updated
        input_tokens, cache_read, cache_write = draw(_tokens), draw(_tokens), draw(_tokens)
        delta_usage |= {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        }
        if cumulative == "full with nulls":  # an optional figure left out keeps the earlier one
            delta_usage["cache_read_input_tokens"] = None
            cache_read = start_usage["cache_read_input_tokens"]
    if thinking_tokens is not None:
        delta_usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    description.append(f"{len(blocks)} blocks {[b.kind for b in blocks]}, usage {cumulative}")

    # Render: one SSE event per wire event.
    wire: list[tuple[str, dict[str, Any]]] = [events[0]]
    for index, (block, (_, extra)) in enumerate(zip(blocks, events[1:], strict=True)):
        if block.kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in extra["parts"]]
            deltas.append({"type": "signature_delta", "signature": block.signature})
        elif block.kind == "redacted_thinking":
            start, deltas = {"type": "redacted_thinking", "data": block.data}, []
        elif block.kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in extra["parts"]]
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": f} for f in extra["fragments"]]
        wire.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        wire.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
        )
        wire.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    wire.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": delta_usage,
            },
        )
    )
    wire.append(("message_stop", {"type": "message_stop"}))
    for _ in range(draw(st.integers(0, 2))):  # pings: after message_start, anywhere
        wire.insert(draw(st.integers(1, len(wire) - 1)), ("ping", {"type": "ping"}))

    lines = []
    for name, body in wire:
        padding = " " * draw(st.sampled_from([0, 0, 1, 4, 6]))  # `…}    ` as Anthropic pads
        lines.append((name, _dumps(body, style), padding))
    data = _sse(lines, eol)
    chunks = draw(network_chunks(data))
    description.append(f"eol {eol!r}, {len(chunks)} network chunks")
    return MessagesStream(
        data=data,
        chunks=chunks,
        message_id=message_id,
        model=model,
        blocks=blocks,
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read,
        cache_creation_input_tokens=cache_write,
        thinking_tokens=thinking_tokens,
        description=description,
    )
