"""What ``Decoder`` and ``Transcoder`` share: one ``_core.Decoder`` (a stream of one dialect,
decoded or rewritten in Rust), its message and diagnostics, and how a failure is reported."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import msgspec

from . import _core
from ._source import SourceError
from .codec import loads
from .errors import ProviderError, StreamError, TransportError
from .types import AssistantMessage, Diagnostic, Dialect, Event, new_id, now

__all__ = ["CoreStream", "apull", "decode_message", "new_core", "pull"]

_message = msgspec.json.Decoder(AssistantMessage)
_force_setattr = msgspec.structs.force_setattr  # the blocks are frozen; they are the decoder's own
_diagnostics = msgspec.json.Decoder(list[Diagnostic])


def decode_message(data: bytes, long: list[tuple[int, str, str]] | None = None) -> AssistantMessage:
    """An assistant message written by the core (by ``msgspec`` directly; a message with a
    provider block kept raw goes through ``loads``, which keeps it as an ``UnknownBlock``).
    ``long``: the strings the core took out of its blocks (``_core.from_response_parts``), each
    put back in its place."""
    try:
        message: AssistantMessage = _message.decode(data)
    except msgspec.ValidationError:
        # The core writes the message without its `type` tag, which the slow path needs to
        # know what it reads.
        if not data.startswith(b'{"type":'):
            data = b'{"type":"assistant",' + data[1:]
        message = loads(data, type=AssistantMessage)
    if long:
        content = message.content
        for index, field, text in long:
            # the core takes strings out of text, thinking and tool call blocks only (Structs)
            _force_setattr(cast(msgspec.Struct, content[index]), field, text)
    return message


def new_core(
    dialect: Dialect,
    *,
    target: Dialect | None = None,
    partial_args: bool = False,
    provider: str | None = None,
    events: bool = True,
    max_event_size: int | None = None,
    max_line_size: int | None = None,
    max_tool_args_size: int | None = None,
    max_depth: int | None = None,
) -> _core.Decoder:
    """A core decoder (a transcoder with ``target``), the options checked first."""
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


class CoreStream:
    """The core state of one stream, as ``Decoder`` and ``Transcoder`` expose it."""

    __slots__ = ("_core",)

    _core: _core.Decoder

    @property
    def dialect(self) -> Dialect:
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
        return decode_message(self._core.message())

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return _diagnostics.decode(self._core.diagnostics())

    def annotate(self, error: StreamError, events: list[Event] | list[Any]) -> StreamError:
        """``error`` with this stream's partial message, diagnostics and ``events``."""
        error.events = events
        error.partial_message = self.message()
        error.diagnostics = self.diagnostics
        return error

    def source_failed(self, cause: BaseException) -> StreamError:
        """The ``TransportError`` of a source that raised: the stream ends, failed."""
        self.abort(f"{type(cause).__name__}: {cause}")
        error = TransportError(
            f"{self.dialect} stream: the source failed: {type(cause).__name__}: {cause}",
            dialect=self.dialect,
            offset=self.offset,
        )
        return self.annotate(error, [])

    def refused(self, error: StreamError) -> StreamError:
        """A ``ProviderError`` of the HTTP response itself (an error status): the stream ends
        before its first byte, failed, with its (empty) partial message."""
        self.abort(f"HTTP {getattr(error, 'status', '')}")
        return self.annotate(error, [])


def pull(chunks: Iterator[bytes], stream: CoreStream) -> bytes | None:
    """The next chunk of a source (``None`` at its end); a source that fails ends ``stream``
    and raises its ``TransportError``, an HTTP error status its ``ProviderError``."""
    try:
        return next(chunks)
    except StopIteration:
        return None
    except SourceError as failed:
        raise stream.source_failed(failed.cause) from failed.cause
    except ProviderError as refused:
        raise stream.refused(refused) from None


async def apull(chunks: AsyncIterator[bytes], stream: CoreStream) -> bytes | None:
    """``pull`` for an async source."""
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return None
    except SourceError as failed:
        raise stream.source_failed(failed.cause) from failed.cause
    except ProviderError as refused:
        raise stream.refused(refused) from None
