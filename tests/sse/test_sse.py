"""msgwire.sse: the WHATWG SSE framer through its Python API, and the httpx-sse drop-in.

- The conformance vectors of web-platform-tests ``eventsource/``, rexxars/eventsource-parser and
  florimondmanca/httpx-sse (tests/fixtures/sse/vectors.json, which rust/core/tests/
  sse_conformance.rs reads too; its README says what each checks), each body fed whole, byte
  by byte, cut in two at every point and cut where hypothesis says: same events and end state
  every time.
- Random streams against a spec-literal reference parser written here (tests only: the library
  has no wire rule in Python), and hostile bytes that may raise nothing but msgwire errors.
- httpx-sse's own test suite, run on ``msgwire.sse`` over httpx mock transports (sync and
  async), where the two agree; where httpx-sse departs from the spec the test says so.
- Limits with their offsets, the GIL-released path for big chunks, NDJSON.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import pickle
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx_sse
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import LimitExceededError, MsgwireError
from msgwire.sse import (
    EventSource,
    NDJSONParser,
    ServerSentEvent,
    SSEError,
    SSEParser,
    SSEPending,
    aconnect_sse,
    aiter_ndjson,
    aiter_sse,
    connect_sse,
    iter_ndjson,
    iter_sse,
)
from tests._support.strategies import examples

WIRE = Path(__file__).parents[1] / "fixtures" / "wire"
SSE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "sse"
BOM = b"\xef\xbb\xbf"

Event = tuple[str, str, str, "int | None"]


# --- running a body ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """Everything observable after feeding a stream and finishing it."""

    events: list[Event]
    pending: tuple[bool, int | None] | None  # None: an error stopped the stream
    last_event_id: str
    reconnection_time: int | None
    comments: int
    error: tuple[str | None, int | None] | None = None  # (limit_name, offset)

    @property
    def data(self) -> list[str]:
        return [e[1] for e in self.events]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(e[0], e[1]) for e in self.events]

    @property
    def ids(self) -> list[str]:
        return [e[2] for e in self.events]


def as_tuple(event: ServerSentEvent) -> Event:
    return (event.event, event.data, event.id, event.retry)


def run_on(parser: SSEParser, chunks: Iterable[bytes]) -> Outcome:
    events: list[Event] = []
    error = None
    for chunk in chunks:
        try:
            events += map(as_tuple, parser.feed(chunk))
        except LimitExceededError as exc:
            events += map(as_tuple, exc.events)
            error = (exc.limit_name, exc.offset)
            break
    pending = None
    if error is None:
        end = parser.finish()
        pending = (end.partial_line, end.undispatched)
    return Outcome(events, pending, parser.last_event_id, parser.reconnection_time, parser.comments_seen, error)


def run(chunks: Iterable[bytes], **limits: int) -> Outcome:
    return run_on(SSEParser(**limits), chunks)


def cut(body: bytes, points: Iterable[int]) -> list[bytes]:
    edges = [0, *sorted(points), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


def splittings(body: bytes) -> Iterator[list[bytes]]:
    """Whole, one byte at a time, and in two at every point (empty chunks included)."""
    yield [body]
    yield [body[i : i + 1] for i in range(len(body))]
    for i in range(len(body) + 1):
        yield [body[:i], body[i:]]


def conformant(body: bytes, *chunkings: list[bytes], **limits: int) -> Outcome:
    """The outcome of ``body``, checked to be the same under every splitting (and the given ones)."""
    whole = run([body], **limits)
    for chunks in [*splittings(body), *chunkings]:
        assert run(chunks, **limits) == whole, chunks
    return whole


def conformant_chunks(*chunks: bytes) -> Outcome:
    return conformant(b"".join(chunks), list(chunks))


def message_py_no_newline(message: bytes) -> bytes:
    """A WPT body from resources/message.py?newline=none: the message, then ``\\n``."""
    return message + b"\n"


# --- the conformance vectors (tests/fixtures/sse/vectors.json, shared with the Rust tests) -------


def chunk_bytes(chunk: str | list[Any]) -> bytes:
    """A chunk of vectors.json: UTF-8 text, or parts that are text, ``{"hex"}`` or ``{"repeat", "count"}``."""
    if isinstance(chunk, str):
        return chunk.encode()
    out = b""
    for part in chunk:
        if isinstance(part, str):
            out += part.encode()
        elif "hex" in part:
            out += bytes.fromhex(part["hex"])
        else:
            out += part["repeat"].encode() * part["count"]
    return out


VECTORS: dict[str, dict[str, Any]] = {
    vector["name"]: vector for vector in json.loads((SSE_FIXTURES / "vectors.json").read_text())["vectors"]
}


def vector_chunks(name: str) -> list[bytes]:
    return [chunk_bytes(chunk) for chunk in VECTORS[name]["chunks"]]


@pytest.mark.parametrize("name", list(VECTORS))
def test_conformance_vector(name: str) -> None:
    chunks = vector_chunks(name)
    out = conformant(b"".join(chunks), chunks)
    expect = VECTORS[name]["expect"]
    if "pairs" in expect:
        assert out.pairs == [tuple(pair) for pair in expect["pairs"]]
    if "data" in expect:
        assert out.data == expect["data"]
    if "ids" in expect:
        assert out.ids == expect["ids"]
    if "retries" in expect:
        assert [e[3] for e in out.events] == expect["retries"]
    if "last_event_id" in expect:
        assert out.last_event_id == expect["last_event_id"]
    if "reconnection_time" in expect:
        assert out.reconnection_time == expect["reconnection_time"]
    if "comments" in expect:
        assert out.comments == expect["comments"]
    if "pending" in expect:
        assert out.pending == (expect["pending"]["partial_line"], expect["pending"]["undispatched"])
    for event in out.events:
        assert event[0], "an event type is never empty"


@examples(25)
@given(data=st.data())
@pytest.mark.parametrize("name", list(VECTORS))
def test_conformance_vector_under_any_split(name: str, data: st.DataObject) -> None:
    body = b"".join(vector_chunks(name))
    points = data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts")
    assert run(cut(body, points)) == run([body])


def test_the_bom_is_counted_in_offsets() -> None:
    parser = SSEParser()
    parser.feed(BOM + b"data: x\n\n")
    assert parser.offset == 12
    end = parser.finish()
    assert isinstance(end, SSEPending)
    assert (end.partial_line, end.undispatched, end.clean) == (False, None, True)
    assert parser.offset == 0, "finish starts a new stream"


def test_finish_reports_what_was_lost() -> None:
    ends = [name for name in VECTORS if name.startswith("end-of-stream-")]
    assert ends
    for name in ends:
        body = b"".join(vector_chunks(name))
        expect = VECTORS[name]["expect"]["pending"]
        partial, undispatched = expect["partial_line"], expect["undispatched"]
        parser = SSEParser()
        parser.feed(body)
        end = parser.finish()
        assert (end.partial_line, end.undispatched) == (partial, undispatched), body
        assert end.clean == (not partial and undispatched is None)
        assert repr(end) == f"SSEPending(partial_line={partial}, undispatched={undispatched})"


def test_a_reconnection_keeps_the_id_retry_and_comments() -> None:
    body = message_py_no_newline(b"retry:1000\ndata:test1\n\nid:test\ndata:test2")
    parser = SSEParser()
    first = run_on(parser, [body])
    second = run_on(parser, [body])
    assert first == second
    assert second.ids == [""], "the undispatched block's id never became the last event id"

    parser = SSEParser()
    out = run_on(parser, [BOM + b"id: 1\nretry: 9\n: c\ndata: a\n\nid: 2\ndata: lost\n"])
    assert out.ids == ["1"]
    again = run_on(parser, [BOM + b"data: b\n\n"])
    assert again.events == [("message", "b", "1", None)]
    assert (again.reconnection_time, again.comments) == (9, 1)


def test_an_id_without_data_takes_effect_at_its_blank_line() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 42\n") == []
    assert parser.last_event_id == ""
    assert parser.feed(b"\n") == []
    assert parser.last_event_id == "42"
    parser.feed(b"id: bad\0id\n\n")
    assert parser.last_event_id == "42"
    parser.feed(b"id:\n\n")
    assert parser.last_event_id == ""


# --- against a spec-literal reference --------------------------------------------------------------


def reference(body: bytes) -> tuple[list[Event], str, int | None, int]:
    """The spec's algorithm, read literally: decode as UTF-8, drop one BOM, split lines, interpret."""
    text = body.decode("utf-8", "replace")
    text = text.removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)[:-1]  # the last piece has no terminator: discarded
    events: list[Event] = []
    data: list[str] = []
    event_type, id_buffer, last_id = "", "", ""
    retry: int | None = None
    reconnection: int | None = None
    comments = 0
    for line in lines:
        if not line:
            last_id = id_buffer
            if data:
                events.append((event_type or "message", "\n".join(data), last_id, retry))
            data, event_type, retry = [], "", None
            continue
        if line.startswith(":"):
            comments += 1
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            id_buffer = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = reconnection = min(int(value), 2**64 - 1)
    return events, last_id, reconnection, comments


