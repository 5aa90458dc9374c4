"""HTTP for the providers, the one module that imports httpx: the clients, retries, and HTTP
error responses as ``msgwire.ProviderError``. Sync calls go through an ``httpx.Client``; async
calls through aiohttp (``_aiohttp.py``, loaded on the first async call) unless the provider was
given an ``httpx.AsyncClient``, which is then used as it is.

Retries happen only before the first byte of a reply's body, so a request is never sent twice
once the model has started answering: a network failure before any response (the connection
refused, reset or timed out; a kept-alive connection the server had closed) and an error
status that may pass (408, 409, 429, 5xx, Anthropic's ``overloaded_error``: the retry rule of
``ProviderError.retryable``), unless the server says otherwise: ``x-should-retry: true`` or
``false`` (OpenAI's and Anthropic's APIs send it; their SDKs obey it) wins over the status.
Waits grow exponentially with jitter; a ``Retry-After`` (or ``retry-after-ms``) header is
honoured exactly, and one longer than ``Retry.max_wait`` is not
waited for: the error is raised, ``retryable`` still true, for the caller to decide, and its
message says so ("not retried: the server asked to wait 120 s, over max_wait=60").

A call's ``deadline`` (``_deadline.py``) bounds all of it: each attempt's timeouts are cut to
the time left, no wait runs past it, and the body's reads end at it.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol, TypeAlias

import msgspec

from msgwire.errors import MissingExtraError, ProviderError, TransportError
from msgwire.formats import http_error, request_id
from msgwire.types import Dialect

from ._deadline import Deadline, DeadlineExceeded
from ._failures import NetworkFailure, RequestFailure

try:
    import httpx
except ImportError as exc:
    raise MissingExtraError("msgwire.harness.providers", "harness", exc) from None

if TYPE_CHECKING:
    from ._aiohttp import AioClient

__all__ = [
    "AsyncBody",
    "AsyncClient",
    "AsyncResponse",
    "Body",
    "Client",
    "Deadline",
    "DeadlineExceeded",
    "Interrupted",
    "Retry",
    "Timeout",
    "Transport",
    "request_id",
]

Client: TypeAlias = httpx.Client
AsyncClient: TypeAlias = httpx.AsyncClient
Timeout: TypeAlias = httpx.Timeout

log = logging.getLogger("msgwire.harness.providers")

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""A reply may take minutes between two bytes (a long thought); a connection should not."""
MAX_ERROR_BODY = 64 * 1024
"""Bytes of an error response read for its message (an HTML error page can be large)."""

# Failures of a request before any response arrived: sending it again is safe. (An invalid URL
# or a local protocol error would fail the same way again.)
_NETWORK_RETRYABLE = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError, NetworkFailure)
_NOT_SENT = (httpx.HTTPError, RequestFailure)


