"""Server-sent events and NDJSON, framed in Rust: a generic SSE parser and a drop-in for httpx-sse.

SSE follows the WHATWG HTML rules ("Parsing an event stream") exactly; every rule lives in the
Rust core (``msgwire-core``'s ``sse`` module), and each chunk crosses into Rust once, its events
coming back as one list.

- ``SSEParser().feed(data) -> list[ServerSentEvent]`` for bytes split anywhere, ``finish()`` at
  the end of the stream (it reports what was lost: ``SSEPending``), and the stream state:
  ``last_event_id``, ``reconnection_time`` (ms), ``comments_seen``, ``offset``.
- ``iter_sse(chunks)`` / ``aiter_sse(async_chunks)``: the events of a body given as bytes or an
  (async) iterable of byte chunks.
- The httpx-sse API: ``EventSource(response).iter_sse()`` / ``.aiter_sse()``, ``connect_sse``,
  ``aconnect_sse``, ``ServerSentEvent`` (``event``, ``data``, ``id``, ``retry``, ``.json()``) and
  ``SSEError``: replace ``httpx_sse`` by ``msgwire.sse`` in the import.
- NDJSON (one JSON document per line, Ollama's ``/api/chat``): ``NDJSONParser``, ``iter_ndjson``,
  ``aiter_ndjson`` give the lines as ``str``, blank lines skipped.

Limits: a line longer than ``max_line_size`` or event data longer than ``max_event_size`` (16 MiB
each by default) raises ``msgwire.LimitExceededError`` (a ``ValueError``) with the byte ``offset``
in the stream; its ``events`` holds the events the same chunk completed before the error (the
iterators yield them first). A parser that raised keeps raising until ``finish()``.

Where httpx-sse departs from the spec, msgwire follows the spec (WHATWG HTML "Interpreting an event
stream", https://html.spec.whatwg.org/multipage/server-sent-events.html; docs/wire.md section 1):

- A block whose data buffer is empty dispatches nothing: ``retry: 10000\\n\\n`` or ``id: 5\\n\\n``
  alone is no event (httpx-sse yields one with ``data=""``); the retry and id still take effect.
- ``retry`` counts only if its value is ASCII digits: httpx-sse's ``int()`` also takes ``" 10"``,
  ``"+10"`` and ``"1_000"``.
- The body is always UTF-8 (invalid bytes become U+FFFD), whatever charset the Content-Type names,
  and one leading BOM is dropped; httpx-sse decodes with the response's charset.

Also different: ``ServerSentEvent`` is a frozen ``msgspec.Struct`` (equality, hashing, pickling);
its constructor takes the fields as given, where httpx-sse's turns ``event=None`` or ``""`` into
``"message"`` and ``data=None`` into ``""`` (the defaults are the same). ``SSEError`` is a
``msgwire.MsgwireError`` and, as in httpx-sse, an ``httpx.TransportError``; httpx is imported only
when ``SSEError`` is first used, so ``msgwire.sse`` works without httpx (``EventSource`` and
``connect_sse`` need it, of course). ``EventSource`` also takes the limits as keyword arguments and
tells the stream state (``last_event_id``, ``reconnection_time``) for a reconnection.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Generator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import msgspec

from ._core import NDJSONParser, SSEParser, SSEPending
from ._source import fed
from .errors import MsgwireError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_LIMIT",
    "EventSource",
    "NDJSONParser",
    "SSEError",
    "SSEParser",
    "SSEPending",
    "ServerSentEvent",
    "aconnect_sse",
    "aiter_ndjson",
    "aiter_sse",
    "connect_sse",
    "iter_ndjson",
    "iter_sse",
]

DEFAULT_LIMIT = 16 * 1024 * 1024
"""The default ``max_line_size`` and ``max_event_size``: 16 MiB."""

Chunks = bytes | bytearray | memoryview | Iterable[bytes]


# The Rust parser makes one of these per event by calling the class. A msgspec Struct with
# gc=False was the cheapest event to make and to keep, measured on 20,000 events of 100-300
# bytes in 16 KiB chunks (CPU instructions per event under callgrind, events kept in a list /
# dropped as iterated): a str of the data alone 1258 / 1533; this Struct 1825 / 2093; a frozen
# #[pyclass] 2515 / 2034 (every pyclass is tracked by the cyclic GC, whose passes over the kept
# events cost the difference); tuples turned into a __slots__ class or a Struct in Python were
# slower still (wall-clock, 20-60% more than the Struct made in Rust).
class ServerSentEvent(msgspec.Struct, frozen=True, gc=False):
    """One server-sent event, as httpx-sse's ``ServerSentEvent``: the event type, the data
    (``data`` lines joined by LF), the last event id (it carries over from earlier events),
    and the block's ``retry`` in milliseconds, if it had a valid one."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None

    def json(self) -> Any:
        """The data parsed as JSON (``json.loads``: a ``json.JSONDecodeError`` if it is not)."""
        return json.loads(self.data)

    def __repr__(self) -> str:
        pieces = [f"event={self.event!r}"]
        if self.data:
            pieces.append(f"data={self.data!r}")
        if self.id:
            pieces.append(f"id={self.id!r}")
        if self.retry is not None:
            pieces.append(f"retry={self.retry!r}")
        return f"ServerSentEvent({', '.join(pieces)})"


