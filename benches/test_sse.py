"""SSE framing beside httpx-sse, on the same bytes in the same run (benches/README.md).

Groups (the entry named ``msgwire`` is each group's reference in the summary):
- ``sse-framing``: ``msgwire.bench.workloads.sse_events()`` (20,000 ``data:`` events of 100-300 bytes,
  ~4 MB) in 16 KiB chunks, every event a Python object that is used (its data's length added
  up) and dropped, as a stream consumer does: ``msgwire.sse.SSEParser.feed`` beside httpx-sse's
  own decoding as its ``EventSource.iter_sse`` runs it (an incremental UTF-8 decoder as
  ``iter_text``, its ``SSELineDecoder``, its ``SSEDecoder``). ``MB/s`` is in ``extra_info``.
- ``sse-framing-kept``: the same, every event kept in one list (``list(iter_sse(...))``): the
  20,000 objects and their 4 MB of strings are new memory each round, so this adds the cost of
  fresh pages (minor faults) to both sides.
- ``sse-event-source``: the body through ``EventSource(response).iter_sse()``, msgwire's and
  httpx-sse's, over an httpx ``MockTransport`` response streaming the 16 KiB chunks.
- ``sse-big-event``: one 8 MiB event fed in 1 KiB pieces (named apart from test_stream.py's
  ``big-event``, which assembles an OpenAI message).

Each benchmark checks its result after timing it (the consuming ones return the event count,
the total data length and the first and last events); under ``--benchmark-disable`` it runs
once.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import httpx_sse
import pytest
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

import msgwire.sse
from msgwire.bench.peers import mock_transport, pieces
from msgwire.bench.workloads import sse_events


def _throughput(benchmark: Any, size: int) -> None:
    """Record MB/s of the median in the benchmark's extra_info (nothing when disabled)."""
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        benchmark.extra_info["MB/s"] = round(size / stats.stats.median / 1e6, 1)


def _httpx_sse_events(chunks: list[bytes]) -> Iterator[httpx_sse.ServerSentEvent]:
    """httpx-sse's framing, as ``EventSource.iter_sse`` runs it over ``response.iter_text()``."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = SSELineDecoder()
    decoder = SSEDecoder()
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            sse = decoder.decode(line.rstrip("\n"))
            if sse is not None:
                yield sse
    for line in lines.flush():
        sse = decoder.decode(line.rstrip("\n"))
        if sse is not None:  # pragma: no cover - the body ends with a blank line
            yield sse


# --- sse-framing ------------------------------------------------------------------------------

Summary = tuple[int, int, Any, Any]


@pytest.fixture(scope="module")
def body() -> bytes:
    return sse_events()


@pytest.fixture(scope="module")
def expected(body: bytes) -> list[str]:
    return [block.removeprefix(b"data: ").decode() for block in body.split(b"\n\n")[:-1]]


def _check(events: list[Any], expected: list[str]) -> None:
    assert len(events) == len(expected) == 20_000
    assert [e.data for e in events] == expected
    assert all(e.event == "message" and e.id == "" and e.retry is None for e in events)


def _check_summary(summary: Summary, expected: list[str]) -> None:
    count, size, first, last = summary
    assert (count, size) == (len(expected), sum(map(len, expected)))
    assert (first.event, first.data, first.id, first.retry) == ("message", expected[0], "", None)
    assert (last.event, last.data, last.id, last.retry) == ("message", expected[-1], "", None)


def _consume(events: Iterable[Any]) -> Summary:
    count = size = 0
    first = event = None
    for event in events:
        count += 1
        size += len(event.data)
        if first is None:
            first = event
    return count, size, first, event


def _msgwire_frame(chunks: list[bytes]) -> list[msgwire.sse.ServerSentEvent]:
    parser = msgwire.sse.SSEParser()
    out: list[msgwire.sse.ServerSentEvent] = []
    for chunk in chunks:
        out += parser.feed(chunk)
    assert parser.finish().clean
    return out


def _msgwire_consume(chunks: list[bytes]) -> Summary:
    """``_consume`` with the parser's loop written out, as a ``feed`` caller writes it."""
    parser = msgwire.sse.SSEParser()
    count = size = 0
    first = event = None
    for chunk in chunks:
        for event in parser.feed(chunk):
            count += 1
            size += len(event.data)
            if first is None:
                first = event
    return count, size, first, event


@pytest.mark.benchmark(group="sse-framing")
def test_sse_framing_msgwire(benchmark: Any, body: bytes, expected: list[str]) -> None:
    summary = benchmark(_msgwire_consume, pieces(body))
    _throughput(benchmark, len(body))
    _check_summary(summary, expected)


@pytest.mark.benchmark(group="sse-framing")
def test_sse_framing_httpx_sse(benchmark: Any, body: bytes, expected: list[str]) -> None:
    summary = benchmark(lambda chunks: _consume(_httpx_sse_events(chunks)), pieces(body))
    _throughput(benchmark, len(body))
    _check_summary(summary, expected)


@pytest.mark.benchmark(group="sse-framing-kept")
def test_sse_framing_kept_msgwire(benchmark: Any, body: bytes, expected: list[str]) -> None:
    events = benchmark(_msgwire_frame, pieces(body))
    _throughput(benchmark, len(body))
    _check(events, expected)


@pytest.mark.benchmark(group="sse-framing-kept")
def test_sse_framing_kept_httpx_sse(benchmark: Any, body: bytes, expected: list[str]) -> None:
    events = benchmark(lambda chunks: list(_httpx_sse_events(chunks)), pieces(body))
    _throughput(benchmark, len(body))
    _check(events, expected)


# --- sse-event-source -------------------------------------------------------------------------


def _response(transport: httpx.MockTransport) -> httpx.Response:
    with httpx.Client(transport=transport) as client:
        request = client.build_request("GET", "http://testserver/sse")
        return client.send(request, stream=True)


@pytest.mark.benchmark(group="sse-event-source")
def test_sse_event_source_msgwire(benchmark: Any, body: bytes, expected: list[str]) -> None:
    transport = mock_transport(body, httpx)  # the body in 16 KiB chunks
    summary = benchmark(lambda: _consume(msgwire.sse.EventSource(_response(transport)).iter_sse()))
    _throughput(benchmark, len(body))
    _check_summary(summary, expected)


@pytest.mark.benchmark(group="sse-event-source")
def test_sse_event_source_httpx_sse(benchmark: Any, body: bytes, expected: list[str]) -> None:
    transport = mock_transport(body, httpx)
    summary = benchmark(lambda: _consume(httpx_sse.EventSource(_response(transport)).iter_sse()))
    _throughput(benchmark, len(body))
    _check_summary(summary, expected)


# --- sse-big-event ----------------------------------------------------------------------------

BIG = 8 * 1024 * 1024


@pytest.fixture(scope="module")
def big_event() -> tuple[list[bytes], str]:
    text = '{"text":"' + "x" * (BIG - 11) + '"}'
    return pieces(b"data: " + text.encode() + b"\n\n", 1024), text


@pytest.mark.benchmark(group="sse-big-event")
def test_sse_big_event_msgwire(benchmark: Any, big_event: tuple[list[bytes], str]) -> None:
    chunks, text = big_event
    (event,) = benchmark(_msgwire_frame, chunks)
    assert len(text) == BIG
    assert event.data == text


@pytest.mark.benchmark(group="sse-big-event")
def test_sse_big_event_httpx_sse(benchmark: Any, big_event: tuple[list[bytes], str]) -> None:
    chunks, text = big_event
    (event,) = benchmark(lambda chunks: list(_httpx_sse_events(chunks)), chunks)
    assert event.data == text