class AsyncResponse(Protocol):
    """What the transport reads of an async response (an httpx one, or ``_aiohttp.AioResponse``)."""

    @property
    def status_code(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def reason_phrase(self) -> str: ...
    @property
    def is_success(self) -> bool: ...
    def aiter_bytes(self) -> AsyncIterator[bytes]: ...
    async def aread(self) -> bytes: ...
    async def aclose(self) -> None: ...


class Retry(msgspec.Struct, frozen=True, kw_only=True):
    """When to send a request again: up to ``max_retries`` more times, waiting
    ``initial_delay * 2**n`` seconds (at most ``max_delay``, less up to a quarter at random),
    or what ``Retry-After`` asks when that is at most ``max_wait`` seconds."""

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_wait: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before sending again after failed attempt ``attempt`` (0 for the
        first), or ``None`` to stop trying."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if 0 <= retry_after <= self.max_wait else None
        return self.backoff(attempt)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (0 for the first) when nothing else is
        asked: ``initial_delay * 2**attempt``, at most ``max_delay``, less up to a quarter at
        random (so that many clients failing together do not come back together)."""
        return min(self.max_delay, self.initial_delay * 2.0**attempt) * (1 - 0.25 * random.random())


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, else ``Retry-After`` in seconds or as
    an HTTP date; ``None`` when it asks none (or says it unreadably)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error(response: httpx.Response | AsyncResponse, body: bytes, dialect: Dialect, url: str) -> ProviderError:
    """The ``ProviderError`` of an HTTP error response (``msgwire.formats.http_error``: the
    provider's own words from its error body, else the body's start; the URL posted to)."""
    return http_error(response.status_code, response.headers, body, dialect, reason=response.reason_phrase, url=url)


def _read_error_body(response: httpx.Response) -> bytes:
    data = bytearray()
    try:
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) >= MAX_ERROR_BODY:
                break
    except httpx.HTTPError:
        pass  # what arrived is the message
    finally:
        response.close()
    return bytes(data[:MAX_ERROR_BODY])


async def _aread_error_body(response: AsyncResponse) -> bytes:
    data = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= MAX_ERROR_BODY:
                break
    except Exception:
        pass
    finally:
        await response.aclose()
    return bytes(data[:MAX_ERROR_BODY])


def _gave_up(dialect: str, cause: BaseException, attempts: int) -> TransportError:
    """No response came: the network's error (its ``__cause__``), after ``attempts`` tries."""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return TransportError(f"{dialect}: the request failed{tries}: {type(cause).__name__}: {cause}", dialect=dialect)


def _out_of_time(deadline: Deadline, cause: BaseException | None = None) -> DeadlineExceeded:
    """The deadline's error, the network's (a timeout it shortened) as its cause."""
    exceeded = deadline.exceeded()
    exceeded.__cause__ = cause
    return exceeded


def _not_retried(error: ProviderError, why: str) -> ProviderError:
    """``error``, its message saying why it was not retried although ``retryable``."""
    error.args = (f"{error.args[0]} (not retried: {why})", *error.args[1:])
    return error


class Transport:
    """One provider's HTTP: its clients (its own, created when first needed, or the user's,
    never closed here), default headers, timeout and retries."""

    def __init__(
        self,
        *,
        dialect: Dialect,
        headers: Mapping[str, str],
        timeout: float | httpx.Timeout | None,
        retry: Retry,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        hint: Callable[[ProviderError], str | None] | None = None,
        tls: bool = True,
    ) -> None:
        self.dialect = dialect
        self._tls = tls  # the provider's URL is https://: its own client needs trusted certificates
        self.headers = dict(headers)
        self.retry = retry
        self._hint = hint  # the provider's advice on an error status (a 404: its base_url)
        self._timeout = timeout
        self._client = client
        self._async_client = async_client
        self._own_client = client is None
        self._aio: AioClient | None = None  # made on the first async call without a client given
        self._lock = threading.Lock()  # threads sharing a provider share one client

    # --- clients -----------------------------------------------------------------------------

    def _timeout_or_default(self) -> httpx.Timeout:
        if self._timeout is None:
            return DEFAULT_TIMEOUT
        return self._timeout if isinstance(self._timeout, httpx.Timeout) else httpx.Timeout(self._timeout)

    @property
    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout_or_default(), verify=_tls_context(self._tls))
            return self._client

    @property
    def async_client(self) -> httpx.AsyncClient | None:
        """The ``httpx.AsyncClient`` given (``None``: async calls go through aiohttp)."""
        return self._async_client

    def _aiohttp(self) -> AioClient:
        with self._lock:
            if self._aio is None:
                from ._aiohttp import AioClient  # aiohttp, loaded by the first async call

                self._aio = AioClient()
            return self._aio

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        if self._aio is not None:
            await self._aio.aclose()

    def _build(
        self,
        client: httpx.Client | httpx.AsyncClient,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        deadline: Deadline | None,
    ) -> httpx.Request:
        # A user's client keeps its own timeout unless one was given here.
        timeout = self._timeout_or_default() if self._timeout is not None or self._own_client else client.timeout
        if deadline is not None:
            timeout = _within(timeout, deadline.left())
        return client.build_request("POST", url, content=body, headers={**self.headers, **headers}, timeout=timeout)

    # --- sending -------------------------------------------------------------------------------

    def send(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        deadline: Deadline | None = None,
        *,
        retry: Retry | None = None,
    ) -> httpx.Response:
        """POST ``body`` and return the response as soon as its headers arrived (its body not
        read: the caller streams it and must close it), retrying as ``retry`` (this call's) or
        the transport's ``Retry`` says, within ``deadline``. Raises ``ProviderError`` for an
        HTTP error status, ``TransportError`` when no response came (``DeadlineExceeded`` its
        cause when the deadline passed)."""
        client = self.client
        retry = retry or self.retry
        for attempt in range(retry.max_retries + 1):
            self._in_time(deadline, attempt)
            try:
                response = client.send(self._build(client, url, body, headers, deadline), stream=True)
            except _NETWORK_RETRYABLE as cause:
                wait = self._wait_after_failure(cause, attempt, deadline, retry)
                reason = f"{type(cause).__name__}: {cause}"
            except httpx.HTTPError as cause:
                raise _gave_up(self.dialect, cause, attempt + 1) from cause
            else:
                if response.is_success:
                    return response
                error = self._explained(_error(response, _read_error_body(response), self.dialect, url))
                wait, reason = self._wait_after_status(error, attempt, response.headers, deadline, retry), str(error)
            self._log(attempt, wait, reason, retry)
            time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def asend(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        deadline: Deadline | None = None,
        *,
        retry: Retry | None = None,
    ) -> AsyncResponse:
        """``send`` for asyncio (an attempt is cancelled at the deadline)."""
        retry = retry or self.retry
        for attempt in range(retry.max_retries + 1):
            self._in_time(deadline, attempt)
            try:
                if deadline is None:
                    response = await self._attempt(url, body, headers, deadline)
                else:
                    async with asyncio.timeout(deadline.left()):
                        response = await self._attempt(url, body, headers, deadline)
            except (*_NETWORK_RETRYABLE, TimeoutError) as cause:
                wait = self._wait_after_failure(cause, attempt, deadline, retry)
                reason = f"{type(cause).__name__}: {cause}"
            except _NOT_SENT as cause:
                raise _gave_up(self.dialect, cause, attempt + 1) from cause
            else:
                if response.is_success:
                    return response
                error = self._explained(_error(response, await _aread_error_body(response), self.dialect, url))
                wait, reason = self._wait_after_status(error, attempt, response.headers, deadline, retry), str(error)
            self._log(attempt, wait, reason, retry)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _attempt(
        self, url: str, body: bytes, headers: Mapping[str, str], deadline: Deadline | None
    ) -> AsyncResponse:
        """One async request: through the ``httpx.AsyncClient`` given, else aiohttp."""
        client = self._async_client
        if client is not None:
            return await client.send(self._build(client, url, body, headers, deadline), stream=True)
        timeout = self._timeout_or_default()
        if deadline is not None:
            timeout = _within(timeout, deadline.left())
        return await self._aiohttp().send(
            url, body, {**self.headers, **headers}, connect=timeout.connect, read=timeout.read
        )

    def _explained(self, error: ProviderError) -> ProviderError:
        """``error`` with the provider's hint, when it has one, at the end of its message."""
        hint = self._hint(error) if self._hint is not None else None
        if hint:
            error.args = (f"{error.args[0]}; {hint}", *error.args[1:])
        return error

    def _in_time(self, deadline: Deadline | None, attempt: int) -> None:
        if deadline is not None and deadline.passed():
            exceeded = deadline.exceeded()
            raise _gave_up(self.dialect, exceeded, attempt) from exceeded

    def _wait_after_failure(self, cause: BaseException, attempt: int, deadline: Deadline | None, retry: Retry) -> float:
        """Seconds to wait before sending again after no response came; raises the
        ``TransportError`` when there is no retry (the deadline's when it passed)."""
        if deadline is not None and deadline.passed():
            exceeded = _out_of_time(deadline, cause)
            raise _gave_up(self.dialect, exceeded, attempt + 1) from exceeded
        wait = retry.delay(attempt)
        if wait is None:
            raise _gave_up(self.dialect, cause, attempt + 1) from cause
        if deadline is not None and wait >= deadline.left():
            exceeded = _out_of_time(deadline, cause)
            raise _gave_up(self.dialect, exceeded, attempt + 1) from exceeded
        return wait

    def _wait_after_status(
        self, error: ProviderError, attempt: int, headers: Mapping[str, str], deadline: Deadline | None, retry: Retry
    ) -> float:
        """Seconds to wait before sending again after an error status; raises ``error`` when
        there is no retry, saying why when its wait is the reason (``Retry-After`` over
        ``max_wait``, or past the deadline)."""
        told = headers.get("x-should-retry")  # the server's own word wins over the status rule
        if attempt >= retry.max_retries or (not error.retryable and told != "true"):
            raise error
        if told == "false":
            raise _not_retried(error, "the server said x-should-retry: false")
        asked = retry_after(headers)
        wait = retry.delay(attempt, asked)
        if wait is None:  # the attempts are not spent: the server's wait is too long
            raise _not_retried(error, f"the server asked to wait {asked:g} s, over max_wait={retry.max_wait:g}")
        if deadline is not None and wait >= deadline.left():
            left = max(0.0, deadline.left())
            raise _not_retried(
                error, f"waiting {wait:.3g} s would pass deadline={deadline.seconds:g} ({left:.3g} s left)"
            )
        return wait

    def _log(self, attempt: int, wait: float, reason: str, retry: Retry) -> None:
        log.info(
            "%s: retry %d of %d in %.3f s: %s",
            self.dialect,
            attempt + 1,
            retry.max_retries,
            wait,
            reason,
            extra={"msgwire_retry": attempt + 1, "msgwire_wait": wait},
        )


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    """httpx's own (its CA bundle: certifi's, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), made once
    per process and shared by every client made here: loading the bundle takes 100+ ms (137 ms
    of a first run's 220 ms in the review), which httpx pays again for each client. Never
    changed once made (httpcore sets the same ALPN protocols on it for each connection)."""
    return httpx.create_ssl_context()


