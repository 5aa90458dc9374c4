"""Stream parsing beside the peers, on the same bytes in the same run (benches/README.md).

Groups (the entry named ``msgwire`` is each group's reference in the summary):
- ``openai-assemble``: the assembled message of the OpenAI workload: msgwire.assemble, the
  openai SDK's ``chat.completions.stream`` (through an httpx mock transport), a hand-written
  httpx-sse + json.loads loop, and orjson.loads alone on every data line.
- ``anthropic-assemble``: the same for the Anthropic workload and the anthropic SDK.
- ``events``: iterating every event as a Python object (msgwire.stream).
- ``scaling``: the OpenAI workload and ten copies of its deltas.
- ``partial-args``: 64 KB of tool arguments in 20-byte deltas with ``partial_args=True``, the
  value read once at the end and read on every delta, beside the same stream without the option
  and one json.loads of the whole arguments.
- ``big-event``: one 8 MiB event fed in 1 KiB pieces.
- ``threads``: two streams assembled by two threads, beside one thread doing both.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import httpx2
import msgspec
import openai
import orjson
import pytest

import msgwire
from msgwire.bench.peers import httpx_sse_loop, mock_transport, pieces, split_and_parse
from msgwire.bench.workloads import anthropic_stream, long_tool_call, openai_stream

# --- the OpenAI workload ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def openai_bytes() -> bytes:
    return openai_stream()


@pytest.fixture(scope="module")
def openai_reference(openai_bytes: bytes) -> msgwire.AssistantMessage:
    return msgwire.assemble(openai_bytes, "openai")


def _check_openai(text: str, calls: list[tuple[str, str, str]], reference: msgwire.AssistantMessage) -> None:
    assert text == reference.text
    assert calls == [(c.id, c.name, c.arguments) for c in reference.tool_calls]


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_msgwire(
    benchmark: Any, openai_bytes: bytes, openai_reference: msgwire.AssistantMessage
) -> None:
    chunks = pieces(openai_bytes)
    message = benchmark(msgwire.assemble, chunks, "openai")
    _check_openai(message.text, [(c.id, c.name, c.arguments) for c in message.tool_calls], openai_reference)


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_msgwire_via_httpx(
    benchmark: Any, openai_bytes: bytes, openai_reference: msgwire.AssistantMessage
) -> None:
    client = httpx.Client(transport=mock_transport(openai_bytes, httpx))

    def run() -> msgwire.AssistantMessage:
        with client.stream("POST", "http://test/v1/chat/completions") as response:
            return msgwire.assemble(response, "openai")

    message = benchmark(run)
    _check_openai(message.text, [(c.id, c.name, c.arguments) for c in message.tool_calls], openai_reference)


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_openai_sdk(
    benchmark: Any, openai_bytes: bytes, openai_reference: msgwire.AssistantMessage
) -> None:
    client = openai.OpenAI(
        api_key="x", base_url="http://test/v1", http_client=httpx.Client(transport=mock_transport(openai_bytes, httpx))
    )

    def run() -> Any:
        with client.chat.completions.stream(model="gpt-4o", messages=[{"role": "user", "content": "hi"}]) as stream:
            return stream.get_final_completion()

    completion = benchmark(run)
    message = completion.choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    _check_openai(message.content or "", calls, openai_reference)


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_httpx_sse_loop(
    benchmark: Any, openai_bytes: bytes, openai_reference: msgwire.AssistantMessage
) -> None:
    client = httpx.Client(transport=mock_transport(openai_bytes, httpx))
    text, calls = benchmark(httpx_sse_loop, client)
    _check_openai(text, calls, openai_reference)


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_orjson_per_line(benchmark: Any, openai_bytes: bytes) -> None:
    """Only the JSON parsing, with the data lines already split out: no framing, no assembly."""
    lines = [line[6:] for line in openai_bytes.split(b"\n") if line.startswith(b"data: {")]

    def run() -> int:
        for line in lines:
            orjson.loads(line)
        return len(lines)

    assert benchmark(run) == len(lines)


@pytest.mark.benchmark(group="openai-assemble")
def test_openai_assemble_orjson_split_in_python(benchmark: Any, openai_bytes: bytes) -> None:
    assert benchmark(split_and_parse, openai_bytes) == openai_bytes.count(b"data: {")


# --- the Anthropic workload ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def anthropic_bytes() -> bytes:
    return anthropic_stream()


@pytest.mark.benchmark(group="anthropic-assemble")
def test_anthropic_assemble_msgwire(benchmark: Any, anthropic_bytes: bytes) -> None:
    message = benchmark(msgwire.assemble, pieces(anthropic_bytes), "anthropic")
    assert message.stop_reason == "tool_use"
    assert len(message.tool_calls) == 3
    assert message.thinking


@pytest.mark.benchmark(group="anthropic-assemble")
def test_anthropic_assemble_anthropic_sdk(benchmark: Any, anthropic_bytes: bytes) -> None:
    http_client = httpx2.Client(transport=mock_transport(anthropic_bytes, httpx2))
    client = anthropic.Anthropic(api_key="x", base_url="http://test", http_client=http_client)

    def run() -> Any:
        with client.messages.stream(
            model="claude-sonnet-4-6", max_tokens=4096, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            return stream.get_final_message()

    final = benchmark(run)
    reference = msgwire.assemble(anthropic_bytes, "anthropic")
    assert [b.input for b in final.content if b.type == "tool_use"] == [
        c.parsed_arguments() for c in reference.tool_calls
    ]
    assert "".join(b.text for b in final.content if b.type == "text") == reference.text


@pytest.mark.benchmark(group="anthropic-assemble")
def test_anthropic_assemble_orjson_per_line(benchmark: Any, anthropic_bytes: bytes) -> None:
    lines = [line[6:] for line in anthropic_bytes.split(b"\n") if line.startswith(b"data: ")]

    def run() -> int:
        for line in lines:
            orjson.loads(line)
        return len(lines)

    assert benchmark(run) == len(lines)


@pytest.mark.benchmark(group="anthropic-assemble")
def test_anthropic_assemble_orjson_split_in_python(benchmark: Any, anthropic_bytes: bytes) -> None:
    assert benchmark(split_and_parse, anthropic_bytes) == anthropic_bytes.count(b"data: {")


# --- per-event objects, scaling, partial arguments, big events, threads --------------------------------


@pytest.mark.benchmark(group="events")
def test_events_msgwire(benchmark: Any, openai_bytes: bytes) -> None:
    chunks = pieces(openai_bytes)

    def run() -> int:
        return sum(1 for _ in msgwire.stream(chunks, "openai"))

    count = benchmark(run)
    assert count > 1500
    benchmark.extra_info["events"] = count


@pytest.mark.benchmark(group="scaling")
@pytest.mark.parametrize("times", [1, 10])
def test_scaling_msgwire(benchmark: Any, times: int) -> None:
    """Ten times the text deltas (same tool calls): compare time per byte (extra_info)."""
    data = openai_stream(text_deltas=1500 * times)
    message = benchmark(msgwire.assemble, pieces(data), "openai")
    assert len(message.tool_calls) == 3
    benchmark.extra_info["bytes"] = len(data)


@pytest.mark.benchmark(group="partial-args")
def test_partial_args_msgwire(benchmark: Any) -> None:
    """``partial_args=True``, the value read once at the end (a consumer that shows progress
    now and then): what the option costs when nobody reads most deltas."""
    data, arguments = long_tool_call()
    chunks = [event + b"\n\n" for event in data.split(b"\n\n") if event]  # one event per read: the live case

    def run() -> Any:
        last = None
        for event in msgwire.stream(chunks, "openai", partial_args=True):
            if event.type == "tool_call_delta":
                last = event
        return last.parsed if last is not None else None

    assert benchmark(run) == json.loads(arguments)


@pytest.mark.benchmark(group="partial-args")
def test_partial_args_read_every_delta(benchmark: Any) -> None:
    """``parsed`` read on every delta as it arrives (a live view of the arguments)."""
    data, arguments = long_tool_call()
    chunks = [event + b"\n\n" for event in data.split(b"\n\n") if event]

    def run() -> Any:
        parsed = None
        for event in msgwire.stream(chunks, "openai", partial_args=True):
            if event.type == "tool_call_delta":
                parsed = event.parsed
        return parsed

    assert benchmark(run) == json.loads(arguments)


@pytest.mark.benchmark(group="partial-args")
def test_partial_args_without_parsing(benchmark: Any) -> None:
    """The same loop without partial parsing: what the parsing adds is the difference."""
    data, _ = long_tool_call()
    chunks = [event + b"\n\n" for event in data.split(b"\n\n") if event]

    def run() -> Any:
        last = None
        for event in msgwire.stream(chunks, "openai"):
            if event.type == "tool_call_delta":
                last = event
        return last

    assert benchmark(run).parsed is msgspec.UNSET


@pytest.mark.benchmark(group="partial-args")
def test_partial_args_json_loads_once(benchmark: Any) -> None:
    _, arguments = long_tool_call()
    assert benchmark(json.loads, arguments)


@pytest.mark.benchmark(group="big-event")
def test_big_event_msgwire(benchmark: Any) -> None:
    text = "x" * (8 * 1024 * 1024 - 64)
    data = b'data: {"choices":[{"index":0,"delta":{"content":"' + text.encode() + b'"}}]}\n\ndata: [DONE]\n\n'
    chunks = pieces(data, 1024)
    message = benchmark(msgwire.assemble, chunks, "openai", max_event_size=16 * 1024 * 1024)
    assert len(message.text) == len(text)


def _twice(run: Callable[[], object], threads: bool) -> None:
    if not threads:
        run()
        run()
        return
    workers = [threading.Thread(target=run) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


@pytest.mark.benchmark(group="threads")
@pytest.mark.parametrize("threads", [False, True], ids=["one-thread", "two-threads"])
def test_threads_msgwire(benchmark: Any, threads: bool) -> None:
    data = openai_stream(text_deltas=15000, tool_calls=30)  # one chunk of ~5 MB: decoded without the GIL
    results: list[msgwire.AssistantMessage] = []

    def run() -> None:
        results.append(msgwire.assemble(data, "openai"))

    benchmark(_twice, run, threads)
    assert all(len(r.tool_calls) == 30 for r in results)
