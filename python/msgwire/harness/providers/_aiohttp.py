"""The providers' async HTTP when no client is given: aiohttp, the one module that imports it.

Why not httpx here too: with many conversations at once (a gateway, a swarm), httpx's async pool
walks every open connection on each request and close, and reads a body through several layers
per chunk; ``benches/many.py`` measured, per conversation of two streamed calls at 20 ms between
chunks, 23.5 ms of client CPU with httpx against 3.9 ms with aiohttp at 200 conversations, and
158 ms against 3.8 ms at 1,000 (a raw asyncio floor: 2.6 and 2.8 ms). A user's own
``httpx.AsyncClient`` is still taken as it is.

``AioClient`` keeps one ``aiohttp.ClientSession`` per event loop (a session belongs to the loop
it was made in); ``AioResponse`` gives a response the few members the transport reads
(``status_code``, ``headers``, ``reason_phrase``, ``is_success``, ``aiter_bytes``, ``aread``,
``aclose``), the names httpx uses, so that retries, error bodies and deadlines are written once.
Failures are raised as ``_failures.NetworkFailure`` (no response came: worth sending again) or
``RequestFailure`` (the request itself cannot be sent: an invalid URL), their ``__cause__`` the
aiohttp exception.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Mapping

from msgwire.errors import MissingExtraError

from ._failures import NetworkFailure, RequestFailure

try:
    import aiohttp
except ImportError as exc:
    raise MissingExtraError("msgwire.harness.providers (an async call)", "harness", exc) from None

__all__ = ["AioClient", "AioResponse"]

CONNECTIONS = 1024
"""Open connections at most per session (a stream holds one for its whole reply)."""


class AioResponse:
    """A streamed aiohttp response as the transport reads one."""

    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    @property
    def status_code(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    @property
    def reason_phrase(self) -> str:
        return self._response.reason or ""

    @property
    def is_success(self) -> bool:
        return 200 <= self._response.status < 300

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._response.content.iter_any()  # aiohttp's own iterator: no layer of ours per chunk

    async def aread(self) -> bytes:
        return await self._response.read()

    async def aclose(self) -> None:
        # a body not read to its end closes the connection (the server sees the client leave)
        self._response.release()


class AioClient:
    """aiohttp sessions, one per event loop, for one provider."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            self._forget_closed_loops()
            connector = aiohttp.TCPConnector(limit=CONNECTIONS, loop=loop)
            session = aiohttp.ClientSession(connector=connector, trust_env=True, auto_decompress=True)
            self._sessions[loop] = session
        return session

    def _forget_closed_loops(self) -> None:
        """Sessions of loops that ended without ``aclose()``: their sockets closed now, so that
        nothing warns of them later (their loop can no longer run their close)."""
        for loop, session in list(self._sessions.items()):
            if loop.is_closed():
                connector = session.connector
                if connector is not None:
                    connector._close()
                del self._sessions[loop]

    async def send(
        self, url: str, body: bytes, headers: Mapping[str, str], *, connect: float | None, read: float | None
    ) -> AioResponse:
        """POST ``body``; the response once its headers came (its body not read)."""
        timeout = aiohttp.ClientTimeout(total=None, connect=connect, sock_connect=connect, sock_read=read)
        try:
            response = await self._session().post(url, data=body, headers=dict(headers), timeout=timeout)
        except (aiohttp.InvalidURL, ValueError) as cause:
            raise RequestFailure(f"{type(cause).__name__}: {cause}") from cause
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as cause:
            raise NetworkFailure(f"{type(cause).__name__}: {cause}") from cause
        except aiohttp.ClientError as cause:
            raise RequestFailure(f"{type(cause).__name__}: {cause}") from cause
        return AioResponse(response)

    async def aclose(self) -> None:
        """Close the session of the running loop, and forget those of loops that ended."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        session = self._sessions.pop(loop, None) if loop is not None else None
        if session is not None:
            await session.close()
        self._forget_closed_loops()