def _tls_context(tls: bool) -> ssl.SSLContext:
    """The TLS context of a provider's own client: the shared verifying one for an ``https://``
    URL; for an ``http://`` one, which never makes a TLS connection to it, a bare context that
    loads nothing and trusts no certificate (a TLS connection made anyway fails verification,
    never goes unverified)."""
    return _verifying_context() if tls else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _within(timeout: httpx.Timeout, left: float) -> httpx.Timeout:
    """``timeout`` with no wait longer than ``left`` seconds (a wait without limit included)."""
    left = max(left, 0.001)  # httpx reads 0 as "no wait at all"; the deadline check comes first

    def cut(seconds: float | None) -> float:
        return left if seconds is None else min(seconds, left)

    return httpx.Timeout(
        connect=cut(timeout.connect), read=cut(timeout.read), write=cut(timeout.write), pool=cut(timeout.pool)
    )


def _shut_down(response: httpx.Response) -> None:
    """Shut the socket of ``response`` down, which ends a read blocked on it in another thread
    (an HTTP/2 connection is shared with other requests: it is left alone, and the read ends at
    its timeout, which the deadline shortened)."""
    if not response.http_version.startswith("HTTP/1"):
        return
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):  # already closed
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's, under any TLS


Tap = Callable[[Mapping[str, str], bytes], None]
"""A call's ``tap=``: called with the reply's headers and each piece of its body as it is read,
before msgwire decodes it (the whole body, once, for a reply not streamed): to record what the
provider sent, or to read what msgwire's events do not carry. What it raises ends the read."""