PIECES = [chunk_bytes(piece) for piece in json.loads((SSE_FIXTURES / "vectors.json").read_text())["random_pieces"]]
streams = st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join)


@examples(400)
@given(body=streams, data=st.data())
def test_random_streams_match_the_reference(body: bytes, data: st.DataObject) -> None:
    points = data.draw(st.lists(st.integers(0, len(body)), max_size=10), label="cuts")
    out = run(cut(body, points))
    events, last_id, reconnection, comments = reference(body)
    assert out.events == events
    assert (out.last_event_id, out.reconnection_time, out.comments) == (last_id, reconnection, comments)


def test_many_event_types_and_ids_come_out_right() -> None:
    # More types than the parser's string cache holds, cycling, and ids that change and repeat.
    body = b"".join(b"event: type%d\nid: %d\ndata: %d\n\n" % (i % 37, i // 3, i) for i in range(500))
    expected = [(f"type{i % 37}", str(i), str(i // 3), None) for i in range(500)]
    assert run([body]).events == expected
    assert run(cut(body, range(7, len(body), 61))).events == expected
    parser = SSEParser()
    parser.feed(body)
    assert parser.last_event_id == str(499 // 3)


def feed_all(parser: SSEParser | NDJSONParser, chunks: list[bytes]) -> LimitExceededError | None:
    """Feed every chunk; the limit error that stopped the stream, if one did."""
    try:
        for chunk in chunks:
            for item in parser.feed(chunk):
                assert isinstance(item, (ServerSentEvent, str))
    except LimitExceededError as exc:
        return exc
    finally:
        parser.finish()
    return None


@examples(300)
@given(
    body=st.binary(max_size=300) | streams,
    data=st.data(),
    max_line_size=st.integers(0, 40),
    max_event_size=st.integers(0, 40),
)
def test_hostile_input_raises_only_msgwire_errors(
    body: bytes, data: st.DataObject, max_line_size: int, max_event_size: int
) -> None:
    chunks = cut(body, data.draw(st.lists(st.integers(0, len(body)), max_size=8), label="cuts"))
    for parser in (
        SSEParser(max_line_size=max_line_size, max_event_size=max_event_size),
        NDJSONParser(max_line_size=max_line_size),
    ):
        error = feed_all(parser, chunks)  # any other exception fails the test
        if error is not None:
            assert isinstance(error, MsgwireError)
            assert isinstance(error, ValueError)
            assert error.offset is not None
            assert 0 <= error.offset <= len(body)


# --- limits ----------------------------------------------------------------------------------------


def test_a_line_over_the_limit_raises_at_the_same_offset_whatever_the_split() -> None:
    limits = {"max_line_size": 10, "max_event_size": 100}
    assert conformant(b"data:12345\r\ndata:67890\r:234567890\n\n", **limits).data == ["12345\n67890"]
    body = b"data:1\n\n: ok\ndata:123456\n\n"
    out = conformant(body, **limits)
    assert out.data == ["1"], "what came before the error is kept"
    assert out.error == ("max_line_size", 13 + 10)
    with pytest.raises(LimitExceededError) as info:
        SSEParser(**limits).feed(body)
    exc = info.value
    assert (exc.limit_name, exc.limit, exc.offset, exc.dialect) == ("max_line_size", 10, 23, "sse")
    assert "(byte 23)" in str(exc)
    assert [e.data for e in exc.events] == ["1"]
    # An endless line is refused before it is buffered past the limit.
    assert run([b"data: ", b"xxxxxxxx", b"xxxxxxxx"], **limits).error == ("max_line_size", 10)


def test_event_data_over_the_limit_raises_at_its_data_line() -> None:
    limits = {"max_line_size": 100, "max_event_size": 5}
    assert conformant(b"data: ab\ndata: cd\n\ndata: 12345\n\n", **limits).data == ["ab\ncd", "12345"]
    for body, offset in [
        (b"data: ab\ndata: cde\n\n", 9 + 6),
        (b"data: 123456\n\n", 6),
        (b"data\ndata\ndata\ndata\ndata\ndata\ndata\n\n", 30 + 4),
    ]:
        assert conformant(body, **limits).error == ("max_event_size", offset), body


def test_the_default_limit_is_16_mib() -> None:
    size = 16 * 1024 * 1024
    fits = b"data: " + b"x" * size + b"\n\n"
    (event,) = SSEParser(max_line_size=size + 6).feed(fits)
    assert len(event.data) == size
    with pytest.raises(LimitExceededError) as info:
        SSEParser(max_line_size=size + 7).feed(b"data: " + b"x" * (size + 1) + b"\n\n")
    assert (info.value.limit_name, info.value.offset) == ("max_event_size", 6)
    with pytest.raises(LimitExceededError) as info:
        SSEParser().feed(fits)
    assert (info.value.limit_name, info.value.offset) == ("max_line_size", size)


def test_a_parser_that_raised_raises_until_finish() -> None:
    parser = SSEParser(max_line_size=8)
    with pytest.raises(LimitExceededError):
        parser.feed(b"data: 1\n\ndata: 123456\n\n")
    with pytest.raises(LimitExceededError) as info:
        parser.feed(b"data: 2\n\n")
    assert info.value.offset == 9 + 8
    assert info.value.events == []
    parser.finish()
    assert [e.data for e in parser.feed(b"data: 3\n\n")] == ["3"]


def test_iterators_yield_the_events_before_an_error_then_raise() -> None:
    seen: list[str] = []
    events = iter_sse([b"data: 1\n\ndata: 2\n\ndata: 123456789\n\n"], max_line_size=10)
    with pytest.raises(LimitExceededError) as info:
        seen.extend(event.data for event in events)
    assert seen == ["1", "2"]
    assert info.value.offset == 18 + 10

    async def drain(events: AsyncIterator[ServerSentEvent], into: list[str]) -> None:
        async for event in events:
            into.append(event.data)  # noqa: PERF401 - what came before the error is kept

    async def collect() -> list[str]:
        out: list[str] = []
        with pytest.raises(LimitExceededError):
            await drain(aiter_sse(achunks([b"data: 1\n\ndata: 123456789\n\n"]), max_line_size=10), out)
        return out

    assert asyncio.run(collect()) == ["1"]


# --- chunks of every kind, big chunks ---------------------------------------------------------------


def test_any_bytes_like_chunk_is_accepted() -> None:
    body = b"event: e\ndata: x\n\n"
    expected = [ServerSentEvent("e", "x")]
    for chunk in (body, bytearray(body), memoryview(body), memoryview(b"--" + body)[2:]):
        assert SSEParser().feed(chunk) == expected
        assert list(iter_sse(chunk)) == expected
    with pytest.raises(TypeError):
        SSEParser().feed("data: x\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not str"):
        list(iter_sse("data: x\n\n"))  # type: ignore[arg-type]


def test_big_chunks_framed_without_the_gil_give_the_same_events() -> None:
    events = b"".join(b"event: t%d\nid: %d\ndata: %s\n\n" % (i % 20, i // 7, b"y" * (i % 300)) for i in range(3000))
    assert len(events) > 4 * 64 * 1024
    small = run(cut(events, range(1000, len(events), 1000)))
    assert run([events]) == small
    assert run([events[:70_000], events[70_000:]]) == small
    # An error in a big chunk carries the events before it.
    with pytest.raises(LimitExceededError) as info:
        SSEParser(max_line_size=400).feed(events + b"data: " + b"z" * 500 + b"\n\n")
    assert [as_tuple(e) for e in info.value.events] == small.events
    assert info.value.offset == len(events) + 400


def test_an_8_mib_event_in_1_kib_pieces() -> None:
    text = "x" * (8 * 1024 * 1024)
    body = ("data: " + text + "\n\n").encode()
    parser = SSEParser()
    out: list[ServerSentEvent] = []
    for i in range(0, len(body), 1024):
        out += parser.feed(body[i : i + 1024])
    assert len(out) == 1
    assert out[0].data == text


# --- ServerSentEvent ---------------------------------------------------------------------------------


def test_server_sent_event_is_httpx_sse_s() -> None:
    # httpx-sse tests/test_models.py
    sse = ServerSentEvent()
    assert (sse.event, sse.data, sse.id, sse.retry) == ("message", "", "", None)
    assert repr(sse) == "ServerSentEvent(event='message')"
    with pytest.raises(json.JSONDecodeError):
        sse.json()
    assert ServerSentEvent(data='{"key": "value"}').json() == {"key": "value"}
    assert ServerSentEvent(data='["item1", "item2"]').json() == ["item1", "item2"]
    sse = ServerSentEvent(data="data", retry=3, id="id", event="event")
    assert repr(sse) == "ServerSentEvent(event='event', data='data', id='id', retry=3)"
    theirs = httpx_sse.ServerSentEvent(data="data", retry=3, id="id", event="event")
    assert repr(sse) == repr(theirs)
    assert ServerSentEvent("e", "d", "i", 5) == ServerSentEvent(event="e", data="d", id="i", retry=5)


def test_server_sent_events_are_values() -> None:
    (event,) = SSEParser().feed(b"event: e\nid: 1\nretry: 7\ndata: [1, 2]\n\n")
    assert event == ServerSentEvent("e", "[1, 2]", "1", 7)
    assert hash(event) == hash(ServerSentEvent("e", "[1, 2]", "1", 7))
    assert event.json() == [1, 2]
    assert pickle.loads(pickle.dumps(event)) == event
    with pytest.raises(AttributeError):
        event.data = "x"  # type: ignore[misc]


# --- httpx-sse's test suite, on msgwire.sse -------------------------------------------------------------


class Body(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


class AsyncBody(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


async def achunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def sse_response(chunks: list[bytes], content_type: str = "text/event-stream") -> httpx.Response:
    return httpx.Response(200, headers={"content-type": content_type}, stream=Body(chunks))


def events_of(chunks: list[bytes]) -> list[Event]:
    return [as_tuple(e) for e in EventSource(sse_response(chunks)).iter_sse()]


def test_event_source_whatwg_examples() -> None:
    assert events_of([b"data: YH00\n", b"data: +2\n", b"data: 10\n", b"\n"]) == [("message", "YH00\n+2\n10", "", None)]
    chunks = [b": test stream\n", b"\n", b"data: first event\n", b"id: 1\n", b"\n"]
    chunks += [b"data: second event\n", b"id\n", b"\n", b"data:  third event\n", b"\n"]
    assert events_of(chunks) == [
        ("message", "first event", "1", None),
        ("message", "second event", "", None),
        ("message", " third event", "", None),
    ]
    assert events_of([b"data\n", b"\n", b"data\n", b"data\n", b"\n", b"data:\n"]) == [
        ("message", "", "", None),
        ("message", "\n", "", None),
    ]
    assert events_of([b"data:test\n", b"\n", b"data: test\n", b"\n"]) == [("message", "test", "", None)] * 2


def test_event_source_fields() -> None:
    assert events_of([b"event: logline\n", b"data: New user connected\n", b"\n"]) == [
        ("logline", "New user connected", "", None)
    ]
    assert events_of([b"data: test\n", b"id: 123\0\n", b"\n"]) == [("message", "test", "", None)]
    assert events_of([b"retry: 1667a\n", b"\n"]) == []
    assert events_of([b"something: ignore\n", b"\n"]) == []
    assert events_of([b"event: message\n", b'data: {"text":"Hello\xe2\x80\xa8World"}\n', b"\n"]) == [
        ("message", '{"text":"Hello\u2028World"}', "", None)
    ]


def test_event_source_retry_without_data_follows_the_spec() -> None:
    # httpx-sse's test_iter_sse_id_retry expects one event with data "" and retry 10000: the spec
    # dispatches nothing, and the reconnection time is what the retry field sets.
    source = EventSource(sse_response([b"retry: 10000\n", b"\n"]))
    assert list(source.iter_sse()) == []
    assert source.reconnection_time == 10000
    theirs = list(httpx_sse.EventSource(sse_response([b"retry: 10000\n", b"\n"])).iter_sse())
    assert [(e.data, e.retry) for e in theirs] == [("", 10000)]


def test_event_source_reads_utf8_whatever_the_charset() -> None:
    # WPT format-utf-8: served as windows-1252, read as UTF-8.
    response = sse_response([b"data:ok\xe2\x80\xa6\n\n"], "text/event-stream;charset=windows-1252")
    assert [e.data for e in EventSource(response).iter_sse()] == ["ok\u2026"]


def test_event_source_tells_the_last_event_id() -> None:
    source = EventSource(sse_response([b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: lost"]))
    assert [e.id for e in source.iter_sse()] == ["1", "2"]
    assert source.last_event_id == "2"


def test_event_source_aiter_sse() -> None:
    response = httpx.Response(
        200,
        headers={"content-type": "text/event-stream"},
        stream=AsyncBody([b"data: YH00\n", b"data: +2\n", b"data: 10\n", b"\n"]),
    )

    async def collect() -> list[Event]:
        return [as_tuple(sse) async for sse in EventSource(response).aiter_sse()]

    assert asyncio.run(collect()) == [("message", "YH00\n+2\n10", "", None)]


def test_event_source_closes_the_body_iterator_when_left_early() -> None:
    closed: list[str] = []

    def body() -> Iterator[bytes]:
        try:
            while True:
                yield b"data: x\n\n"
        finally:
            closed.append("sync")

    async def abody() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"data: x\n\n"
        finally:
            closed.append("async")

    response = sse_response([])
    response.iter_bytes = lambda *_: body()  # type: ignore[method-assign]
    events = EventSource(response).iter_sse()
    assert next(events).data == "x"
    events.close()  # type: ignore[attr-defined]
    assert closed == ["sync"]

    async def first() -> None:
        response.aiter_bytes = lambda *_: abody()  # type: ignore[method-assign]
        events = EventSource(response).aiter_sse()
        assert (await anext(events)).data == "x"
        await events.aclose()
        assert closed == ["sync", "async"]

    asyncio.run(first())


def mock_client_handler(content_type: str) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/":
            return httpx.Response(200, text="Hello, world!")
        assert request.url.path == "/sse"
        return httpx.Response(200, headers={"content-type": content_type}, text="data: test\n\n")

    return handler


@pytest.mark.parametrize(
    "content_type",
    ["text/event-stream", "application/json, text/event-stream; charset=utf-8"],
    ids=["exact", "contains"],
)
def test_connect_sse(content_type: str) -> None:
    with httpx.Client(transport=httpx.MockTransport(mock_client_handler(content_type))) as client:
        response = client.request("GET", "http://testserver")
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        headers = {"X-Trace": "1"}
        with connect_sse(client, "GET", "http+sse://testserver/sse", headers=headers) as event_source:
            request = event_source.response.request
            assert request.headers["cache-control"] == "no-store"
            assert request.headers["accept"] == "text/event-stream"
            assert request.headers["x-trace"] == "1"
            assert [e.data for e in event_source.iter_sse()] == ["test"]
        assert headers == {"X-Trace": "1"}, "the caller's headers are left alone"


def test_connect_sse_non_event_stream_received() -> None:
    transport = httpx.MockTransport(mock_client_handler("text/event-stream"))
    with (
        httpx.Client(transport=transport) as client,
        pytest.raises(SSEError, match="text/event-stream"),
        connect_sse(client, "GET", "http://testserver") as event_source,
    ):
        for _ in event_source.iter_sse():
            pass  # pragma: no cover
    response = httpx.Response(200, text="{}")
    events = EventSource(response).iter_sse()  # the check is made when iteration starts
    with pytest.raises(SSEError, match="got 'text/plain'"):
        next(events)
    with pytest.raises(SSEError, match="got ''"):
        next(EventSource(httpx.Response(200, content=b"data: x\n\n")).iter_sse())


def test_aconnect_sse() -> None:
    async def go() -> tuple[str, list[str]]:
        transport = httpx.MockTransport(mock_client_handler("text/event-stream"))
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.request("GET", "http://testserver")
            assert response.status_code == 200
            async with aconnect_sse(client, "GET", "http+sse://testserver/sse") as event_source:
                cache_control = event_source.response.request.headers["cache-control"]
                return cache_control, [e.data async for e in event_source.aiter_sse()]

    assert asyncio.run(go()) == ("no-store", ["test"])


def test_aconnect_sse_non_event_stream_received() -> None:
    async def go() -> None:
        transport = httpx.MockTransport(mock_client_handler("text/event-stream"))
        async with (
            httpx.AsyncClient(transport=transport) as client,
            aconnect_sse(client, "GET", "http://testserver") as event_source,
        ):
            async for _ in event_source.aiter_sse():
                pass  # pragma: no cover

    with pytest.raises(SSEError, match="text/event-stream"):
        asyncio.run(go())


def test_sse_error_is_a_msgwire_error_and_an_httpx_transport_error() -> None:
    assert issubclass(SSEError, MsgwireError)
    assert issubclass(SSEError, httpx.TransportError)
    assert issubclass(SSEError, httpx.HTTPError)
    assert SSEError.__module__ == "msgwire.sse"
    assert msgwire.sse.SSEError is SSEError
    assert pickle.loads(pickle.dumps(SSEError)) is SSEError
    assert not hasattr(msgwire, "SSEError"), "nothing added to the top-level namespace"


# --- the same events as httpx-sse, on every recorded stream -------------------------------------------


def recorded(suffix: str) -> list[Path]:
    return sorted(WIRE.rglob(f"*{suffix}"))


@pytest.mark.parametrize("path", recorded(".sse"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_recorded_streams_give_httpx_sse_s_events(path: Path) -> None:
    body = path.read_bytes()
    ours = [as_tuple(e) for e in EventSource(sse_response(cut(body, range(0, len(body), 4096)))).iter_sse()]
    theirs = [(e.event, e.data, e.id, e.retry) for e in httpx_sse.EventSource(sse_response([body])).iter_sse()]
    assert ours, "every recording has events"
    assert ours == theirs
    assert [as_tuple(e) for e in iter_sse(cut(body, range(0, len(body), 3)))] == ours


# --- NDJSON --------------------------------------------------------------------------------------------


def test_ndjson_lines() -> None:
    body = b'\xef\xbb\xbf{"a":1}\r\n\n  \n{"b":"\xe2\x82\xac"}\n{"done":true}'
    expected = ['{"a":1}', '{"b":"€"}', '{"done":true}']
    for chunks in splittings(body):
        assert list(iter_ndjson(chunks)) == expected
    parser = NDJSONParser()
    assert parser.feed(body) == expected[:2]
    assert parser.offset == len(body)
    assert parser.finish() == ['{"done":true}']
    assert parser.offset == 0
    assert parser.finish() == []
    assert NDJSONParser().feed(b"a\rb\n") == ["a\rb"], "a lone CR does not end an NDJSON line"
    assert NDJSONParser().feed(bytearray(b"{}\n")) == ["{}"]


def test_ndjson_limit() -> None:
    body = b"{}\r\n12345\r\n1234567\n"
    for size in range(1, len(body) + 1):
        seen: list[str] = []
        with pytest.raises(LimitExceededError) as info:
            seen.extend(iter_ndjson(cut(body, range(size, len(body), size)), max_line_size=5))
        assert (info.value.limit_name, info.value.offset, info.value.dialect) == ("max_line_size", 11 + 5, "ndjson")
        assert seen == ["{}", "12345"]
    parser = NDJSONParser(max_line_size=2)
    with pytest.raises(LimitExceededError):
        parser.feed(b"{}\n[1,2]")
    with pytest.raises(LimitExceededError):
        parser.feed(b"\n")
    assert parser.finish() == [], "what followed the error is dropped"
    assert parser.feed(b"{}\n") == ["{}"]


@pytest.mark.parametrize("path", recorded(".ndjson"), ids=lambda p: p.name)
def test_recorded_ndjson(path: Path) -> None:
    body = path.read_bytes()
    expected = [line for line in body.decode().split("\n") if line.strip()]
    assert list(iter_ndjson(cut(body, range(0, len(body), 7)))) == expected
    assert all(isinstance(json.loads(line), dict) for line in expected)

    async def collect() -> list[str]:
        return [line async for line in aiter_ndjson(achunks(cut(body, range(0, len(body), 100))))]

    assert asyncio.run(collect()) == expected
