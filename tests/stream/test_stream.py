"""The streaming API: ``msgwire.stream`` / ``astream`` / ``assemble`` / ``Decoder``.

- Snapshots of every recorded provider stream in ``tests/fixtures/wire`` (the assembled message,
  the event types, the diagnostics, the error) under ``tests/snapshots``. A change shows up as a
  failing test; ``MSGWIRE_UPDATE_SNAPSHOTS=1 pytest tests/stream/test_stream.py`` rewrites them (review
  the diff before committing it).
- Any split of the bytes gives the same events and message, through every entry point.
- Every kind of source: bytes, iterables, generators, files, httpx / requests responses, async.
- Every failure keeps what arrived: the typed error carries the dialect, the byte offset and the
  partial message (``stop_reason == "error"``), and ``message()`` still returns it.
- Limits, hostile input (no Rust panic reaches Python), partial tool arguments, threads.

The random ``id`` / ``timestamp`` of an assembled message (and the synthetic tool-call ids built
from the id) are replaced by placeholders before anything is compared.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    AssistantMessage,
    DecodeError,
    LimitExceededError,
    MalformedStreamError,
    MessageEnd,
    MessageStart,
    MsgwireError,
    ProviderError,
    ServerToolCallBlock,
    ServerToolResultBlock,
    StreamError,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolCallBegin,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallEnd,
    TransportError,
    TruncatedStreamError,
    UnknownBlock,
)
from tests._support.strategies import examples
from tests._support.streams import chat_chunk, json_values, responses_event, sse, tool_args_stream
from tests._support.wire import FIXTURE_IDS, FIXTURES, FOLDER_DIALECT, dialect_of

TESTS = Path(__file__).resolve().parents[1]
WIRE = TESTS / "fixtures" / "wire"
SNAPSHOTS = TESTS / "snapshots"
UPDATE_SNAPSHOTS = os.environ.get("MSGWIRE_UPDATE_SNAPSHOTS", "") not in ("", "0")

DIALECTS = ["openai", "openai-responses", "anthropic", "gemini", "ollama"]
SSE_DIALECTS = [d for d in DIALECTS if d != "ollama"]

SSE_FIXTURES = [p for p in FIXTURES if p.suffix == ".sse"]

FAST = examples(12, all_health_checks=True)


def fixture(name: str) -> Path:
    return WIRE / name


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_fixture_folders_are_all_covered() -> None:
    assert len(FIXTURES) >= 24
    assert {p.parent.name for p in FIXTURES} == set(FOLDER_DIALECT)
    assert {dialect_of(p) for p in FIXTURES} == set(DIALECTS)


# --- normalising outcomes -------------------------------------------------------------------

ID = "<id>"
TIMESTAMP = "<timestamp>"


def canon(value: Any, message_id: str) -> Any:
    """JSON data of msgwire objects, written by ``msgwire.dumps``, with the random message id
    replaced by a placeholder (synthetic call ids are derived from the response: kept)."""
    text = msgwire.dumps(value).decode()
    text = text.replace(message_id, ID)
    return json.loads(text)


def canon_message(message: AssistantMessage) -> dict[str, Any]:
    data: dict[str, Any] = canon(message, message.id)
    assert data["id"] == ID
    data["timestamp"] = TIMESTAMP
    return data


def describe_error(error: StreamError | None) -> dict[str, Any] | None:
    if error is None:
        return None
    fields = {
        "class": type(error).__name__,
        "dialect": error.dialect,
        "offset": error.offset,
        "error_type": error.error_type,
        "provider_message": error.provider_message,
        "limit_name": error.limit_name,
        "limit": error.limit,
    }
    return {k: v for k, v in fields.items() if v is not None}


@dataclass
class Outcome:
    """What one run of a stream gave, comparable across runs."""

    events: list[Any]
    message: dict[str, Any]
    diagnostics: list[Any]
    error: dict[str, Any] | None
    raw_events: list[Any]
    raw_message: AssistantMessage
    exception: StreamError | None


def outcome(events: list[Any], message: AssistantMessage, diagnostics: list[Any], error: StreamError | None) -> Outcome:
    if error is not None:
        # Nothing is lost: the error's partial message is the message the stream still returns.
        assert isinstance(error.partial_message, AssistantMessage)
        assert error.partial_message.stop_reason == "error"
        assert message.stop_reason == "error"
        assert canon_message(error.partial_message) == canon_message(message)
        assert error.diagnostics == diagnostics
        assert error.dialect in DIALECTS
        assert isinstance(error.offset, int)
    return Outcome(
        events=canon(events, message.id),
        message=canon_message(message),
        diagnostics=canon(diagnostics, message.id),
        error=describe_error(error),
        raw_events=events,
        raw_message=message,
        exception=error,
    )


def via_stream(source: Any, dialect: str, **options: Any) -> Outcome:
    stream = msgwire.stream(source, dialect, **options)
    events: list[Any] = []
    error = None
    try:
        events.extend(stream)
    except StreamError as exc:
        error = exc
    return outcome(events, stream.message(), stream.diagnostics, error)


def via_decoder(chunks: Iterable[bytes], dialect: str, **options: Any) -> Outcome:
    decoder = msgwire.Decoder(dialect, **options)
    events: list[Any] = []
    error = None
    try:
        for chunk in chunks:
            events.extend(decoder.feed(chunk))
        events.extend(decoder.end())
    except StreamError as exc:
        events.extend(exc.events)
        error = exc
    return outcome(events, decoder.message(), decoder.diagnostics, error)


def via_assemble(source: Any, dialect: str, **options: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    try:
        message = msgwire.assemble(source, dialect, **options)
    except StreamError as exc:
        error = exc
    else:
        return canon_message(message), None
    assert error.partial_message.stop_reason == "error"
    return canon_message(error.partial_message), describe_error(error)


async def via_astream(source: Any, dialect: str, **options: Any) -> Outcome:
    stream = msgwire.astream(source, dialect, **options)
    events: list[Any] = []
    error = None
    try:
        async for event in stream:
            events.append(event)  # noqa: PERF401 - keep the events that came before a failure
    except StreamError as exc:
        error = exc
    return outcome(events, stream.message(), stream.diagnostics, error)


def same(a: Outcome, b: Outcome) -> None:
    assert a.error == b.error
    assert a.message == b.message
    assert a.diagnostics == b.diagnostics
    assert a.events == b.events


@functools.cache
def reference(path: Path) -> Outcome:
    """The stream fed whole: what every other way of reading it must give."""
    return via_stream(path.read_bytes(), dialect_of(path))


# --- wire helpers: where things are in a stream -----------------------------------------------


@dataclass(frozen=True)
class Payload:
    event: str
    offset: int  # of the first byte of the (first) data value
    data: bytes
    end: int  # offset just past the data


def sse_payloads(body: bytes) -> list[Payload]:
    """The dispatched events of an SSE body (single-line data, as in every fixture)."""
    out: list[Payload] = []
    event, data, start = "", None, 0
    for match in re.finditer(rb"([^\r\n]*)(\r\n|\r|\n)", body):
        line = match.group(1)
        if not line:
            if data is not None:
                out.append(Payload(event or "message", start, data, start + len(data)))
            event, data = "", None
            continue
        name, colon, value = line.partition(b":")
        value_at = match.start() + len(name) + len(colon)
        if value.startswith(b" "):
            value, value_at = value[1:], value_at + 1
        if name == b"data":
            if data is None:
                data, start = value, value_at
            else:
                data += b"\n" + value
        elif name == b"event":
            event = value.decode()
    return out


def ndjson_payloads(body: bytes) -> list[Payload]:
    out = []
    for match in re.finditer(rb"([^\n]*)(\n|$)", body):
        line = match.group(1).removesuffix(b"\r")
        if line.strip():
            out.append(Payload("", match.start(), line, match.start() + len(line)))
    return out


def payloads(body: bytes, dialect: str) -> list[Payload]:
    return ndjson_payloads(body) if dialect == "ollama" else sse_payloads(body)


def lines(body: bytes, dialect: str) -> list[tuple[int, int]]:
    """(offset, length) of every line, terminators excluded."""
    pattern = rb"([^\n]*)(\n|$)" if dialect == "ollama" else rb"([^\r\n]*)(\r\n|\r|\n|$)"
    out = []
    for match in re.finditer(pattern, body):
        line = match.group(1)
        if dialect == "ollama":
            line = line.removesuffix(b"\r")
        out.append((match.start(), len(line)))
    return out


def ends_message(payload: Payload, dialect: str) -> bool:
    """Whether this payload finishes the message (or fails it)."""
    if payload.event == "error":
        return True
    try:
        body = json.loads(payload.data)
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    if body.get("error"):
        return True
    if dialect == "openai":
        return any(c.get("finish_reason") for c in body.get("choices") or [])
    if dialect == "openai-responses":
        return body.get("type") in ("response.completed", "response.incomplete", "response.failed", "error")
    if dialect == "anthropic":
        return body.get("type") in ("message_delta", "error") and bool((body.get("delta") or {}).get("stop_reason"))
    if dialect == "gemini":
        return any(c.get("finishReason") for c in body.get("candidates") or [])
    return body.get("done") is True


def assert_prefix_of(partial: dict[str, Any], full: dict[str, Any]) -> None:
    """A partial message holds a prefix of what the full stream gave, block by block."""
    assert len(partial.get("content", [])) <= len(full.get("content", []))
    for got, want in zip(partial.get("content", []), full.get("content", []), strict=False):
        assert got["type"] == want["type"]
        if got["type"] == "text":
            assert want["text"].startswith(got["text"])
        elif got["type"] == "thinking":
            assert want.get("thinking", "").startswith(got.get("thinking", ""))
        elif got["type"] == "tool_call":
            assert (got["id"], got["name"]) == (want["id"], want["name"])
            assert want.get("arguments", "{}").startswith(got.get("arguments", ""))


# --- snapshots ------------------------------------------------------------------------------


def run_lengths(names: list[str]) -> list[str]:
    """``["a", "a", "b"]`` -> ``["a*2", "b"]``: the event sequence, readable in a snapshot."""
    out: list[list[Any]] = []
    for name in names:
        if out and out[-1][0] == name:
            out[-1][1] += 1
        else:
            out.append([name, 1])
    return [name if count == 1 else f"{name}*{count}" for name, count in out]


def assert_snapshot(file: Path, data: dict[str, Any]) -> None:
    """Compare with the stored snapshot, or (``MSGWIRE_UPDATE_SNAPSHOTS=1``) rewrite it."""
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if UPDATE_SNAPSHOTS:
        file.parent.mkdir(parents=True, exist_ok=True)
        if not file.exists() or file.read_text(encoding="utf-8") != text:
            file.write_text(text, encoding="utf-8")
        return
    if not file.exists():
        pytest.fail(f"no snapshot {file.relative_to(TESTS)}: run with MSGWIRE_UPDATE_SNAPSHOTS=1 and review it")
    stored = json.loads(file.read_text(encoding="utf-8"))
    for key in data:
        assert stored.get(key) == data[key], f"{file.relative_to(TESTS)}: {key!r} differs from the snapshot"
    assert stored == data


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_snapshot(path: Path) -> None:
    got = reference(path)
    snapshot = {
        "fixture": f"{path.parent.name}/{path.name}",
        "dialect": dialect_of(path),
        "error": got.error,
        "diagnostics": [{"code": d["code"], "offset": d["offset"]} for d in got.diagnostics],
        "event_count": len(got.events),
        "events": run_lengths([e["type"] for e in got.events]),
        "message": got.message,
    }
    assert_snapshot(SNAPSHOTS / path.parent.name / f"{path.stem}.json", snapshot)


def test_no_stale_snapshots() -> None:
    wanted = {SNAPSHOTS / p.parent.name / f"{p.stem}.json" for p in FIXTURES}
    stale = [p for p in SNAPSHOTS.glob("*/*.json") if p not in wanted]
    if UPDATE_SNAPSHOTS:
        for path in stale:
            path.unlink()
        return
    assert not stale, f"snapshots without a fixture: {stale}"


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_fixture_outcome_is_consistent(path: Path) -> None:
    """The events of a whole stream describe the message it assembled."""
    ref = reference(path)
    events, message = ref.raw_events, ref.raw_message
    assert isinstance(events[0], MessageStart)
    assert events[0].message_id == message.id
    if ref.exception is None:
        assert isinstance(events[-1], MessageEnd)
        assert events[-1].stop_reason == message.stop_reason
        assert message.stop_reason not in (None, "error")
    else:
        assert not any(isinstance(e, MessageEnd) for e in events)
    texts: dict[int, str] = {}
    thinking: dict[int, str] = {}
    fragments: dict[int, str] = {}
    for event in events:
        if isinstance(event, TextDelta):
            texts[event.index] = texts.get(event.index, "") + event.text
        elif isinstance(event, msgwire.ThinkingDelta):
            thinking[event.index] = thinking.get(event.index, "") + event.thinking
        elif isinstance(event, ToolCallDelta):
            fragments[event.index] = fragments.get(event.index, "") + event.fragment
        elif isinstance(event, ToolCallEnd):
            assert event.block == message.content[event.index]
    for index, block in enumerate(message.content):
        if isinstance(block, TextBlock):
            assert texts.get(index, "") == block.text
        elif isinstance(block, ThinkingBlock):
            assert thinking.get(index, "") == block.thinking
        elif isinstance(block, ToolCallBlock):
            assert fragments.get(index, "") in ("", block.arguments)
            if ref.exception is None:
                assert not block.malformed
                block.parsed_arguments()
        else:  # server tool blocks and provider parts arrive whole (BlockEnd for the first)
            assert isinstance(block, (ServerToolCallBlock, ServerToolResultBlock, UnknownBlock))


# --- any split gives the same result --------------------------------------------------------


@functools.cache
def interesting_cuts(path: Path) -> list[int]:
    """Cuts inside multi-byte UTF-8 characters and between the CR and LF of a CRLF."""
    data = path.read_bytes()
    inside_utf8 = [i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80]
    inside_crlf = [i for i in range(1, len(data)) if data[i - 1 : i + 1] == b"\r\n"]
    return inside_utf8 + inside_crlf


@st.composite
def splits(draw: st.DrawFn, data: bytes, interesting: list[int]) -> list[bytes]:
    """``data`` cut at random points, at chosen awkward points, and into a run of 1-byte chunks."""
    size = len(data)
    cuts = set(draw(st.lists(st.integers(1, size - 1), max_size=30)))
    if interesting:
        cuts |= set(draw(st.lists(st.sampled_from(interesting), max_size=30)))
    if draw(st.booleans()):
        start = draw(st.integers(1, size - 1))
        cuts |= set(range(start, min(size, start + draw(st.integers(1, 400)))))
    bounds = [0, *sorted(cuts), size]
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    if draw(st.booleans()):  # sources may hand out empty chunks
        at = draw(st.integers(0, len(chunks)))
        chunks.insert(at, b"")
    return chunks


def test_interesting_cuts_exist() -> None:
    """The fixtures do hold what the split tests aim at."""
    crlf = fixture("gemini/function-call-thought-signature-crlf.sse")
    assert any(crlf.read_bytes()[i - 1] == 0x0D for i in interesting_cuts(crlf))
    emoji = fixture("anthropic/text-with-emoji.sse")
    assert "😄".encode() in emoji.read_bytes()
    assert interesting_cuts(emoji)


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
@FAST
@given(data=st.data())
def test_any_split_gives_the_same_result(path: Path, data: st.DataObject) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    chunks = data.draw(splits(body, interesting_cuts(path)), label="chunks")
    assert b"".join(chunks) == body
    ref = reference(path)
    same(via_stream(chunks, dialect), ref)
    same(via_decoder(chunks, dialect), ref)
    assert via_assemble(iter(chunks), dialect) == (ref.message, ref.error)


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_one_byte_chunks(path: Path) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    chunks = [body[i : i + 1] for i in range(len(body))]
    ref = reference(path)
    same(via_stream(chunks, dialect), ref)
    same(via_decoder(chunks, dialect), ref)
    assert via_assemble((body[i : i + 1] for i in range(len(body))), dialect) == (ref.message, ref.error)


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_assemble_and_decoder_finish_agree_with_stream(path: Path) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    ref = reference(path)
    assert via_assemble(body, dialect) == (ref.message, ref.error)
    decoder = msgwire.Decoder(dialect)
    error = None
    try:
        decoder.feed(body)
        message = decoder.finish()
    except StreamError as exc:
        error, message = exc, decoder.message()
    assert describe_error(error) == ref.error
    assert canon_message(message) == ref.message


# --- sources --------------------------------------------------------------------------------

SOURCE_FIXTURES = [
    "openai/chat-parallel-tool-calls-usage.sse",
    "openai/responses-encrypted-reasoning-text-function-call.sse",
    "anthropic/text-with-emoji.sse",
    "gemini/function-call-thought-signature-crlf.sse",
    "ollama/cloud-gpt-oss-thinking-text.ndjson",
    "openai-compat/groq-event-error.sse",
]


def pieces(body: bytes, size: int = 97) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def _bytes(body: bytes) -> Any:
    return body


def _bytearray(body: bytes) -> Any:
    return bytearray(body)


def _memoryview(body: bytes) -> Any:
    return memoryview(body)


def _list(body: bytes) -> Any:
    return pieces(body)


def _tuple(body: bytes) -> Any:
    return tuple(pieces(body, 1000))


def _generator(body: bytes) -> Any:
    return (chunk for chunk in pieces(body, 13))


def _bytesio(body: bytes) -> Any:
    return io.BytesIO(body)


def _buffered_reader(body: bytes) -> Any:
    return io.BufferedReader(io.BytesIO(body), buffer_size=7)  # read() gives what it has


SYNC_SOURCES: dict[str, Callable[[bytes], Any]] = {
    "bytes": _bytes,
    "bytearray": _bytearray,
    "memoryview": _memoryview,
    "list": _list,
    "tuple": _tuple,
    "generator": _generator,
    "bytesio": _bytesio,
    "buffered-reader": _buffered_reader,
}


@pytest.mark.parametrize("name", SOURCE_FIXTURES)
@pytest.mark.parametrize("kind", list(SYNC_SOURCES))
def test_sync_sources(kind: str, name: str) -> None:
    path = fixture(name)
    body = path.read_bytes()
    ref = reference(path)
    same(via_stream(SYNC_SOURCES[kind](body), dialect_of(path)), ref)
    assert via_assemble(SYNC_SOURCES[kind](body), dialect_of(path)) == (ref.message, ref.error)


@pytest.mark.parametrize("name", SOURCE_FIXTURES)
def test_binary_file_source(name: str) -> None:
    path = fixture(name)
    ref = reference(path)
    with open(path, "rb") as file:
        same(via_stream(file, dialect_of(path)), ref)
    with open(path, "rb") as file:
        assert via_assemble(file, dialect_of(path)) == (ref.message, ref.error)
    file = path.open("rb")
    with msgwire.stream(file, dialect_of(path)) as stream:
        next(iter(stream))
    assert file.closed


def mock_client(body: bytes, chunk: int = 101) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(pieces(body, chunk)))

    return httpx.Client(transport=httpx.MockTransport(handler))


def mock_async_client(body: bytes, chunk: int = 101) -> httpx.AsyncClient:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in pieces(body, chunk):
            yield piece

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("name", SOURCE_FIXTURES)
def test_httpx_response_source(name: str) -> None:
    path = fixture(name)
    ref = reference(path)
    with mock_client(path.read_bytes()) as client:
        with client.stream("POST", "https://api.example.com/v1/stream") as response:
            same(via_stream(response, dialect_of(path)), ref)
        with client.stream("POST", "https://api.example.com/v1/stream") as response:
            assert via_assemble(response, dialect_of(path)) == (ref.message, ref.error)
        with client.stream("POST", "https://api.example.com/v1/stream") as response:
            with msgwire.stream(response, dialect_of(path)) as stream:
                first = next(iter(stream))
            assert isinstance(first, MessageStart)
            assert response.is_closed  # closing the stream closes the response


@pytest.mark.anyio
@pytest.mark.parametrize("name", SOURCE_FIXTURES)
async def test_httpx_async_response_source(name: str) -> None:
    path = fixture(name)
    ref = reference(path)
    async with mock_async_client(path.read_bytes()) as client:
        async with client.stream("POST", "https://api.example.com/v1/stream") as response:
            same(await via_astream(response, dialect_of(path)), ref)
        async with client.stream("POST", "https://api.example.com/v1/stream") as response:
            async with msgwire.astream(response, dialect_of(path)) as stream:
                async for event in stream:
                    assert isinstance(event, MessageStart)
                    break
            assert response.is_closed


@pytest.mark.parametrize("name", SOURCE_FIXTURES)
def test_requests_response_source(name: str) -> None:
    requests = pytest.importorskip("requests")
    path = fixture(name)
    ref = reference(path)
    response = requests.models.Response()
    response.status_code = 200
    response.raw = io.BytesIO(path.read_bytes())
    same(via_stream(response, dialect_of(path)), ref)


class AiohttpLikeContent:
    """What ``aiohttp.ClientResponse.content`` offers (``iter_any``), without aiohttp."""

    def __init__(self, body: bytes) -> None:
        self._pieces = pieces(body, 61)

    async def iter_any(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


class AiohttpLikeResponse:
    def __init__(self, body: bytes) -> None:
        self.content = AiohttpLikeContent(body)
        self.released = False

    def release(self) -> None:
        self.released = True


async def _async_generator(body: bytes) -> AsyncIterator[bytes]:
    for piece in pieces(body, 29):
        yield piece


class AsyncIterableOnly:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _async_generator(self._body)


ASYNC_SOURCES: dict[str, Callable[[bytes], Any]] = {
    "async-generator": _async_generator,
    "async-iterable": AsyncIterableOnly,
    "aiohttp-like": AiohttpLikeResponse,
    "sync-bytes": _bytes,
    "sync-list": _list,
    "sync-generator": _generator,
}


@pytest.mark.anyio
@pytest.mark.parametrize("name", SOURCE_FIXTURES)
@pytest.mark.parametrize("kind", list(ASYNC_SOURCES))
async def test_async_sources(kind: str, name: str) -> None:
    path = fixture(name)
    same(await via_astream(ASYNC_SOURCES[kind](path.read_bytes()), dialect_of(path)), reference(path))


@pytest.mark.anyio
async def test_astream_until_done_and_close() -> None:
    path = fixture("anthropic/text-with-emoji.sse")
    response = AiohttpLikeResponse(path.read_bytes())
    async with msgwire.astream(response, "anthropic") as stream:
        message = await stream.until_done()
    assert canon_message(message) == reference(path).message
    assert response.released


@pytest.mark.anyio
@pytest.mark.parametrize("name", SOURCE_FIXTURES)
async def test_astream_next_batch_hands_out_each_reads_events(name: str) -> None:
    """``next_batch`` gives the events of one read at once: together the events iteration
    gives, a failure raised after the events before it, then ``[]``."""
    path = fixture(name)
    body = path.read_bytes()
    reads = pieces(body, 512)

    async def source() -> AsyncIterator[bytes]:
        for piece in reads:
            yield piece

    stream = msgwire.astream(source(), dialect_of(path))
    events: list[Any] = []
    error = None
    batches = 0
    try:
        while batch := await stream.next_batch():
            events.extend(batch)
            batches += 1
    except StreamError as exc:
        error = exc
    same(outcome(events, stream.message(), stream.diagnostics, error), reference(path))
    assert batches <= len(reads) + 1  # a read's events together, not one call each
    assert batches < len(events)
    assert await stream.next_batch() == []


def test_str_source_is_refused() -> None:
    with pytest.raises(TypeError, match="bytes, not str"):
        list(msgwire.stream("data: {}\n\n", "openai"))


@pytest.mark.parametrize(
    ("dialect", "options", "match"),
    [
        ("cohere", {}, "unknown dialect"),
        ("openai", {"max_depth": 0}, "max_depth must be within 1..200"),
        ("openai", {"max_depth": 201}, "max_depth must be within 1..200"),
        ("openai", {"max_event_size": -1}, "max_event_size"),
        ("openai", {"max_line_size": -5}, "max_line_size"),
        ("openai", {"max_tool_args_size": -1}, "max_tool_args_size"),
    ],
)
def test_bad_options_are_value_errors(dialect: str, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        msgwire.Decoder(dialect, **options)
    with pytest.raises(ValueError, match=match):
        msgwire.stream(b"", dialect, **options)
    with pytest.raises(ValueError, match=match):
        msgwire.assemble(b"", dialect, **options)


def test_dialect_aliases() -> None:
    path = fixture("openai/chat-text-include-usage.sse")
    for alias in ("openai", "openai-chat", "chat"):
        assert msgwire.Decoder(alias).dialect == "openai"
        assert via_assemble(path.read_bytes(), alias) == (reference(path).message, None)
    assert msgwire.Decoder("responses").dialect == "openai-responses"
    assert msgwire.Decoder("google").dialect == "gemini"


def test_message_is_a_snapshot_at_any_time() -> None:
    path = fixture("openai-compat/deepseek-reasoning-content.sse")
    stream = msgwire.stream(pieces(path.read_bytes(), 211), "openai")
    assert stream.message().content == []
    assert stream.message().stop_reason is None
    seen: dict[int, str] = {}
    for event in stream:
        snapshot = stream.message()
        if isinstance(event, TextDelta | msgwire.ThinkingDelta):
            text = event.text if isinstance(event, TextDelta) else event.thinking
            seen[event.index] = seen.get(event.index, "") + text
            block = snapshot.content[event.index]
            assert (block.text if isinstance(block, TextBlock) else block.thinking) == seen[event.index]
        if not isinstance(event, MessageEnd):
            assert snapshot.stop_reason != "error"
    assert canon_message(stream.message()) == reference(path).message


def test_stream_close_stops_and_closes_a_generator_source() -> None:
    closed = []

    def source() -> Iterator[bytes]:
        try:
            yield from pieces(fixture("anthropic/text-minimal.sse").read_bytes(), 50)
        finally:
            closed.append(True)

    with msgwire.stream(source(), "anthropic") as stream:
        assert isinstance(next(stream), MessageStart)
    assert closed == [True]
    assert list(stream) == []  # closed: no more events
    assert stream.message().stop_reason is None  # not failed, not finished: cut short by us


def test_stream_until_done() -> None:
    path = fixture("gemini/thought-parts-then-text.sse")
    assert canon_message(msgwire.stream(path.read_bytes(), "gemini").until_done()) == reference(path).message


def test_provider_option_is_recorded() -> None:
    path = fixture("openai-compat/deepseek-reasoning-content.sse")
    message = msgwire.assemble(path.read_bytes(), "openai", provider="deepseek")
    assert message.provider == "deepseek"
    events = list(msgwire.stream(path.read_bytes(), "openai", provider="deepseek"))
    assert isinstance(events[0], MessageStart)
    assert events[0].provider == "deepseek"


# --- failures: nothing is lost --------------------------------------------------------------


def check_failure(
    body: bytes,
    dialect: str,
    cls: type[StreamError],
    offset: int | range,
    *,
    chunk_size: int | None = None,
    **options: Any,
) -> Outcome:
    """Run ``body`` through every entry point; each gives ``cls`` at ``offset`` and keeps what
    arrived. Returns the outcome of ``stream`` over the whole body."""
    whole = via_stream(body, dialect, **options)
    error = whole.exception
    assert type(error) is cls, whole.error
    assert error.dialect == dialect
    if isinstance(offset, range):
        assert error.offset in offset, str(error)
    else:
        assert error.offset == offset, str(error)
    assert f"(byte {error.offset})" in str(error)
    assert isinstance(error, MsgwireError)
    assert isinstance(error, ValueError) == issubclass(cls, MalformedStreamError | LimitExceededError)
    assert isinstance(error, DecodeError) == isinstance(error, ValueError)
    # fed whole, the failing chunk is the whole body: its events are all that was yielded
    assert canon(error.events, whole.raw_message.id) == whole.events
    assert not any(isinstance(e, MessageEnd) for e in whole.raw_events)
    # any other way of reading it says the same
    chunked = pieces(body, chunk_size or 17)
    same(via_stream(chunked, dialect, **options), whole)
    same(via_decoder(chunked, dialect, **options), whole)
    same(via_decoder([body[i : i + 1] for i in range(len(body))], dialect, **options), whole)
    assert via_assemble(iter(chunked), dialect, **options) == (whole.message, whole.error)
    return whole


def the_text(message: AssistantMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


OPENAI_ERROR = sse(
    chat_chunk({"role": "assistant", "content": "Hel"}),
    chat_chunk({"content": "lo"}),
    (None, {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}),
    (None, "[DONE]"),
)


def test_openai_error_object() -> None:
    offset = OPENAI_ERROR.index(b'{"error"')
    got = check_failure(OPENAI_ERROR, "openai", ProviderError, offset)
    error = got.exception
    assert error.error_type == "server_error"
    assert error.provider_message == "The server had an error while processing your request."
    assert the_text(error.partial_message) == "Hello"
    assert error.partial_message.model == "gpt-4o"
    assert error.partial_message.response_id == "chatcmpl-1"
    assert [type(e).__name__ for e in error.events] == ["MessageStart", "TextDelta", "TextDelta"]
    # fed one event at a time, the failing chunk completes no event
    split = OPENAI_ERROR.split(b"\n\n")
    stream = msgwire.stream([part + b"\n\n" for part in split], "openai")
    events = []
    with pytest.raises(ProviderError) as caught:
        events.extend(stream)
    assert caught.value.events == []
    assert len(events) == 3
    assert the_text(stream.message()) == "Hello"
    assert stream.message().stop_reason == "error"


def test_groq_event_error_fixture() -> None:
    path = fixture("openai-compat/groq-event-error.sse")
    body = path.read_bytes()
    (failing,) = [p for p in sse_payloads(body) if p.event == "error"]
    got = check_failure(body, "openai", ProviderError, failing.offset, chunk_size=1000)
    error = got.exception
    assert error.error_type == "invalid_request_error"
    assert error.provider_message.startswith("Tool call validation failed")
    partial = error.partial_message
    assert [b.type for b in partial.content] == ["thinking"]
    reasoning = "".join(
        c["delta"].get("reasoning") or ""
        for p in sse_payloads(body)
        if p.event == "message"
        for c in json.loads(p.data)["choices"]
    )
    assert partial.content[0].thinking == reasoning
    assert partial.raw_stop_reason is None


def test_openrouter_midstream_error_fixture() -> None:
    path = fixture("openai-compat/openrouter-midstream-error.sse")
    body = path.read_bytes()
    failing = next(p for p in sse_payloads(body) if b'"error"' in p.data)
    got = check_failure(body, "openai", ProviderError, failing.offset)
    assert got.exception.error_type == "400"  # a numeric `code` is kept as its text
    assert got.exception.provider_message == "Token limit reached"
    # the finish it had sent before the error is kept beside stop_reason = error
    assert got.raw_message.raw_stop_reason == "length"
    # and so is the usage sent with the error
    assert got.raw_message.usage == msgwire.Usage(input_tokens=43, output_tokens=10, reasoning_tokens=11)
    assert got.events[-1]["type"] == "usage"


ANTHROPIC_OVERLOADED = sse(
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
    ),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Once"}},
    ),
    ("ping", {"type": "ping"}),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " upon"}},
    ),
    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
)


def test_anthropic_overloaded_error_midstream() -> None:
    offset = ANTHROPIC_OVERLOADED.index(b'{"type":"error"')
    got = check_failure(ANTHROPIC_OVERLOADED, "anthropic", ProviderError, offset)
    error = got.exception
    assert (error.error_type, error.provider_message) == ("overloaded_error", "Overloaded")
    partial = error.partial_message
    assert the_text(partial) == "Once upon"
    assert (partial.model, partial.response_id) == ("claude-sonnet-4-5", "msg_01")
    assert partial.usage is not None
    assert (partial.usage.input_tokens, partial.usage.output_tokens) == (12, 1)


RESPONSES_PREFIX = [
    responses_event("response.created", response={"id": "resp_1", "model": "gpt-5", "status": "in_progress"}),
    responses_event(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []},
    ),
    responses_event(
        "response.content_part.added",
        item_id="msg_1",
        output_index=0,
        content_index=0,
        part={"type": "output_text", "text": ""},
    ),
    responses_event("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="Parti"),
    responses_event("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="al"),
]


@pytest.mark.parametrize(
    ("last", "error_type", "text"),
    [
        (
            responses_event(
                "response.failed",
                response={
                    "id": "resp_1",
                    "model": "gpt-5",
                    "status": "failed",
                    "error": {"code": "server_error", "message": "The model failed to generate a response."},
                },
            ),
            "server_error",
            "The model failed to generate a response.",
        ),
        (
            responses_event("error", code="rate_limit_exceeded", message="Rate limit reached", param=None),
            "rate_limit_exceeded",
            "Rate limit reached",
        ),
    ],
    ids=["response.failed", "error"],
)
def test_responses_failed(last: tuple[str, Any], error_type: str, text: str) -> None:
    body = sse(*RESPONSES_PREFIX, last)
    offset = body.rindex(b"data: ") + len(b"data: ")
    got = check_failure(body, "openai-responses", ProviderError, offset)
    error = got.exception
    assert (error.error_type, error.provider_message) == (error_type, text)
    assert the_text(error.partial_message) == "Partial"
    assert error.partial_message.response_id == "resp_1"


OLLAMA_ERROR = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in [
        {"model": "llama3.2", "created_at": "2025-01-01T00:00:00Z", "message": {"role": "assistant", "content": "The"}},
        {
            "model": "llama3.2",
            "created_at": "2025-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": " sky"},
        },
        {"error": "an error was encountered while running the model: unexpected EOF"},
    ]
)


def test_ollama_error_line() -> None:
    offset = OLLAMA_ERROR.index(b'{"error"')
    got = check_failure(OLLAMA_ERROR, "ollama", ProviderError, offset)
    error = got.exception
    assert error.error_type == "error"
    assert error.provider_message == "an error was encountered while running the model: unexpected EOF"
    assert the_text(error.partial_message) == "The sky"
    assert error.partial_message.model == "llama3.2"


# a source that fails midway


class ConnectionLost(OSError):
    pass


def failing_source(body: bytes, cut: int, size: int = 64) -> Iterator[bytes]:
    yield from pieces(body[:cut], size)
    raise ConnectionLost(104, "Connection reset by peer")


async def failing_async_source(body: bytes, cut: int) -> AsyncIterator[bytes]:
    for piece in pieces(body[:cut], 64):
        yield piece
    raise ConnectionLost(104, "Connection reset by peer")


def check_transport_error(error: BaseException | None, cut: int, text: str, dialect: str) -> StreamError:
    assert isinstance(error, TransportError)
    assert not isinstance(error, ValueError)
    assert isinstance(error.__cause__, ConnectionLost)
    assert error.dialect == dialect
    assert error.offset == cut
    assert "Connection reset by peer" in str(error)
    assert error.events == []
    assert error.partial_message.stop_reason == "error"
    assert the_text(error.partial_message) == text
    return error


TRANSPORT_CASES = [
    ("anthropic/text-with-emoji.sse", "anthropic"),
    ("openai/chat-text-include-usage.sse", "openai"),
    ("ollama/local-gemma3-text.ndjson", "ollama"),
]


@pytest.mark.parametrize(("name", "dialect"), TRANSPORT_CASES)
def test_source_raises_midway(name: str, dialect: str) -> None:
    body = fixture(name).read_bytes()
    cut = len(body) * 2 // 3
    prefix = via_stream(body[:cut], dialect)  # what arrived before the failure
    assert isinstance(prefix.exception, TruncatedStreamError)
    text = the_text(prefix.raw_message)
    assert text

    stream = msgwire.stream(failing_source(body, cut), dialect)
    events = []
    with pytest.raises(TransportError) as caught:
        events.extend(stream)
    error = check_transport_error(caught.value, cut, text, dialect)
    assert canon(events, stream.message().id) == prefix.events
    assert canon_message(stream.message()) == canon_message(error.partial_message)
    assert stream.diagnostics == error.diagnostics
    assert list(stream) == []  # the stream is over

    with pytest.raises(TransportError) as caught:
        msgwire.assemble(failing_source(body, cut), dialect)
    check_transport_error(caught.value, cut, text, dialect)


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "dialect"), TRANSPORT_CASES)
async def test_async_source_raises_midway(name: str, dialect: str) -> None:
    body = fixture(name).read_bytes()
    cut = len(body) // 2
    text = the_text(via_stream(body[:cut], dialect).raw_message)
    stream = msgwire.astream(failing_async_source(body, cut), dialect)
    with pytest.raises(TransportError) as caught:
        async for _ in stream:
            pass
    error = check_transport_error(caught.value, cut, text, dialect)
    assert canon_message(stream.message()) == canon_message(error.partial_message)


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "dialect"), TRANSPORT_CASES)
async def test_astream_next_batch_source_raises_midway(name: str, dialect: str) -> None:
    body = fixture(name).read_bytes()
    cut = len(body) // 2
    prefix = via_stream(body[:cut], dialect)
    stream = msgwire.astream(failing_async_source(body, cut), dialect)
    events: list[Any] = []

    async def read_batches() -> None:
        while batch := await stream.next_batch():
            events.extend(batch)

    with pytest.raises(TransportError) as caught:
        await read_batches()
    check_transport_error(caught.value, cut, the_text(prefix.raw_message), dialect)
    assert canon(events, stream.message().id) == prefix.events
    assert await stream.next_batch() == []


def test_source_raises_before_any_byte() -> None:
    def source() -> Iterator[bytes]:
        raise ConnectionLost(111, "Connection refused")
        yield b""  # pragma: no cover

    with pytest.raises(TransportError) as caught:
        msgwire.assemble(source(), "gemini")
    assert caught.value.offset == 0
    assert caught.value.partial_message.content == []
    assert caught.value.partial_message.stop_reason == "error"


def test_base_exceptions_from_the_source_pass_through() -> None:
    def source() -> Iterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        raise KeyboardInterrupt

    stream = msgwire.stream(source(), "openai")
    with pytest.raises(KeyboardInterrupt):
        list(stream)


# malformed JSON


MALFORMED_CASES: dict[str, bytes] = {
    "openai": sse(chat_chunk({"content": "ok"}), (None, '{"id": "chatcmpl-1", "choices": @oops}')),
    "openai-responses": sse(RESPONSES_PREFIX[0], ("response.output_text.delta", '{"type": @oops}')),
    "anthropic": ANTHROPIC_OVERLOADED[: ANTHROPIC_OVERLOADED.index(b"event: ping")] + sse((None, '{"type": @oops}')),
    "gemini": sse(
        (None, {"candidates": [{"content": {"parts": [{"text": "ok"}]}}]}), (None, '{"candidates": [@oops]}')
    ),
    "ollama": b'{"message":{"content":"ok"}}\n{"message": {"content": @oops}}\n{"done": true}\n',
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_malformed_json_payload(dialect: str) -> None:
    body = MALFORMED_CASES[dialect]
    bad = next(p for p in payloads(body, dialect) if b"@oops" in p.data)
    offset = bad.offset + bad.data.index(b"@oops")  # the payload's offset plus where in it
    got = check_failure(body, dialect, MalformedStreamError, offset)
    error = got.exception
    assert isinstance(error, ValueError)
    assert isinstance(error, DecodeError)
    assert bad.offset <= error.offset < bad.end
    assert "JSON is malformed" in str(error)
    if dialect != "openai-responses":
        assert the_text(error.partial_message) == ("Once" if dialect == "anthropic" else "ok")


@pytest.mark.parametrize("dialect", SSE_DIALECTS)
@pytest.mark.parametrize("payload", ['"a string"', "[1, 2, 3]", '{"type": 5, "choices": 5, "candidates": 5}', "null"])
def test_payload_of_the_wrong_shape_is_malformed(dialect: str, payload: str) -> None:
    body = sse((None, payload))
    start = len(b"data: ")
    got = check_failure(body, dialect, MalformedStreamError, range(start, start + len(payload) + 1))
    assert got.exception.partial_message.content == []


# truncated streams


def cut_points(body: bytes, dialect: str) -> tuple[list[int], list[int]]:
    """Cuts before the payload that ends the message (the stream must be truncated), and cuts
    after it (the stream may still be whole: the terminal marker is all that is missing)."""
    finishing = next(p for p in payloads(body, dialect) if ends_message(p, dialect))
    size = len(body)
    before = {1, 2, size // 10, size // 3, size // 2, finishing.offset - 1, finishing.offset, finishing.end - 1}
    after = {finishing.end, finishing.end + 1, size - 2, size - 1}
    return sorted(c for c in before if 0 < c < finishing.end), sorted(c for c in after if finishing.end <= c < size)


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_truncated_fixture(path: Path) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    full = reference(path)
    before, after = cut_points(body, dialect)
    assert len(before) >= 5
    for cut in before:
        got = via_stream(body[:cut], dialect)
        assert got.error is not None, cut
        assert got.error["class"] == "TruncatedStreamError", (cut, got.error)
        assert got.exception.offset == cut
        assert got.exception.dialect == dialect
        assert "the stream ended early" in str(got.exception)
        assert got.events == full.events[: len(got.events)], cut  # the events so far, none invented
        assert_prefix_of(got.message, full.message)
        same(via_decoder(pieces(body[:cut], 333), dialect), got)
        assert via_assemble(body[:cut], dialect) == (got.message, got.error)
    if full.error is not None:
        return  # the full stream fails (a provider error): past its end there is nothing to cut
    for cut in after:
        got = via_stream(body[:cut], dialect)
        if got.error is None:  # whole but for the terminal marker: said in a diagnostic
            assert got.message["stop_reason"] == full.message["stop_reason"]
            assert got.message.get("content") == full.message.get("content")
            codes = {d["code"] for d in got.diagnostics}
            # Gemini has no end marker, and Ollama's is the `done: true` line itself
            assert dialect in ("gemini", "ollama") or codes & {"missing_done", "missing_message_stop"}, codes
        else:
            assert got.error["class"] == "TruncatedStreamError", (cut, got.error)
            assert got.exception.offset == cut
            assert_prefix_of(got.message, full.message)


def test_empty_stream_is_truncated() -> None:
    for dialect in DIALECTS:
        with pytest.raises(TruncatedStreamError) as caught:
            msgwire.assemble(b"", dialect)
        assert caught.value.offset == 0
        assert caught.value.partial_message.content == []
        assert caught.value.partial_message.stop_reason == "error"


def test_undispatched_last_event_is_a_diagnostic() -> None:
    body = fixture("openai/chat-text-include-usage.sse").read_bytes()
    cut = body.rindex(b"data: [DONE]") + len(b"data: [DONE]")  # no blank line after it
    got = via_stream(body[:cut], "openai")
    assert got.error is None
    assert [d["code"] for d in got.diagnostics] == ["undispatched_event", "missing_done"]
    assert got.diagnostics[0]["offset"] == body.rindex(b"data: [DONE]")


# limits


def first_long_line(body: bytes, dialect: str, limit: int) -> int:
    return next(start for start, length in lines(body, dialect) if length > limit)


@pytest.mark.parametrize("path", FIXTURES, ids=FIXTURE_IDS)
def test_max_line_size(path: Path) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    limit = 80
    offset = first_long_line(body, dialect, limit) + limit  # the first byte past the limit
    got = check_failure(body, dialect, LimitExceededError, offset, chunk_size=41, max_line_size=limit)
    error = got.exception
    assert (error.limit_name, error.limit) == ("max_line_size", limit)
    assert_prefix_of(got.message, reference(path).message)


@pytest.mark.parametrize("path", SSE_FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in SSE_FIXTURES])
def test_max_event_size(path: Path) -> None:
    body = path.read_bytes()
    dialect = dialect_of(path)
    limit = min(300, max(len(p.data) for p in sse_payloads(body)) - 1)
    offending = next(p for p in sse_payloads(body) if len(p.data) > limit)
    got = check_failure(body, dialect, LimitExceededError, offending.offset, chunk_size=53, max_event_size=limit)
    error = got.exception
    assert (error.limit_name, error.limit) == ("max_event_size", limit)
    assert_prefix_of(got.message, reference(path).message)


def test_max_event_size_in_ndjson() -> None:
    """An NDJSON line is one event: ``max_event_size`` bounds it as the line limit does."""
    path = fixture("ollama/local-gemma3-text.ndjson")
    body = path.read_bytes()
    limit = 200
    offset = first_long_line(body, "ollama", limit) + limit
    got = check_failure(body, "ollama", LimitExceededError, offset, max_event_size=limit)
    assert got.exception.limit == limit
    assert got.exception.limit_name == "max_event_size"


def test_max_event_size_counts_multi_line_data() -> None:
    body = b"data: " + b"a" * 30 + b"\ndata: " + b"b" * 30 + b"\n\n"
    offset = body.index(b"b")  # the value that takes the event past the limit
    check_failure(body, "openai", LimitExceededError, offset, max_event_size=50)


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "openai-responses"])
def test_max_tool_args_size_streamed(dialect: str) -> None:
    fragments = ['{"city": ', '"Paris", ', '"unit": "celsius"', "}"]
    body = tool_args_stream(dialect, fragments)
    limit = 20  # the third fragment goes past it
    assert len("".join(fragments[:2])) <= limit < len("".join(fragments[:3]))
    arguments = payloads(body, dialect)
    offending = next(p for p in arguments if b"celsius" in p.data)
    got = check_failure(body, dialect, LimitExceededError, offending.offset, max_tool_args_size=limit)
    error = got.exception
    assert (error.limit_name, error.limit) == ("max_tool_args_size", limit)
    (call,) = error.partial_message.content
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == "".join(fragments[:2])  # nothing cut silently: the rest was refused
    assert call.malformed  # unfinished arguments are flagged, never run as if whole


@pytest.mark.parametrize("dialect", ["gemini", "ollama"])
def test_max_tool_args_size_whole(dialect: str) -> None:
    body = tool_args_stream(dialect, ['{"city": "Paris", "unit": "celsius"}'])
    offset = payloads(body, dialect)[0].offset
    got = check_failure(body, dialect, LimitExceededError, offset, max_tool_args_size=20)
    (call,) = got.exception.partial_message.content
    assert isinstance(call, ToolCallBlock)
    assert call.arguments in ("", "{}")


def test_max_tool_args_size_in_fixture() -> None:
    path = fixture("openai/chat-parallel-tool-calls-usage.sse")
    body = path.read_bytes()
    limit = 10
    sizes: dict[int, int] = {}
    offending = None
    for payload in sse_payloads(body):
        if payload.data == b"[DONE]":
            continue
        for choice in json.loads(payload.data)["choices"]:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                sizes[call["index"]] = sizes.get(call["index"], 0) + len(call["function"].get("arguments") or "")
                if sizes[call["index"]] > limit and offending is None:
                    offending = payload
    assert offending is not None
    got = check_failure(body, "openai", LimitExceededError, offending.offset, max_tool_args_size=limit)
    assert got.exception.limit_name == "max_tool_args_size"
    assert all(len(b.arguments) <= limit for b in got.raw_message.content if isinstance(b, ToolCallBlock))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_max_depth_in_tool_arguments(dialect: str) -> None:
    """Arguments nested deeper than ``max_depth`` are refused with a typed error."""
    limit = 3
    fragments = ['{"a": [', "[", '[{"b": 1}]', "]]}"]  # 5 deep; the third fragment goes past 3
    body = tool_args_stream(dialect, fragments)
    if dialect in ("gemini", "ollama"):  # whole arguments: the payload that holds them
        offset = payloads(body, dialect)[0].offset
    else:
        offset = next(p for p in payloads(body, dialect) if b'{\\"b\\": 1}' in p.data).offset
    got = check_failure(body, dialect, LimitExceededError, offset, max_depth=limit)
    error = got.exception
    assert (error.limit_name, error.limit) == ("max_depth", limit)
    assert isinstance(error, ValueError)
    # within the limit, the same call is fine
    ok = via_stream(body, dialect, max_depth=5)  # `[[1]]` is 2 deep
    assert ok.error is None
    call = next(b for b in ok.raw_message.content if isinstance(b, ToolCallBlock))
    assert call.parsed_arguments() == {"a": [[[{"b": 1}]]]}
    assert not call.malformed


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_max_depth_with_partial_args(dialect: str) -> None:
    body = tool_args_stream(dialect, ['{"a": ', "[[[[[", "]]]]]}"])
    got = via_stream(body, dialect, max_depth=5, partial_args=True)
    assert got.error is not None
    assert (got.error["class"], got.error["limit_name"]) == ("LimitExceededError", "max_depth")


def test_max_depth_brackets_inside_strings_do_not_count() -> None:
    body = tool_args_stream("openai", ['{"text": "[[[[[[[[', '{{{{{{ \\" [[[["}'])
    got = via_stream(body, "openai", max_depth=1)
    assert got.error is None
    (call,) = got.raw_message.content
    assert call.parsed_arguments() == {"text": '[[[[[[[[{{{{{{ " [[[['}


def server_tool_stream(input_fragments: list[str], block_input: Any = None) -> bytes:
    """An Anthropic stream with one server tool block (kept raw), its input streamed."""
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": block_input or {}}
    events = [("message_start", {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {}}})]
    events.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}))
    for fragment in input_fragments:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return sse(*events)


def test_max_tool_args_size_bounds_server_tool_input() -> None:
    """A server tool's streamed input is held until its block ends: it is bounded too."""
    body = server_tool_stream(['{"query": "', "x" * 50, '"}'])
    ok = via_stream(body, "anthropic")
    assert ok.error is None
    (block,) = ok.raw_message.content
    assert isinstance(block, ServerToolCallBlock)
    assert block.data()["input"] == {"query": "x" * 50}
    assert block.arguments == '{"query": "' + "x" * 50 + '"}'  # as it streamed
    offset = next(p for p in sse_payloads(body) if b"xxxx" in p.data).offset
    got = check_failure(body, "anthropic", LimitExceededError, offset, max_tool_args_size=20)
    assert got.exception.limit_name == "max_tool_args_size"


