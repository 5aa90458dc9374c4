"""Stream transcoding beside a hand-written Python gateway, on the same bytes (benches/README.md).

Groups (the entry named ``msgwire`` is each group's reference in the summary):
- ``transcode-openai-anthropic``: the OpenAI workload (text, then three parallel tool calls
  whose fragments interleave) re-emitted as an Anthropic stream: ``msgwire.transcode`` beside
  a hand-written loop (httpx-sse's ``SSEDecoder`` over the lines, ``json.loads`` per chunk,
  ``json.dumps`` per Anthropic event), which handles only what this workload holds.
- ``transcode-anthropic-openai``: the Anthropic workload (signed thinking, text) re-emitted as
  OpenAI chunks, beside the same kind of loop.
- ``transcode-pairs``: msgwire alone, for the other targets (figures in MB/s in the README).

The issue's target is at least 200 MB/s of input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx_sse
import pytest

import msgwire
from msgwire.bench.workloads import anthropic_stream, openai_stream

NETWORK_CHUNK = 16 * 1024


def _pieces(data: bytes) -> list[bytes]:
    return [data[i : i + NETWORK_CHUNK] for i in range(0, len(data), NETWORK_CHUNK)]


def _sse(chunks: list[bytes]) -> Iterator[httpx_sse.ServerSentEvent]:
    """httpx-sse's decoder over the lines of the chunks (what ``iter_sse`` does on a response)."""
    decoder = httpx_sse._decoders.SSEDecoder()
    pending = ""
    for chunk in chunks:
        pending += chunk.decode()
        *lines, pending = pending.split("\n")
        for line in lines:
            event = decoder.decode(line.rstrip("\r"))
            if event is not None:
                yield event


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()


def hand_written_openai_to_anthropic(chunks: list[bytes]) -> Iterator[bytes]:
    """Text and tool calls only, blocks in arrival order; interleaved fragments are buffered
    per call and written when the stream finishes (what a gateway must do to stay valid)."""
    started = False
    text_open = False
    calls: dict[int, dict[str, Any]] = {}
    stop = "end_turn"
    for sse in _sse(chunks):
        if sse.data == "[DONE]":
            break
        chunk = json.loads(sse.data)
        if not started:
            started = True
            message = {"id": chunk["id"], "type": "message", "role": "assistant", "model": chunk["model"]}
            message |= {"content": [], "stop_reason": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
            yield _event("message_start", {"type": "message_start", "message": message})
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                if not text_open:
                    text_open = True
                    block = {"type": "text", "text": ""}
                    yield _event(
                        "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
                    )
                text = {"type": "text_delta", "text": delta["content"]}
                yield _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": text})
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                entry["id"] = entry["id"] or call.get("id") or ""
                function = call.get("function") or {}
                entry["name"] = entry["name"] or function.get("name") or ""
                entry["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason") == "tool_calls":
                stop = "tool_use"
    index = 0
    if text_open:
        yield _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    for _, call in sorted(calls.items()):
        block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
        yield _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        fragment = {"type": "input_json_delta", "partial_json": call["arguments"]}
        yield _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": fragment})
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 0}}
    yield _event("message_delta", delta)
    yield _event("message_stop", {"type": "message_stop"})


def hand_written_anthropic_to_openai(chunks: list[bytes]) -> Iterator[bytes]:
    """Text and thinking (as ``reasoning_content``) only."""
    head: dict[str, Any] = {}
    for sse in _sse(chunks):
        payload = json.loads(sse.data)
        kind = payload["type"]
        if kind == "message_start":
            message = payload["message"]
            head = {"id": message["id"], "object": "chat.completion.chunk", "created": 0, "model": message["model"]}
            delta: dict[str, Any] = {"role": "assistant", "content": ""}
        elif kind == "content_block_delta" and payload["delta"]["type"] == "text_delta":
            delta = {"content": payload["delta"]["text"]}
        elif kind == "content_block_delta" and payload["delta"]["type"] == "thinking_delta":
            delta = {"reasoning_content": payload["delta"]["thinking"]}
        elif kind == "message_delta":
            chunk = head | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
            continue
        else:
            continue
        chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def _drain(output: Iterator[bytes]) -> int:
    return sum(len(piece) for piece in output)


# --- OpenAI in, Anthropic out -------------------------------------------------------------------


@pytest.fixture(scope="module")
def openai_chunks() -> list[bytes]:
    return _pieces(openai_stream())


@pytest.mark.benchmark(group="transcode-openai-anthropic")
def test_transcode_openai_anthropic_msgwire(benchmark: Any, openai_chunks: list[bytes]) -> None:
    size = benchmark(lambda: _drain(msgwire.transcode(openai_chunks, "openai", "anthropic")))
    assert size > 0


@pytest.mark.benchmark(group="transcode-openai-anthropic")
def test_transcode_openai_anthropic_hand_written(benchmark: Any, openai_chunks: list[bytes]) -> None:
    size = benchmark(lambda: _drain(hand_written_openai_to_anthropic(openai_chunks)))
    ours = msgwire.assemble(b"".join(msgwire.transcode(openai_chunks, "openai", "anthropic")), "anthropic")
    theirs = msgwire.assemble(b"".join(hand_written_openai_to_anthropic(openai_chunks)), "anthropic")
    assert size > 0
    assert theirs.text == ours.text
    assert [(c.id, c.arguments) for c in theirs.tool_calls] == [(c.id, c.arguments) for c in ours.tool_calls]


# --- Anthropic in, OpenAI out -------------------------------------------------------------------


@pytest.fixture(scope="module")
def anthropic_chunks() -> list[bytes]:
    return _pieces(anthropic_stream())


@pytest.mark.benchmark(group="transcode-anthropic-openai")
def test_transcode_anthropic_openai_msgwire(benchmark: Any, anthropic_chunks: list[bytes]) -> None:
    size = benchmark(lambda: _drain(msgwire.transcode(anthropic_chunks, "anthropic", "openai")))
    assert size > 0


@pytest.mark.benchmark(group="transcode-anthropic-openai")
def test_transcode_anthropic_openai_hand_written(benchmark: Any, anthropic_chunks: list[bytes]) -> None:
    size = benchmark(lambda: _drain(hand_written_anthropic_to_openai(anthropic_chunks)))
    ours = msgwire.assemble(b"".join(msgwire.transcode(anthropic_chunks, "anthropic", "openai")), "openai")
    theirs = msgwire.assemble(b"".join(hand_written_anthropic_to_openai(anthropic_chunks)), "openai")
    assert size > 0
    assert (theirs.text, theirs.thinking) == (ours.text, ours.thinking)


# --- every target ---------------------------------------------------------------------------------


@pytest.mark.benchmark(group="transcode-pairs")
@pytest.mark.parametrize("target", ["openai", "openai-responses", "anthropic", "gemini", "ollama"])
@pytest.mark.parametrize("source", ["openai", "anthropic"])
def test_transcode_pairs(benchmark: Any, source: str, target: str) -> None:
    chunks = _pieces(openai_stream() if source == "openai" else anthropic_stream())
    benchmark.extra_info["input_bytes"] = sum(map(len, chunks))
    size = benchmark(lambda: _drain(msgwire.transcode(chunks, source, target)))
    assert size > 0
