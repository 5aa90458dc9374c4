"""Byte sources: what ``stream``, ``assemble``, ``transcode`` and the SSE iterators read from.

A source is bytes, an iterable of bytes (sync or async), a binary file, or an HTTP response of
httpx, requests or aiohttp. ``chunks`` / ``achunks`` turn one into its byte chunks and check it
on the way, so that a mistake is named where it is made:

- a wrong argument is a ``TypeError`` that says what it got and what to pass (``str``, a
  text-mode file, a list of ints, a dict, ``None``, an SDK's decoded ``Stream``);
- an async source given to the sync API is a ``UsageError`` (never a ``TransportError``, which
  a gateway would retry);
- an HTTP response with an error status is read whole and raised as ``ProviderError`` with the
  status, the provider's error type and message (from its error body, read by the Rust core as
  ``from_response`` reads one), the request id and ``retryable``;
- an exception of the source itself (a network error) is raised as ``SourceError`` for the
  stream to turn into ``TransportError`` with its partial message.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from . import _core
from .errors import DecodeError, ProviderError, StreamError, UsageError
from .types import Dialect

__all__ = ["SourceError", "achunks", "chunks", "fed", "http_error", "request_id"]

READ_SIZE = 64 * 1024
SOURCES = "bytes, an iterable of bytes, a binary file or an HTTP response"
# Response headers that carry the provider's request id (OpenAI, Anthropic, Gemini, proxies).
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-goog-request-id", "apim-request-id", "cf-ray")
# How much of a body that is no provider error (an HTML page) the error message shows.
SHOWN = 300


class SourceError(Exception):
    """The source raised while being read (a network error, a closed connection): ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def fed(feed: Callable[[Any], list[Any]], chunk: Any) -> tuple[list[Any], StreamError | None]:
    """``feed(chunk)``, and on a ``StreamError`` the items that chunk completed before it with the
    error: iterators hand out those items first, then raise, so nothing received is lost."""
    try:
        return feed(chunk), None
    except StreamError as failure:
        return failure.events, failure


# --- what a source is ------------------------------------------------------------------------


def _what(source: object) -> str:
    kind = type(source)
    return f"{kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins" else kind.__qualname__


def _refuse(source: object, purpose: str) -> None:
    """Raise ``TypeError`` for a source that cannot be a byte stream (checks that cost nothing)."""
    if source is None or isinstance(source, (dict, int, float, bool)):
        raise TypeError(
            f"{purpose} reads bytes, an iterable of bytes, a binary file or an HTTP response, not {_what(source)}"
        )
    if isinstance(source, str):
        raise TypeError(f"{purpose} reads bytes, not str: pass data.encode() or the raw response")
    if isinstance(source, io.TextIOBase):
        raise TypeError(f"{purpose} reads bytes: the file is open in text mode (open it with 'rb')")


def _sdk_stream(source: object) -> Any:
    """The HTTP response inside an openai / anthropic SDK ``Stream`` (events already decoded by
    the SDK): msgwire reads the raw bytes, so it takes the response (``stream.response``)."""
    module = type(source).__module__.split(".")[0]
    if module in ("openai", "anthropic") and hasattr(source, "response"):
        return source.response
    return None


def _is_async_httpx(response: object) -> bool:
    stream = getattr(response, "stream", None)
    return stream is not None and hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__")


def _chunk(chunk: object, purpose: str) -> bytes:
    if type(chunk) is bytes:
        return chunk
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    if isinstance(chunk, int):
        raise TypeError(f"{purpose} reads chunks of bytes, got an int (a list of ints? pass bytes(...))")
    raise TypeError(f"{purpose} reads chunks of bytes, got {_what(chunk)}")


# --- HTTP error responses --------------------------------------------------------------------


def request_id(headers: Any) -> str | None:
    """The provider's id of a request, from its response headers (``x-request-id``,
    ``request-id``, ...): for its support."""
    for name in REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return str(value)
    return None