def responses_raw_item_stream(item: dict[str, Any]) -> bytes:
    return sse(
        responses_event("response.created", response={"id": "resp_1", "model": "gpt-5"}),
        responses_event("response.output_item.added", output_index=0, item=item),
        responses_event("response.output_item.done", output_index=0, item=item),
        responses_event("response.completed", response={"id": "resp_1", "status": "completed"}),
    )


@pytest.mark.parametrize("dialect", ["anthropic", "openai-responses"])
def test_max_depth_in_raw_blocks(dialect: str) -> None:
    """Provider blocks kept raw (server tools, built-in tool items) are parsed by whoever reads
    the message: they are held to ``max_depth`` as tool arguments are."""
    nested = {"a": [[{"b": [1]}]]}  # 5 deep inside the block, 6 with the block itself
    if dialect == "anthropic":
        body = server_tool_stream([], block_input=nested)
    else:
        body = responses_raw_item_stream({"type": "web_search_call", "id": "ws_1", "action": nested})
    ok = via_stream(body, dialect, max_depth=6)
    assert ok.error is None
    assert isinstance(ok.raw_message.content[0], ServerToolCallBlock)
    offset = next(p for p in sse_payloads(body) if b'"b"' in p.data).offset
    got = check_failure(body, dialect, LimitExceededError, offset, max_depth=5)
    assert (got.exception.limit_name, got.exception.limit) == ("max_depth", 5)
    assert got.exception.partial_message.content == []


