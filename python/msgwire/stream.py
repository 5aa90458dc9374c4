"""Provider streams: ``stream`` / ``astream`` (pull-based events), ``assemble`` (the fast path),
and ``Decoder`` (push-style).

All wire rules run in the Rust core (``msgwire._core.Decoder``); each chunk crosses the
boundary once and its events come back as one JSON batch, decoded here by one msgspec call.
When a stream fails, its ``StreamError`` carries the partial message, and ``message()`` still
returns everything that arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any, TypedDict, Unpack

import msgspec

from ._corestream import CoreStream, apull, decode_message, new_core, pull
from ._partialargs import marks
from ._source import SourceError, achunks, chunks, fed
from .errors import ProviderError, StreamError
from .types import AssistantMessage, Diagnostic, Dialect, Event

__all__ = ["AsyncStream", "Decoder", "Stream", "StreamOptions", "assemble", "astream", "stream"]


class StreamOptions(TypedDict, total=False):
    """The keyword options of ``stream``, ``astream``, ``assemble`` and ``Decoder``."""

    partial_args: bool
    provider: str | None
    max_event_size: int | None
    max_line_size: int | None
    max_tool_args_size: int | None
    max_depth: int | None


_events = msgspec.json.Decoder(list[Event])
_NO_EVENTS = b"[]"


class Decoder(CoreStream):
    """Push-style decoding of one stream: ``feed(bytes) -> list[Event]``, then ``finish()``.

    Options (keyword-only): ``partial_args`` (each ``ToolCallDelta.parsed`` holds the arguments
    parsed so far), ``provider`` (recorded on the message; defaults to the dialect's), and the
    limits ``max_event_size``, ``max_line_size``, ``max_tool_args_size`` (bytes, 16 MiB each by
    default) and ``max_depth`` (200).
    """

    __slots__ = ("_marks",)

    def __init__(
        self,
        dialect: Dialect,
        *,
        partial_args: bool = False,
        provider: str | None = None,
        events: bool = True,
        max_event_size: int | None = None,
        max_line_size: int | None = None,
        max_tool_args_size: int | None = None,
        max_depth: int | None = None,
    ) -> None:
        self._core = new_core(
            dialect,
            provider=provider,
            events=events,
            partial_args=partial_args,
            max_event_size=max_event_size,
            max_line_size=max_line_size,
            max_tool_args_size=max_tool_args_size,
            max_depth=max_depth,
        )
        # With partial_args, each delta's `parsed` is computed when read (_partialargs.py).
        self._marks = marks() if partial_args and events else None

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        """Decode the next bytes (split anywhere); returns the events they completed.

        Raises a ``StreamError`` subclass when the stream fails; its ``events`` holds the events
        this chunk completed before the failure.
        """
        batch = self._core.feed(data)
        events = _events.decode(batch) if batch != _NO_EVENTS else []
        if self._marks is not None:
            self._marks.attach(events)
        if self._core.ended:
            self._raise_failure(events)
        return events

    def end(self) -> list[Event]:
        """The stream is over (EOF): returns the last events (``MessageEnd`` last), or raises a
        ``StreamError`` (a truncated stream, say)."""
        events = _events.decode(self._core.finish())
        if self._marks is not None:
            self._marks.attach(events)
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
            raise self.annotate(error, events)


class Stream:
    """The events of one provider stream, pulled as you iterate.

    ``message()`` returns the message so far at any time (also after a failure), and
    ``diagnostics`` what the stream did that was unusual. Use it as a context manager, or
    call ``close()``, to release the source.
    """

    def __init__(self, source: Any, dialect: Dialect, **options: Unpack[StreamOptions]) -> None:
        self._source = source
        self._decoder = Decoder(dialect, **options)
        self._chunks = chunks(source, self._decoder.dialect, purpose="msgwire.stream")
        self._events = self._run()

    def _run(self) -> Generator[Event, None, None]:
        decoder = self._decoder
        while (chunk := pull(self._chunks, decoder)) is not None:
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
    aiohttp response. ``next_batch()`` hands out the events of one read of the source at once.

    No generator sits between the source and the caller: each read's events are kept in a
    list and handed out from it, one ``await`` per event (or one per read with
    ``next_batch``), so that a thousand streams in one event loop spend their time decoding,
    not resuming layers (benches/README.md, "Many conversations at once")."""

    def __init__(self, source: Any, dialect: Dialect, **options: Unpack[StreamOptions]) -> None:
        self._source = source
        self._decoder = Decoder(dialect, **options)
        self._chunks = achunks(source, self._decoder.dialect, purpose="msgwire.astream")
        self._ready: list[Event] = []  # the events of the last read not handed out yet
        self._at = 0
        self._failure: StreamError | None = None  # raised once the events before it are out
        self._over = False  # the source is read to its end (or failed, or the stream closed)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        ready, at = self._ready, self._at
        if at < len(ready):
            self._at = at + 1
            return ready[at]
        events = await self.next_batch()
        if not events:
            raise StopAsyncIteration
        self._ready, self._at = events, 1
        return events[0]

    async def next_batch(self) -> list[Event]:
        """The events of the next read of the source (the rest of the last one first), at
        least one; ``[]`` once the stream is over. A failure is raised as iteration raises
        it: after the events before it were handed out."""
        if self._at < len(self._ready):
            events = self._ready[self._at :]
            self._ready, self._at = [], 0
            return events
        while not self._over:
            events, failure = await self._read()
            if failure is not None:
                self._over = True
                if events:
                    self._failure = failure
                    return events
                raise failure
            if events:
                return events
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure
        return []

    async def _read(self) -> tuple[list[Event], StreamError | None]:
        """Decode the next chunk of the source (its end: the decoder's last events)."""
        decoder = self._decoder
        try:
            chunk = await apull(self._chunks, decoder)  # the source's failures as the decoder's
        except BaseException:
            self._over = True  # failed, or cancelled mid-read: the stream cannot go on (as a generator stops)
            raise
        if chunk is None:
            self._over = True
            return fed(lambda _: decoder.end(), None)
        return fed(decoder.feed, chunk)

    async def __aenter__(self) -> AsyncStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._over = True
        self._ready, self._at, self._failure = [], 0, None
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
        while await self.next_batch():
            pass
        return self.message()


def stream(source: Any, dialect: Dialect, **options: Unpack[StreamOptions]) -> Stream:
    """Iterate the events of a provider stream. ``source``: bytes, an iterable of bytes, a
    binary file, or an httpx / requests response; ``dialect``: ``"openai"``,
    ``"openai-responses"``, ``"anthropic"``, ``"gemini"`` or ``"ollama"``. Options as for
    ``Decoder``."""
    return Stream(source, dialect, **options)


def astream(source: Any, dialect: Dialect, **options: Unpack[StreamOptions]) -> AsyncStream:
    """``stream`` for an async source (an async iterable of bytes, an httpx / aiohttp response)."""
    return AsyncStream(source, dialect, **options)


def assemble(source: Any, dialect: Dialect, **options: Unpack[StreamOptions]) -> AssistantMessage:
    """The assembled message of a whole stream, without building any per-event object (the
    fast path). Raises a ``StreamError`` subclass, carrying the partial message, on failure."""
    options.pop("partial_args", None)  # no events, so no partial arguments either
    decoder = Decoder(dialect, events=False, **options)
    core = decoder._core
    feed = core.feed  # no events come back: skip the wrapper, check for a failure per chunk
    source_chunks = chunks(source, decoder.dialect, purpose="msgwire.assemble")
    try:  # `pull`'s handling around the whole loop: `feed` raises neither of these
        for chunk in source_chunks:
            feed(chunk)
            if core.ended:
                break
    except SourceError as failed:
        raise decoder.source_failed(failed.cause) from failed.cause
    except ProviderError as refused:
        raise decoder.refused(refused) from None
    decoder.end()
    # Moved out of the core, which drops its copy once written: a large message is held twice
    # at most at the peak (benches/memory.py).
    return decode_message(core.take_message())