def http_error(
    status: int,
    headers: Any,
    body: bytes,
    dialect: Dialect,
    *,
    reason: str | None = None,
    url: str | None = None,
    method: str = "POST",
) -> ProviderError:
    """The ``ProviderError`` of an HTTP response with an error status: the provider's error type
    and message from its error body (read by the dialect's response reader; a body framed as
    server-sent events, ``data: {"error": ...}``, is read event by event) when it has one, else
    ``http_<status>`` and the body's start; ``reason`` is the status's reason phrase; ``url``
    (and ``method``), the request's, named in the message (without its query or credentials,
    where keys may be)."""
    rid = request_id(headers)
    error_type, message = _provider_words(body, dialect)
    if message is None:
        text = body.decode("utf-8", "replace").strip()
        error_type, message = f"http_{status}", text[:SHOWN] + ("..." if len(text) > SHOWN else "")
    head = f"{dialect}: HTTP {status} {reason or ''}".rstrip()
    if url is not None:
        head += f" at {method} {_shown_url(url)}"
    where = f" [request id {rid}]" if rid else ""
    return ProviderError(
        f"{head} ({error_type}): {message}{where}",
        dialect=dialect,
        offset=0,
        error_type=error_type,
        provider_message=message,
        status=status,
        request_id=rid,
        url=url,
        body=body,
        kind="provider",
    )


def _shown_url(url: str) -> str:
    """``url`` without what may hold a secret: its query (``?key=``) and user info."""
    from urllib.parse import urlsplit, urlunsplit  # an error's path: not loaded by `import msgwire`

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _provider_words(body: bytes, dialect: Dialect) -> tuple[str | None, str | None]:
    """The provider's error type and message in an error body, or ``(None, None)``."""
    for document in _error_documents(body):
        try:
            _core.from_response_json(document, dialect, id="", timestamp="1970-01-01T00:00:00Z")
        except ProviderError as read:
            return read.error_type, read.provider_message
        except DecodeError:
            continue
    return None, None


def _error_documents(body: bytes) -> Iterator[bytes]:
    """The JSON documents an error body may hold: the body, or the data of each of its events
    when it is framed as server-sent events (LiteLLM's ``/v1/responses`` sends its error as
    ``data: {"error": {...}}``)."""
    yield body
    if b"data:" not in body:
        return
    try:
        events = _core.SSEParser().feed(body + b"\n\n")  # the last event dispatched even unterminated
    except DecodeError:  # a line over the parser's limit: no SSE body
        return
    for event in events:
        yield event.data.encode()


def _reason(response: Any) -> str | None:
    """The reason phrase of an httpx, requests or aiohttp response."""
    reason = getattr(response, "reason_phrase", None) or getattr(response, "reason", None)
    return reason if isinstance(reason, str) else None


def _status(response: object) -> int | None:
    status = getattr(response, "status_code", None)  # httpx, requests
    if status is None:
        status = getattr(response, "status", None)  # aiohttp, urllib3, http.client
    return status if isinstance(status, int) else None


# --- sync ------------------------------------------------------------------------------------


def chunks(source: Any, dialect: Dialect | None = None, *, purpose: str = "msgwire") -> Iterator[bytes]:
    """The byte chunks of ``source``. ``dialect``: the provider behind an HTTP response (its
    error body is then read as that provider's); without one, error statuses are not checked.

    Checks the source now (a ``TypeError`` or ``UsageError`` at the call); reading happens as
    the iterator is consumed, a source failure raising ``SourceError``."""
    _refuse(source, purpose)
    inner = _sdk_stream(source)
    if inner is not None:
        source = inner
    if isinstance(source, (bytes, bytearray, memoryview)):
        return iter((bytes(source),))
    if type(source) is list or type(source) is tuple:  # the common case first: no probing
        if source:
            _chunk(source[0], purpose)  # a list of ints or of str is refused now, not at the first read
        return _read(source.__iter__, purpose)
    if isinstance(source, (list, tuple)) and source:
        _chunk(source[0], purpose)
    if hasattr(source, "iter_bytes"):  # httpx.Response
        if _is_async_httpx(source):
            raise UsageError(f"{purpose}: the httpx response is async (from an AsyncClient): use the async API")
        return _pulled(source, dialect, purpose, lambda: source.iter_bytes())
    if hasattr(source, "iter_content"):  # requests.Response
        return _pulled(source, dialect, purpose, lambda: source.iter_content(chunk_size=None))
    if hasattr(source, "read") and not hasattr(source, "__aiter__"):  # a binary file, urllib3 / http.client
        return _pulled(source, dialect, purpose, lambda: iter(lambda: source.read(READ_SIZE), b""))
    if isinstance(source, Iterable):
        return _pulled(source, None, purpose, lambda: iter(source))
    if isinstance(source, AsyncIterable) or hasattr(source, "content"):
        raise UsageError(f"{purpose}: {_what(source)} is an async source: use the async API (astream, atranscode)")
    raise TypeError(
        f"{purpose} reads bytes, an iterable of bytes, a binary file or an HTTP response, not {_what(source)}"
    )