def test_limits_default_to_16_mib() -> None:
    """A 1 MiB line, event and tool call pass the default limits."""
    arguments = json.dumps({"blob": "x" * (1 << 20)})
    body = tool_args_stream("openai", [arguments[i : i + 65536] for i in range(0, len(arguments), 65536)])
    message = msgwire.assemble(body, "openai")
    (call,) = message.content
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == arguments


# --- hostile input: only msgwire errors, never a panic -----------------------------------------


def no_panic(run: Callable[[], Any]) -> tuple[Any, StreamError | None]:
    """Run ``run``: it must return or raise a StreamError. A Rust panic would come through as
    ``pyo3_runtime.PanicException``, a BaseException and no msgwire error: it fails here."""
    try:
        return run(), None
    except BaseException as exc:  # a PanicException is a BaseException
        error = exc
    check_msgwire_error(error)
    assert isinstance(error, StreamError)
    return None, error


def check_msgwire_error(error: BaseException) -> None:
    name = f"{type(error).__module__}.{type(error).__qualname__}: {error}"
    assert isinstance(error, Exception), name
    assert isinstance(error, MsgwireError), name
    assert isinstance(error, StreamError), name
    assert error.partial_message.stop_reason == "error"


def drive_all_ways(body: bytes, dialect: str, chunks: list[bytes], **options: Any) -> Outcome:
    """Feed ``body`` whole and in ``chunks`` through every entry point: nothing but msgwire
    errors, and the same outcome every way."""
    runs = [(via_stream, body), (via_decoder, [body]), (via_stream, chunks), (via_decoder, chunks)]
    outcomes = []
    for run, source in runs:
        result, error = no_panic(functools.partial(run, source, dialect, **options))
        assert error is None  # the via_* helpers catch StreamErrors themselves
        outcomes.append(result)
    for other in outcomes[1:]:
        same(other, outcomes[0])
    for source in (body, iter(chunks)):
        message, error = no_panic(functools.partial(msgwire.assemble, source, dialect, **options))
        if error is None:
            assert (canon_message(message), None) == (outcomes[0].message, outcomes[0].error)
        else:
            assert (canon_message(error.partial_message), describe_error(error)) == (
                outcomes[0].message,
                outcomes[0].error,
            )
    return outcomes[0]