# --- SSEError: an httpx.TransportError, with httpx imported only when the class is needed ------

if TYPE_CHECKING:

    class SSEError(MsgwireError, httpx.TransportError):
        """The response is not an event stream (its Content-Type is not ``text/event-stream``)."""

else:

    def __getattr__(name: str) -> Any:
        if name == "SSEError":
            return _sse_error()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), "SSEError"})


_sse_error_lock = threading.Lock()


def _sse_error() -> type[MsgwireError]:
    """``SSEError``, made on first use: a ``MsgwireError`` and, if httpx is installed, an
    ``httpx.TransportError`` (as httpx-sse's ``SSEError`` is)."""
    with _sse_error_lock:
        made: type[MsgwireError] | None = globals().get("SSEError")
        if made is None:
            try:
                import httpx
            except ImportError:  # pragma: no cover - httpx is installed wherever EventSource is used
                bases: tuple[type, ...] = (MsgwireError,)
            else:
                bases = (MsgwireError, httpx.TransportError)
            doc = "The response is not an event stream (its Content-Type is not ``text/event-stream``)."
            made = type("SSEError", bases, {"__module__": __name__, "__qualname__": "SSEError", "__doc__": doc})
            globals()["SSEError"] = made
        return made


# --- iterating a body ---------------------------------------------------------------------------


def _chunks(source: Chunks) -> Iterable[bytes]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return (source,)  # type: ignore[return-value]  # any buffer is a chunk
    if isinstance(source, str):
        raise TypeError("an event stream is bytes, not str: pass data.encode() or the raw chunks")
    return source


def _sse_events(
    parser: SSEParser, open_chunks: Callable[[], Iterable[bytes]], *, close: bool = False
) -> Generator[ServerSentEvent, None, None]:
    """The events of the chunks ``open_chunks()`` returns (called at the first ``next``);
    ``close``: close the chunk iterator when done (it is ours, not the caller's)."""
    chunks = open_chunks()
    try:
        for chunk in chunks:
            events, failure = fed(parser.feed, chunk)
            yield from events
            if failure is not None:
                raise failure
    finally:
        parser.finish()
        if close:
            getattr(chunks, "close", _nothing)()


def _nothing() -> None:
    pass


async def _asse_events(
    parser: SSEParser, open_chunks: Callable[[], AsyncIterable[bytes]], *, close: bool = False
) -> AsyncGenerator[ServerSentEvent, None]:
    chunks = open_chunks()
    try:
        async for chunk in chunks:
            events, failure = fed(parser.feed, chunk)
            for event in events:
                yield event
            if failure is not None:
                raise failure
    finally:
        parser.finish()
        aclose = getattr(chunks, "aclose", None)
        if close and aclose is not None:
            await aclose()


def iter_sse(
    source: Chunks, *, max_line_size: int = DEFAULT_LIMIT, max_event_size: int = DEFAULT_LIMIT
) -> Iterator[ServerSentEvent]:
    """The events of an SSE body: bytes, or an iterable of byte chunks split anywhere. An
    unfinished block at the end of the body is discarded, as the spec says (use ``SSEParser``
    and ``finish()`` to know whether one was)."""
    parser = SSEParser(max_line_size=max_line_size, max_event_size=max_event_size)
    chunks = _chunks(source)
    return _sse_events(parser, lambda: chunks)


