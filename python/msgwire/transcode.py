"""Stream transcoding for gateways: one provider's stream in, another provider's stream out.

``transcode(source, "anthropic", "openai")`` yields OpenAI Chat Completions chunks
(``data: {...}`` ... ``data: [DONE]``) as the Anthropic stream arrives, and every other pair
of the five dialects the same way. The rewriting runs in the Rust core
(``rust/core/src/transcode/``); see its module documentation for what each target carries.

When the source fails (the provider reports an error, the stream is cut, the data is
malformed, a limit is exceeded), the output ends with the target dialect's error frame
(``data: {"error": ...}``, ``event: error``, ``response.failed``, ...) and then the
``StreamError`` is raised, carrying the partial message; its ``output`` holds the bytes the
failing chunk produced, already yielded by ``transcode``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any, TypedDict, Unpack

from ._corestream import CoreStream, apull, new_core, pull
from ._source import achunks, chunks
from .errors import StreamError
from .types import Dialect

__all__ = ["TranscodeOptions", "Transcoder", "atranscode", "transcode"]


class TranscodeOptions(TypedDict, total=False):
    """The keyword options of ``transcode``, ``atranscode`` and ``Transcoder``."""

    provider: str | None
    max_event_size: int | None
    max_line_size: int | None
    max_tool_args_size: int | None
    max_depth: int | None


class Transcoder(CoreStream):
    """Push-style transcoding: ``feed(bytes) -> bytes`` of the target stream, then ``finish()``.

    ``message()`` and ``diagnostics`` describe the source stream as ``Decoder`` does. Options
    (keyword-only): ``provider`` and the limits of ``Decoder``.
    """

    __slots__ = ("target",)

    def __init__(
        self,
        source_dialect: Dialect,
        target_dialect: Dialect,
        *,
        provider: str | None = None,
        max_event_size: int | None = None,
        max_line_size: int | None = None,
        max_tool_args_size: int | None = None,
        max_depth: int | None = None,
    ) -> None:
        self._core = new_core(
            source_dialect,
            target=target_dialect,
            provider=provider,
            max_event_size=max_event_size,
            max_line_size=max_line_size,
            max_tool_args_size=max_tool_args_size,
            max_depth=max_depth,
        )
        self.target = target_dialect

    def feed(self, data: bytes | bytearray | memoryview) -> bytes:
        """Read the next source bytes (split anywhere); returns the target bytes they completed.

        Raises a ``StreamError`` when the source fails; its ``output`` holds this chunk's target
        bytes, the target's error frame last.
        """
        output = self._core.feed(data)
        if self._core.ended:
            self._raise_failure(output)
        return output

    def finish(self) -> bytes:
        """The source ended: the last target bytes, its terminal marker included; or raises
        (a truncated source, say), with the target's error frame in ``output``."""
        output = self._core.finish()
        self._raise_failure(output)
        return output

    def fail(self, reason: str) -> bytes:
        """The source failed outside the stream (a network error): the target's error frame."""
        self._core.abort(reason)
        return self._core.finish()

    def _raise_failure(self, output: bytes) -> None:
        error = self._core.error()
        if error is not None:
            assert isinstance(error, StreamError)  # _core only reports StreamError subclasses
            self.annotate(error, [])
            error.output = output
            raise error


def _fed(step: Callable[[], bytes]) -> tuple[bytes, StreamError | None]:
    """``step()`` (a feed or the finish), and on a ``StreamError`` the output it had: the
    target's error frame, yielded before the error is raised."""
    try:
        return step(), None
    except StreamError as failure:
        return failure.output, failure


def _next(source: Iterator[bytes], transcoder: Transcoder) -> tuple[bytes | None, StreamError | None]:
    """The next source chunk, or the failure of the source with the target's error frame."""
    try:
        return pull(source, transcoder), None
    except StreamError as failure:
        failure.output = transcoder._core.finish()
        return None, failure


async def _anext(source: AsyncIterator[bytes], transcoder: Transcoder) -> tuple[bytes | None, StreamError | None]:
    try:
        return await apull(source, transcoder), None
    except StreamError as failure:
        failure.output = transcoder._core.finish()
        return None, failure


def transcode(
    source: Any, from_dialect: Dialect, to_dialect: Dialect, **options: Unpack[TranscodeOptions]
) -> Iterator[bytes]:
    """The stream of ``source`` (bytes, an iterable of bytes, a file, an httpx / requests
    response) rewritten from ``from_dialect`` to ``to_dialect``, chunk by chunk as it arrives.

    On a failure the target's error frame is yielded, then the ``StreamError`` raised. The
    dialects and the source are checked at the call (``ValueError``, ``TypeError``).
    """
    transcoder = Transcoder(from_dialect, to_dialect, **options)
    return _transcoded(transcoder, chunks(source, transcoder.dialect, purpose="msgwire.transcode"))


def _transcoded(transcoder: Transcoder, source: Iterator[bytes]) -> Iterator[bytes]:
    while True:
        chunk, failure = _next(source, transcoder)
        if failure is not None:
            yield failure.output
            raise failure from failure.__cause__
        if chunk is None:
            break
        output, failure = _fed(partial(transcoder.feed, chunk))
        if output:
            yield output
        if failure is not None:
            raise failure
    output, failure = _fed(transcoder.finish)
    yield output
    if failure is not None:
        raise failure


def atranscode(
    source: Any, from_dialect: Dialect, to_dialect: Dialect, **options: Unpack[TranscodeOptions]
) -> AsyncIterator[bytes]:
    """``transcode`` for ``async for``: the source is an async iterable of bytes or an httpx /
    aiohttp response."""
    transcoder = Transcoder(from_dialect, to_dialect, **options)
    return _atranscoded(transcoder, achunks(source, transcoder.dialect, purpose="msgwire.atranscode"))


async def _atranscoded(transcoder: Transcoder, source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    while True:
        chunk, failure = await _anext(source, transcoder)
        if failure is not None:
            yield failure.output
            raise failure from failure.__cause__
        if chunk is None:
            break
        output, failure = _fed(partial(transcoder.feed, chunk))
        if output:
            yield output
        if failure is not None:
            raise failure
    output, failure = _fed(transcoder.finish)
    yield output
    if failure is not None:
        raise failure