MUTATIONS = ["insert", "replace", "delete", "duplicate", "nul", "invalid-utf8", "deep", "newlines"]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, str]:
    path = draw(st.sampled_from([p for p in FIXTURES if p.stat().st_size < 20000]))
    body = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(body)))
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "insert":
            body[at:at] = draw(st.binary(min_size=1, max_size=20))
        elif kind == "replace":
            body[at : at + draw(st.integers(1, 20))] = draw(st.binary(min_size=1, max_size=20))
        elif kind == "delete":
            del body[at : at + draw(st.integers(1, 200))]
        elif kind == "duplicate":
            body[at:at] = body[at : at + draw(st.integers(1, 500))]
        elif kind == "nul":
            body[at:at] = b"\x00" * draw(st.integers(1, 4))
        elif kind == "invalid-utf8":
            body[at:at] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80"]))
        elif kind == "deep":
            body[at:at] = draw(st.sampled_from([b"[", b"{", b'{"a":'])) * 2000
        else:
            body[at:at] = draw(st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\n", b"\r\r"]))
    return bytes(body), dialect_of(path)


@st.composite
def chunked(draw: st.DrawFn, body: bytes) -> list[bytes]:
    if not body:
        return []
    cuts = sorted(set(draw(st.lists(st.integers(0, len(body)), max_size=25))))
    bounds = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


@examples(150, all_health_checks=True)
@given(data=st.data())
def test_hostile_mutated_fixtures(data: st.DataObject) -> None:
    body, dialect = data.draw(mutated(), label="body")
    chunks = data.draw(chunked(body), label="chunks")
    drive_all_ways(body, dialect, chunks)


@examples(60, all_health_checks=True)
@given(
    dialect=st.sampled_from(DIALECTS),
    prefix=st.sampled_from([b"", b"data: ", b"event: error\ndata: ", b"data: {", b'{"message":']),
    noise=st.binary(max_size=600),
    data=st.data(),
)
def test_hostile_random_bytes(dialect: str, prefix: bytes, noise: bytes, data: st.DataObject) -> None:
    body = prefix + noise
    drive_all_ways(body, dialect, data.draw(chunked(body), label="chunks"))


@examples(40, all_health_checks=True)
@given(
    dialect=st.sampled_from(DIALECTS),
    limits=st.fixed_dictionaries(
        {},
        optional={
            "max_event_size": st.integers(0, 400),
            "max_line_size": st.integers(0, 400),
            "max_tool_args_size": st.integers(0, 100),
            "max_depth": st.integers(1, 5),
        },
    ),
    data=st.data(),
)
def test_hostile_with_small_limits(dialect: str, limits: dict[str, int], data: st.DataObject) -> None:
    path = data.draw(st.sampled_from([p for p in FIXTURES if dialect_of(p) == dialect]), label="fixture")
    body = path.read_bytes()
    drive_all_ways(body, dialect, data.draw(chunked(body), label="chunks"), **limits)


DEEP = 100_000


def deep_payloads(dialect: str) -> dict[str, bytes]:
    """100000 nested ``[`` in tool arguments and in a payload, closed and unclosed."""
    closed = "[" * DEEP + "]" * DEEP
    unclosed = "[" * DEEP
    out = {
        "args-closed": tool_args_stream(dialect, [closed[i : i + 9999] for i in range(0, len(closed), 9999)]),
        "args-unclosed": tool_args_stream(dialect, [unclosed]),
        "args-objects": tool_args_stream(dialect, ['{"a":' * DEEP]),
    }
    if dialect == "anthropic":
        out["raw-block-start"] = server_tool_stream([], block_input=None).replace(
            b'"input":{}', closed.join(['"input":', ""]).encode()
        )
        out["raw-block-deltas"] = server_tool_stream([closed[i : i + 9999] for i in range(0, len(closed), 9999)])
    if dialect == "openai-responses":
        out["raw-block-item"] = responses_raw_item_stream({"type": "web_search_call", "id": "ws_1"}).replace(
            b'"id":"ws_1"', b'"id":"ws_1","action":' + closed.encode()
        )
    if dialect == "ollama":
        out["payload-field"] = ('{"x": ' + closed + ', "done": true}\n').encode()
        out["payload-error"] = ('{"error": ' + closed + "}\n").encode()
        out["payload-unclosed"] = ('{"message": ' + unclosed + "\n").encode()
        out["payload-array"] = (closed + "\n").encode()
    else:
        out["payload-field"] = sse((None, '{"type": "x", "x": ' + closed + "}"))
        out["payload-error"] = sse(("error", '{"type": "error", "error": ' + closed + "}"))
        out["payload-unclosed"] = sse((None, '{"type": ' + unclosed))
        out["payload-array"] = sse((None, closed))
    return out


@pytest.mark.parametrize("dialect", DIALECTS)
def test_hostile_deep_nesting(dialect: str) -> None:
    for name, body in deep_payloads(dialect).items():
        for partial_args in (False, True):
            chunks = pieces(body, 4093)
            drive_all_ways(body, dialect, chunks, partial_args=partial_args)
            error = via_stream(body, dialect, partial_args=partial_args).exception
            if name == "args-closed" or (name.startswith("args") and dialect not in ("gemini", "ollama")):
                # tool arguments past max_depth (200 by default) are refused
                assert isinstance(error, LimitExceededError), (name, error)
                assert error.limit_name == "max_depth"
            elif name.startswith("args"):  # unclosed arguments inside a whole payload: its JSON is cut
                assert isinstance(error, MalformedStreamError), (name, error)
            elif name == "raw-block-item" or name == "raw-block-deltas":
                assert isinstance(error, LimitExceededError), (name, error)
            else:
                assert error is None or isinstance(error, StreamError), (name, error)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_hostile_huge_single_line(dialect: str) -> None:
    """A line past the default 16 MiB limit: refused early, whole or in pieces."""
    size = 16 * 1024 * 1024 + 10
    body = (b"data: " if dialect != "ollama" else b"") + b'{"x": "' + b"a" * size + b'"}\n\n'
    whole = via_stream(body, dialect).exception
    assert isinstance(whole, LimitExceededError)
    assert whole.limit == 16 * 1024 * 1024
    assert whole.offset == 16 * 1024 * 1024
    pieced = via_stream(pieces(body, 1 << 20), dialect).exception
    assert describe_error(pieced) == describe_error(whole)


TEXT = "@@TEXT@@"


def text_stream(dialect: str) -> bytes:
    """A whole stream of one text, ``@@TEXT@@`` standing where raw bytes go in."""
    if dialect == "openai":
        return sse(chat_chunk({"content": TEXT}), chat_chunk({}, "stop"), (None, "[DONE]"))
    if dialect == "openai-responses":
        delta = responses_event(
            "response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=TEXT
        )
        done = responses_event("response.completed", response={"id": "resp_1", "status": "completed"})
        return sse(*RESPONSES_PREFIX[:3], delta, done)
    if dialect == "anthropic":
        head = ANTHROPIC_OVERLOADED[: ANTHROPIC_OVERLOADED.index(b"event: ping")].replace(
            b'"Once"', TEXT.join('""').encode()
        )
        tail = sse(
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ("message_stop", {"type": "message_stop"}),
        )
        return head + tail
    if dialect == "gemini":
        return sse((None, {"candidates": [{"content": {"parts": [{"text": TEXT}]}, "finishReason": "STOP"}]}))
    return b"".join(json.dumps(line).encode() + b"\n" for line in [{"message": {"content": TEXT}}, {"done": True}])


JUNK = [
    b"\x00",
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\\u0000",
    b"\\ud800",
    b"\\udc00\\ud800",
    b"\x1b[31m",
    b"\r",
    b"\x85",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("junk", JUNK, ids=repr)
def test_hostile_bytes_in_text(dialect: str, junk: bytes) -> None:
    """NUL bytes, invalid UTF-8, lone surrogates and control characters inside the text."""
    template = text_stream(dialect)
    assert msgwire.assemble(template, dialect).content[0].text == TEXT
    body = template.replace(TEXT.encode(), b"hello " + junk + b" world")
    chunks = [body[i : i + 1] for i in range(len(body))]
    got = drive_all_ways(body, dialect, chunks)
    drive_all_ways(body, dialect, chunks, partial_args=True)
    if got.error is None:
        (block,) = got.raw_message.content
        assert isinstance(block, TextBlock)
        assert block.text.startswith("hello ")
        assert block.text.endswith(" world")


@examples(60, all_health_checks=True)
@given(
    dialect=st.sampled_from(DIALECTS),
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("feed"), st.binary(max_size=80)),
            st.tuples(st.just("fixture"), st.integers(0, 10_000)),
            st.sampled_from([("end",), ("finish",), ("message",), ("diagnostics",), ("abort",), ("offset",)]),
        ),
        max_size=12,
    ),
)
def test_hostile_decoder_call_sequences(dialect: str, steps: list[tuple[Any, ...]]) -> None:
    """Any sequence of calls on a Decoder (feed after the end, end twice, abort after a
    failure...) gives events, messages or msgwire errors: nothing else."""
    body = next(p for p in FIXTURES if dialect_of(p) == dialect).read_bytes()
    decoder = msgwire.Decoder(dialect, partial_args=True)
    ended = False
    for step in steps:
        ended = ended or step[0] in ("end", "finish", "abort")
        try:
            if step[0] == "feed":
                decoder.feed(step[1])
            elif step[0] == "fixture":
                decoder.feed(body[step[1] : step[1] + 500])
            elif step[0] == "end":
                decoder.end()
            elif step[0] == "finish":
                decoder.finish()
            elif step[0] == "message":
                assert isinstance(decoder.message(), AssistantMessage)
            elif step[0] == "diagnostics":
                assert isinstance(decoder.diagnostics, list)
            elif step[0] == "abort":
                decoder.abort("gone")
            else:
                assert decoder.offset >= 0
        except BaseException as exc:  # a PanicException is a BaseException
            error = exc
        else:
            continue
        if isinstance(error, msgwire.UsageError):
            # misuse: bytes fed after the stream ended (the caller's bug, not the stream's)
            assert step[0] in ("feed", "fixture"), (step, error)
            assert ended, (step, error)
            continue
        check_msgwire_error(error)
        assert decoder.message().stop_reason == "error"