def _tapped(pieces: Iterator[bytes], tap: Tap, headers: Mapping[str, str]) -> Iterator[bytes]:
    for piece in pieces:
        tap(headers, piece)
        yield piece


class Interrupted(ConnectionAbortedError):
    """The stream was interrupted from another thread (``ProviderStream.interrupt``): the
    ``__cause__`` of the ``msgwire.TransportError`` its reader gets."""


class Body:
    """The body of a streamed response as byte chunks for ``msgwire.Stream``: the response is
    closed when the chunks end or fail, and by ``close()`` (``Stream.close``) at once, even if
    reading never started. With a ``deadline``, no read runs past it: the error is then
    ``DeadlineExceeded`` (its cause what the read raised). ``interrupt()``, from another thread,
    ends a read in progress: the error is then ``Interrupted``."""

    __slots__ = ("_closed", "_lock", "deadline", "expired", "interrupted", "response", "tap", "watch")

    def __init__(self, response: httpx.Response, deadline: Deadline | None = None, tap: Tap | None = None) -> None:
        self.response = response
        self.deadline = deadline
        self.tap = tap
        self.expired = self.interrupted = self._closed = False
        # close() and a shut-down from another thread take turns: a socket is never shut down
        # after it was closed (its number may be another socket's by then)
        self._lock = threading.Lock()
        self.watch = deadline.watch(self._expire) if deadline is not None else None

    def _expire(self) -> None:
        """The deadline passed (the watch's thread): end the read in progress."""
        self.expired = True
        self._shut_down()

    def interrupt(self) -> None:
        """End the read in progress from another thread (the connection shut down: the server
        sees the client leave); the reader's next read fails with ``Interrupted``."""
        self.interrupted = True
        self._shut_down()

    def _shut_down(self) -> None:
        with self._lock:
            if not self._closed:
                _shut_down(self.response)

    def __iter__(self) -> Iterator[bytes]:
        try:
            pieces = self.response.iter_bytes() if self.deadline is None else self._pieces_in_time(self.deadline)
            yield from pieces if self.tap is None else _tapped(pieces, self.tap, self.response.headers)
        except Exception as failure:
            if self.interrupted:
                raise Interrupted("the stream was interrupted (ProviderStream.interrupt)") from failure
            raise
        finally:
            self.close()

    def _pieces_in_time(self, deadline: Deadline) -> Iterator[bytes]:
        pieces = self.response.iter_bytes()
        while True:
            deadline.check()  # a server sending keep-alives never lets a read time out
            try:
                piece = next(pieces)
            except StopIteration:
                return
            except Exception as failure:
                if self._ended_by_deadline() and not self.interrupted:
                    raise deadline.exceeded() from failure
                raise
            yield piece

    def _ended_by_deadline(self) -> bool:
        return self.deadline is not None and (self.expired or self.deadline.passed())

    def read_all(self) -> bytes:
        """The whole body (a non-streamed reply)."""
        try:
            data = self.response.read()
            if self.tap is not None:
                self.tap(self.response.headers, data)
            return data
        except Exception as failure:
            if self.deadline is not None and self._ended_by_deadline():
                raise self.deadline.exceeded() from failure
            raise
        finally:
            self.close()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.cancel()
        with self._lock:
            self._closed = True
        self.response.close()