def _pulled(
    source: Any, dialect: Dialect | None, purpose: str, open_chunks: Callable[[], Iterator[Any]]
) -> Iterator[bytes]:
    status = _status(source) if dialect is not None else None
    if status is not None and status >= 400:
        return _failed_response(source, status, dialect or "openai", purpose)
    return _read(open_chunks, purpose)


def _read(open_chunks: Callable[[], Iterator[Any]], purpose: str) -> Iterator[bytes]:
    try:
        pieces = open_chunks()
    except Exception as cause:
        raise SourceError(cause) from cause
    while True:
        try:
            chunk = next(pieces)
        except StopIteration:
            return
        except Exception as cause:
            raise SourceError(cause) from cause
        yield chunk if type(chunk) is bytes else _chunk(chunk, purpose)


def _failed_response(response: Any, status: int, dialect: Dialect, purpose: str) -> Iterator[bytes]:
    try:
        if hasattr(response, "iter_bytes"):
            body = response.read()
        elif hasattr(response, "iter_content"):
            body = response.content
        else:
            body = response.read()
    except Exception as cause:
        raise SourceError(cause) from cause
    raise http_error(status, response.headers, body or b"", dialect, reason=_reason(response))
    yield b""  # pragma: no cover - makes this a generator: the error comes at the first read


# --- async -----------------------------------------------------------------------------------


def achunks(source: Any, dialect: Dialect | None = None, *, purpose: str = "msgwire") -> AsyncIterator[bytes]:
    """``chunks`` for the async API: an async iterable of bytes, an httpx response of an
    ``AsyncClient``, an aiohttp response; sync sources (bytes, iterables, files) work too."""
    _refuse(source, purpose)
    inner = _sdk_stream(source)
    if inner is not None:
        source = inner
    if hasattr(source, "aiter_bytes"):  # httpx.Response
        return _APulled(source, dialect, purpose, lambda: source.aiter_bytes())
    content = getattr(source, "content", None)
    if content is not None and hasattr(content, "iter_any"):  # aiohttp.ClientResponse
        return _APulled(source, dialect, purpose, lambda: content.iter_any())
    if isinstance(source, AsyncIterable):
        return _APulled(source, None, purpose, lambda: source.__aiter__())
    return _as_async(chunks(source, dialect, purpose=purpose))


async def _as_async(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


class _APulled:
    """The chunks of an async source, checked (an HTTP error status raised at the first read,
    a failure of the source as ``SourceError``, every chunk bytes): an iterator of its own,
    not a generator, so that a chunk costs one call here (a stream's per-chunk path)."""

    __slots__ = ("_dialect", "_open", "_pieces", "_purpose", "_source")

    def __init__(
        self, source: Any, dialect: Dialect | None, purpose: str, open_chunks: Callable[[], AsyncIterator[Any]]
    ) -> None:
        self._source, self._dialect, self._purpose, self._open = source, dialect, purpose, open_chunks
        self._pieces: AsyncIterator[Any] | None = None

    def __aiter__(self) -> _APulled:
        return self

    async def __anext__(self) -> bytes:
        pieces = self._pieces
        if pieces is None:
            pieces = self._pieces = await self._opened()
        try:
            chunk = await pieces.__anext__()
        except StopAsyncIteration:
            raise
        except Exception as cause:
            raise SourceError(cause) from cause
        return chunk if type(chunk) is bytes else _chunk(chunk, self._purpose)

    async def _opened(self) -> AsyncIterator[Any]:
        source, dialect = self._source, self._dialect
        status = _status(source) if dialect is not None else None
        if status is not None and status >= 400:
            try:
                body = await source.aread() if hasattr(source, "aread") else await source.read()
            except Exception as cause:
                raise SourceError(cause) from cause
            raise http_error(status, source.headers, body or b"", dialect or "openai", reason=_reason(source))
        try:
            return self._open()
        except Exception as cause:
            raise SourceError(cause) from cause