# --- partial tool arguments -----------------------------------------------------------------


def grows(before: Any, after: Any) -> bool:
    """``after`` extends ``before`` (the arguments parsed so far only ever grow)."""
    if isinstance(before, dict):
        return isinstance(after, dict) and all(k in after and grows(v, after[k]) for k, v in before.items())
    if isinstance(before, list):
        return (
            isinstance(after, list)
            and len(before) <= len(after)
            and all(grows(a, b) for a, b in zip(before, after, strict=False))
        )
    if isinstance(before, str):
        return isinstance(after, str) and after.startswith(before)
    if isinstance(before, bool) or before is None:
        return before == after
    # an unfinished number is cut to its longest valid prefix: `1` -> `12` -> `12.5`, `-0` -> `-0.5`
    if not isinstance(after, int | float) or isinstance(after, bool):
        return False
    return repr(abs(after)).startswith(repr(abs(before))) and (before == 0 or (before < 0) == (after < 0))


def check_partial_args(events: list[Any], message: AssistantMessage) -> int:
    """Every call's ``parsed`` snapshots grow monotonically and end as its parsed arguments.
    Returns how many deltas carried a snapshot."""
    snapshots: dict[int, list[Any]] = {}
    for event in events:
        if isinstance(event, ToolCallDelta) and event.parsed is not msgspec.UNSET:
            snapshots.setdefault(event.index, []).append(event.parsed)
        elif isinstance(event, ToolCallDelta):
            assert event.index not in snapshots, "a snapshot, once there, stays"
    for index, seen in snapshots.items():
        for before, after in itertools.pairwise(seen):
            assert grows(before, after), (before, after)
        block = message.content[index]
        assert isinstance(block, ToolCallBlock)
        assert seen[-1] == block.parsed_arguments()
    return sum(len(s) for s in snapshots.values())