class AsyncBody:
    """``Body`` for ``msgwire.AsyncStream`` (a read is cancelled at the deadline). An iterator
    of its own, not a generator: a read of the body is one call here (the per-chunk path of a
    thousand streams in one loop, benches/README.md); the response is closed when the reads end
    or fail, and by ``aclose()``."""

    __slots__ = ("_pieces", "deadline", "response", "tap")

    def __init__(self, response: AsyncResponse, deadline: Deadline | None = None, tap: Tap | None = None) -> None:
        self.response = response
        self.deadline = deadline
        self.tap = tap
        self._pieces: AsyncIterator[bytes] | None = None

    def __aiter__(self) -> AsyncBody:
        return self

    async def __anext__(self) -> bytes:
        pieces = self._pieces
        if pieces is None:
            pieces = self._pieces = self.response.aiter_bytes()
        try:
            piece = await (pieces.__anext__() if self.deadline is None else self._in_time(pieces, self.deadline))
            if self.tap is not None:
                self.tap(self.response.headers, piece)  # what it raises ends the read
        except BaseException:  # the end, a failure, a cancel: the response is closed at once
            await self.response.aclose()
            raise
        return piece

    @staticmethod
    async def _in_time(pieces: AsyncIterator[bytes], deadline: Deadline) -> bytes:
        try:
            async with asyncio.timeout(deadline.left()):
                return await pieces.__anext__()
        except TimeoutError as cancelled:
            raise deadline.exceeded() from cancelled

    async def read_all(self) -> bytes:
        try:
            if self.deadline is None:
                data = await self.response.aread()
            else:
                try:
                    async with asyncio.timeout(self.deadline.left()):
                        data = await self.response.aread()
                except TimeoutError as cancelled:
                    raise self.deadline.exceeded() from cancelled
        finally:
            await self.response.aclose()
        if self.tap is not None:
            self.tap(self.response.headers, data)
        return data

    async def aclose(self) -> None:
        await self.response.aclose()
