"""Provider streams: ``stream`` / ``astream`` (pull-based events), ``assemble`` (the fast path),
and ``Decoder`` (push-style).

All wire rules run in the Rust core (``msgwire._core.Decoder``); each chunk crosses the
boundary once and its events come back as one JSON batch, decoded here by one msgspec call.
When a stream fails, its ``StreamError`` carries the partial message, and ``message()`` still
returns everything that arrived.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Generator, Iterable, Iterator
from typing import Any

import msgspec

from . import _core
from .codec import loads
from .errors import StreamError, TransportError, fed
from .types import AssistantMessage, Diagnostic, Event, new_id, now

__all__ = ["AsyncStream", "Decoder", "Stream", "assemble", "astream", "stream"]

_events = msgspec.json.Decoder(list[Event])
_message = msgspec.json.Decoder(AssistantMessage)
_diagnostics = msgspec.json.Decoder(list[Diagnostic])
_NO_EVENTS = b"[]"
_READ_SIZE = 64 * 1024


def _decode_message(data: bytes) -> AssistantMessage:
    try:
        return _message.decode(data)
    except msgspec.ValidationError:  # a provider block kept raw (server tools): the slow path keeps it
        # The core writes the message without its `type` tag, which the slow path needs to
        # know what it reads.
        if not data.startswith(b'{"type":'):
            data = b'{"type":"assistant",' + data[1:]
        message: AssistantMessage = loads(data, type=AssistantMessage)
        return message


def _new_core(
    dialect: str,
    *,
    target: str | None = None,
    partial_args: bool = False,
    provider: str | None = None,
    events: bool = True,
    max_event_size: int | None = None,
    max_line_size: int | None = None,
    max_tool_args_size: int | None = None,
    max_depth: int | None = None,
) -> _core.Decoder:
    if max_depth is not None and not 0 < max_depth <= 200:
        raise ValueError(f"max_depth must be within 1..200, got {max_depth}")
    sizes = {
        "max_event_size": max_event_size,
        "max_line_size": max_line_size,
        "max_tool_args_size": max_tool_args_size,
    }
    for name, size in sizes.items():
        if size is not None and size < 0:
            raise ValueError(f"{name} must be a number of bytes (0 or more), got {size}")
    return _core.Decoder(
        dialect,
        id=new_id(),
        timestamp=msgspec.json.encode(now())[1:-1].decode(),
        provider=provider,
        events=events,
        partial_args=partial_args,
        target=target,
        max_event_size=max_event_size,
        max_line_size=max_line_size,
        max_tool_args_size=max_tool_args_size,
        max_depth=max_depth,
    )


class _CoreStream:
    """What a ``Decoder`` and a ``Transcoder`` share: the core state of one stream."""

    __slots__ = ("_core",)

    _core: _core.Decoder

    @property
    def dialect(self) -> str:
        return self._core.dialect

    @property
    def offset(self) -> int:
        """Bytes fed so far."""
        return self._core.offset

    def abort(self, reason: str) -> None:
        """End the stream because its source failed; the message stays as it is, failed."""
        self._core.abort(reason)

    def message(self) -> AssistantMessage:
        """The message so far: a snapshot, valid at any time, also after a failure."""
        return _decode_message(self._core.message())

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return _diagnostics.decode(self._core.diagnostics())

    def _annotate(self, error: StreamError, events: list[Event]) -> StreamError:
        error.events = events
        error.partial_message = self.message()
        error.diagnostics = self.diagnostics
        return error


class Decoder(_CoreStream):
    """Push-style decoding of one stream: ``feed(bytes) -> list[Event]``, then ``finish()``.

    Options (keyword-only): ``partial_args`` (each ``ToolCallDelta.parsed`` holds the arguments
    parsed so far), ``provider`` (recorded on the message; defaults to the dialect's), and the
    limits ``max_event_size``, ``max_line_size``, ``max_tool_args_size`` (bytes, 16 MiB each by
    default) and ``max_depth`` (200).
    """

    __slots__ = ()

    def __init__(
        self,
        dialect: str,
        *,
        partial_args: bool = False,
        provider: str | None = None,
        events: bool = True,
        max_event_size: int | None = None,
        max_line_size: int | None = None,
        max_tool_args_size: int | None = None,
        max_depth: int | None = None,
    ) -> None:
        self._core = _new_core(
            dialect,
            provider=provider,
            events=events,
            partial_args=partial_args,
            max_event_size=max_event_size,
            max_line_size=max_line_size,
            max_tool_args_size=max_tool_args_size,
            max_depth=max_depth,
        )

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        """Decode the next bytes (split anywhere); returns the events they completed.

        Raises a ``StreamError`` subclass when the stream fails; its ``events`` holds the events
        this chunk completed before the failure.
        """
        if type(data) is not bytes:
            data = bytes(data)  # the core reads bytes objects (a bytearray or memoryview is copied once)
        batch = self._core.feed(data)
        events = _events.decode(batch) if batch != _NO_EVENTS else []
        if self._core.ended:
            self._raise_failure(events)
        return events

    def end(self) -> list[Event]:
        """The stream is over (EOF): returns the last events (``MessageEnd`` last), or raises a
        ``StreamError`` (a truncated stream, say)."""
        events = _events.decode(self._core.finish())
        self._raise_failure(events)
        return events

    def finish(self) -> AssistantMessage:
        """End the stream and return the assembled message."""
        self.end()
        return self.message()

    def _raise_failure(self, events: list[Event]) -> None:
        error = self._core.error()
        if error is not None:
            assert isinstance(error, StreamError)  # _core only reports StreamError subclasses
            raise self._annotate(error, events)


def _chunks(source: Any) -> Iterable[bytes]:
    """The byte chunks of a source: bytes, an httpx / requests response, a binary file, or any
    iterable of bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return (source if type(source) is bytes else bytes(source),)
    if isinstance(source, str):
        raise TypeError("a stream is bytes, not str: pass data.encode() or the raw response")
    if hasattr(source, "iter_bytes"):  # httpx.Response
        return source.iter_bytes()  # type: ignore[no-any-return]
    if hasattr(source, "iter_content"):  # requests.Response
        return source.iter_content(chunk_size=None)  # type: ignore[no-any-return]
    if hasattr(source, "read"):  # a binary file, urllib3 / http.client responses
        return iter(lambda: source.read(_READ_SIZE), b"")
    return source  # type: ignore[no-any-return]


def _achunks(source: Any) -> AsyncIterator[bytes]:
    if hasattr(source, "aiter_bytes"):  # httpx.Response
        return source.aiter_bytes()  # type: ignore[no-any-return]
    content = getattr(source, "content", None)
    if content is not None and hasattr(content, "iter_any"):  # aiohttp.ClientResponse
        return content.iter_any()  # type: ignore[no-any-return]
    if isinstance(source, AsyncIterable):
        return source.__aiter__()
    return _as_async(_chunks(source))


async def _as_async(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _transport_error(decoder: _CoreStream, cause: BaseException) -> StreamError:
    decoder.abort(f"{type(cause).__name__}: {cause}")
    error = TransportError(
        f"{decoder.dialect} stream: the source failed: {type(cause).__name__}: {cause}",
        dialect=decoder.dialect,
        offset=decoder.offset,
    )
    return decoder._annotate(error, [])


class Stream:
    """The events of one provider stream, pulled as you iterate.

    ``message()`` returns the message so far at any time (also after a failure), and
    ``diagnostics`` what the stream did that was unusual. Use it as a context manager, or
    call ``close()``, to release the source.
    """

    def __init__(self, source: Any, dialect: str, **options: Any) -> None:
        self._source = source
        self._decoder = Decoder(dialect, **options)
        self._events = self._run()

    def _run(self) -> Generator[Event, None, None]:
        decoder = self._decoder
        chunks = iter(_chunks(self._source))
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except Exception as cause:
                raise _transport_error(decoder, cause) from cause
            events, failure = fed(decoder.feed, chunk)
            yield from events
            if failure is not None:
                raise failure
        events, failure = fed(lambda _: decoder.end(), None)
        yield from events
        if failure is not None:
            raise failure

    def __iter__(self) -> Iterator[Event]:
        return self._events

    def __next__(self) -> Event:
        return next(self._events)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading and close the source (an httpx / requests response, a file)."""
        self._events.close()
        close = getattr(self._source, "close", None)
        if callable(close):
            close()

    def message(self) -> AssistantMessage:
        return self._decoder.message()

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._decoder.diagnostics

    def until_done(self) -> AssistantMessage:
        """Read to the end and return the message."""
        for _ in self._events:
            pass
        return self.message()


class AsyncStream:
    """``Stream`` for ``async for``: the source is an async iterable of bytes or an httpx /
    aiohttp response."""

    def __init__(self, source: Any, dialect: str, **options: Any) -> None:
        self._source = source
        self._decoder = Decoder(dialect, **options)
        self._events = self._run()

    async def _run(self) -> AsyncGenerator[Event, None]:
        decoder = self._decoder
        chunks = _achunks(self._source)
        while True:
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                break
            except Exception as cause:
                raise _transport_error(decoder, cause) from cause
            events, failure = fed(decoder.feed, chunk)
            for event in events:
                yield event
            if failure is not None:
                raise failure
        events, failure = fed(lambda _: decoder.end(), None)
        for event in events:
            yield event
        if failure is not None:
            raise failure

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def __aenter__(self) -> AsyncStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._events.aclose()
        for name in ("aclose", "close", "release"):
            close = getattr(self._source, name, None)
            if callable(close):
                result = close()
                if hasattr(result, "__await__"):
                    await result
                break

    def message(self) -> AssistantMessage:
        return self._decoder.message()

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._decoder.diagnostics

    async def until_done(self) -> AssistantMessage:
        async for _ in self._events:
            pass
        return self.message()


def stream(source: Any, dialect: str, **options: Any) -> Stream:
    """Iterate the events of a provider stream. ``source``: bytes, an iterable of bytes, a
    binary file, or an httpx / requests response; ``dialect``: ``"openai"``,
    ``"openai-responses"``, ``"anthropic"``, ``"gemini"`` or ``"ollama"``. Options as for
    ``Decoder``."""
    return Stream(source, dialect, **options)


def astream(source: Any, dialect: str, **options: Any) -> AsyncStream:
    """``stream`` for an async source (an async iterable of bytes, an httpx / aiohttp response)."""
    return AsyncStream(source, dialect, **options)


def assemble(source: Any, dialect: str, **options: Any) -> AssistantMessage:
    """The assembled message of a whole stream, without building any per-event object (the
    fast path). Raises a ``StreamError`` subclass, carrying the partial message, on failure."""
    options["events"] = False
    options.pop("partial_args", None)
    decoder = Decoder(dialect, **options)
    core = decoder._core
    feed = core.feed  # no events come back: skip the wrapper, check for a failure per chunk
    chunks = iter(_chunks(source))
    while not core.ended:
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except Exception as cause:
            raise _transport_error(decoder, cause) from cause
        feed(chunk if type(chunk) is bytes else bytes(chunk))
    return decoder.finish()