TOOL_FIXTURES = [
    "openai/chat-parallel-tool-calls-usage.sse",
    "openai/responses-encrypted-reasoning-text-function-call.sse",
    "openai/responses-function-call-2025-03-no-seqnum.sse",
    "openai-compat/groq-reasoning-tool-call-x_groq-usage.sse",
    "anthropic/server-tool-use-then-tool-use-with-args.sse",
    "anthropic/thinking-then-tool-use-empty-args.sse",
    "gemini/function-call-with-id.sse",
    "gemini/function-call-single-chunk-2.0-flash.sse",
]


@pytest.mark.parametrize("name", TOOL_FIXTURES)
def test_partial_args_on_fixtures(name: str) -> None:
    path = fixture(name)
    body = path.read_bytes()
    dialect = dialect_of(path)
    got = via_stream(body, dialect, partial_args=True)
    ref = reference(path)
    assert got.error is None
    assert got.message == ref.message
    # the same events, but for `parsed`
    assert [{k: v for k, v in e.items() if k != "parsed"} for e in got.events] == ref.events
    counted = check_partial_args(got.raw_events, got.raw_message)
    if name != "anthropic/thinking-then-tool-use-empty-args.sse":
        assert counted
    # the snapshots do not depend on how the bytes were cut
    same(via_decoder(pieces(body, 7), dialect, partial_args=True), got)
    # without the option, no delta carries a snapshot
    assert all(e.parsed is msgspec.UNSET for e in ref.raw_events if isinstance(e, ToolCallDelta))