def aiter_sse(
    source: AsyncIterable[bytes], *, max_line_size: int = DEFAULT_LIMIT, max_event_size: int = DEFAULT_LIMIT
) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of an SSE body given as an async iterable of byte chunks."""
    parser = SSEParser(max_line_size=max_line_size, max_event_size=max_event_size)
    return _asse_events(parser, lambda: source)


def iter_ndjson(source: Chunks, *, max_line_size: int = DEFAULT_LIMIT) -> Iterator[str]:
    """The non-blank lines of an NDJSON body (bytes, or an iterable of byte chunks), without
    their LF or CRLF; the last line needs no LF. Parse each with ``json.loads``."""
    parser = NDJSONParser(max_line_size=max_line_size)
    for chunk in _chunks(source):
        lines, failure = fed(parser.feed, chunk)
        yield from lines
        if failure is not None:
            raise failure
    yield from parser.finish()


async def aiter_ndjson(
    source: AsyncIterable[bytes], *, max_line_size: int = DEFAULT_LIMIT
) -> AsyncGenerator[str, None]:
    """The non-blank lines of an NDJSON body given as an async iterable of byte chunks."""
    parser = NDJSONParser(max_line_size=max_line_size)
    async for chunk in source:
        lines, failure = fed(parser.feed, chunk)
        for line in lines:
            yield line
        if failure is not None:
            raise failure
    for line in parser.finish():
        yield line


# --- the httpx-sse API --------------------------------------------------------------------------


class EventSource:
    """The events of an httpx response, as httpx-sse's ``EventSource``: ``iter_sse()`` or
    ``aiter_sse()`` check that the Content-Type is ``text/event-stream`` (raising ``SSEError``
    otherwise) when iteration starts, then frame the raw body bytes in Rust."""

    def __init__(
        self, response: httpx.Response, *, max_line_size: int = DEFAULT_LIMIT, max_event_size: int = DEFAULT_LIMIT
    ) -> None:
        self._response = response
        self._parser = SSEParser(max_line_size=max_line_size, max_event_size=max_event_size)

    def _check_content_type(self) -> None:
        content_type = self._response.headers.get("content-type", "").partition(";")[0]
        if "text/event-stream" not in content_type:
            raise _sse_error()(
                f"Expected response header Content-Type to contain 'text/event-stream', got {content_type!r}"
            )

    @property
    def response(self) -> httpx.Response:
        return self._response

    @property
    def last_event_id(self) -> str:
        """The last event id seen (what a reconnection sends as ``Last-Event-ID``)."""
        return self._parser.last_event_id

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry`` the server sent, in milliseconds."""
        return self._parser.reconnection_time

    def _open(self) -> Iterator[bytes]:
        self._check_content_type()
        return self._response.iter_bytes()

    def _aopen(self) -> AsyncIterator[bytes]:
        self._check_content_type()
        return self._response.aiter_bytes()

    def iter_sse(self) -> Iterator[ServerSentEvent]:
        return _sse_events(self._parser, self._open, close=True)

    def aiter_sse(self) -> AsyncGenerator[ServerSentEvent, None]:
        return _asse_events(self._parser, self._aopen, close=True)


def _sse_headers(headers: Any) -> httpx.Headers:
    import httpx

    merged = httpx.Headers(headers)  # a copy: the caller's headers are left alone
    merged["Accept"] = "text/event-stream"
    merged["Cache-Control"] = "no-store"
    return merged


@contextmanager
def connect_sse(client: httpx.Client, method: str, url: str | httpx.URL, **kwargs: Any) -> Iterator[EventSource]:
    """``client.stream(method, url, ...)`` asking for an event stream (``Accept:
    text/event-stream``, ``Cache-Control: no-store``), as an ``EventSource``."""
    headers = _sse_headers(kwargs.pop("headers", None))
    with client.stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response)


@asynccontextmanager
async def aconnect_sse(
    client: httpx.AsyncClient, method: str, url: str | httpx.URL, **kwargs: Any
) -> AsyncIterator[EventSource]:
    """The async ``connect_sse``."""
    headers = _sse_headers(kwargs.pop("headers", None))
    async with client.stream(method, url, headers=headers, **kwargs) as response:
        yield EventSource(response)