@FAST
@given(
    value=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    dialect=st.sampled_from(["openai", "anthropic", "openai-responses"]),
    data=st.data(),
)
def test_partial_args_grow_monotonically(value: dict[str, Any], dialect: str, data: st.DataObject) -> None:
    arguments = json.dumps(value, ensure_ascii=data.draw(st.booleans(), label="ascii"))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(arguments) - 1)), max_size=30), label="cuts")))
    bounds = [0, *[c for c in cuts if c < len(arguments)], len(arguments)]
    fragments = [arguments[a:b] for a, b in itertools.pairwise(bounds)]
    body = tool_args_stream(dialect, fragments)
    got = via_stream(body, dialect, partial_args=True)
    assert got.error is None
    (call,) = got.raw_message.content
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == arguments
    assert call.parsed_arguments() == value
    assert check_partial_args(got.raw_events, got.raw_message) >= 1
    last = [e for e in got.raw_events if isinstance(e, ToolCallDelta)][-1]
    assert last.parsed == value
    begin = [e for e in got.raw_events if isinstance(e, ToolCallBegin)]
    assert [(e.id, e.name) for e in begin] == [("call_1" if dialect != "anthropic" else "toolu_1", "f")]


# --- threads ----------------------------------------------------------------------------------


def big_stream(seed: str, deltas: int = 20_000) -> tuple[bytes, str, dict[str, Any]]:
    """A large OpenAI stream: many text deltas, then a tool call with large arguments."""
    words = [f"{seed}{i} " for i in range(deltas)]
    arguments = {"seed": seed, "items": [f"{seed}-{i}" for i in range(30_000)]}
    text = json.dumps(arguments)
    events = [chat_chunk({"content": w}) for w in words]
    first = {"index": 0, "id": f"call_{seed}", "type": "function", "function": {"name": "lookup", "arguments": ""}}
    events.append(chat_chunk({"tool_calls": [first]}))
    events += [
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": text[i : i + 500]}}]})
        for i in range(0, len(text), 500)
    ]
    events.append(chat_chunk({}, "tool_calls"))
    events.append((None, "[DONE]"))
    return sse(*events), "".join(words), arguments


def test_threads_assemble_at_the_same_time() -> None:
    streams = [big_stream("alpha"), big_stream("beta")]
    assert all(len(body) > 2_000_000 for body, _, _ in streams)
    results: dict[int, list[Any]] = {0: [], 1: []}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(slot: int) -> None:
        body, _, _ = streams[slot]
        try:
            for round_ in range(3):
                barrier.wait(timeout=60)
                if round_ == 0:
                    results[slot].append(msgwire.assemble(body, "openai"))  # one chunk: decoded without the GIL
                elif round_ == 1:
                    results[slot].append(msgwire.assemble(pieces(body, 100_000), "openai"))
                else:
                    results[slot].append(msgwire.stream(pieces(body, 70_000), "openai").until_done())
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    for slot, (body, text, arguments) in enumerate(streams):
        expected = canon_message(msgwire.assemble(body, "openai"))
        assert len(results[slot]) == 3
        for message in results[slot]:
            assert canon_message(message) == expected
            text_block, call = message.content
            assert isinstance(text_block, TextBlock)
            assert text_block.text == text
            assert isinstance(call, ToolCallBlock)
            assert call.parsed_arguments() == arguments
            assert message.stop_reason == "tool_use"


def test_offset_stays_the_stream_length_after_end() -> None:
    """``offset`` counts the bytes fed; ending the stream must not reset it (the framers are
    readied for a new stream by ``finish``)."""
    for path in FIXTURES:
        data = path.read_bytes()
        decoder = msgwire.Decoder(dialect_of(path))
        with contextlib.suppress(msgwire.StreamError):
            decoder.feed(data)
            decoder.end()
        assert decoder.offset == len(data), path.name


def test_provider_blocks_typed_like_canonical_blocks_stay_provider_blocks() -> None:
    """A provider block kept whole whose ``type`` is a canonical block's (an item typed
    ``thinking``, a block typed ``image``) must not read back as that block: it is kept as a
    ``provider_part`` of its dialect, and written back to that dialect unchanged."""
    item = {"type": "thinking", "id": "x_1", "status": "completed"}
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "model": "m", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "resp_1", "model": "m", "status": "completed"}},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    message = msgwire.assemble(body, "openai-responses")
    (block,) = message.content
    assert isinstance(block, msgwire.UnknownBlock)
    assert block.data() == {"type": "provider_part", "dialect": "openai-responses", "part": item}
    again = msgwire.loads(msgwire.dumps(message), type=msgwire.AssistantMessage)
    assert again == message  # canonical JSON reads it back as the same provider block

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    anthropic = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "model": "m",
                    "content": [],
                    "usage": {"input_tokens": 1, "output_tokens": 0},
                },
            },
        ),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": image}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = b"".join(f"event: {k}\ndata: {json.dumps(d)}\n\n".encode() for k, d in anthropic)
    message = msgwire.assemble(body, "anthropic")
    (block,) = message.content
    assert isinstance(block, msgwire.UnknownBlock)
    assert block.data() == {"type": "provider_part", "dialect": "anthropic", "part": image}
    session = msgwire.Session(messages=[msgwire.user("hi"), message])
    sent = msgwire.formats.to_request(session, "anthropic")
    assert sent["messages"][1]["content"] == [image]  # written back to its own dialect unchanged
