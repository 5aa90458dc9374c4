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

The environment's proxy (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``) is looked up once per
origin and client, as httpx reads it once per client for the sync calls; aiohttp's own
``trust_env`` is not used: it looks the proxy up and reads ``~/.netrc`` in the thread pool on
every request (two thread hops a request, held up behind the tools at a thousand conversations),
and a ``~/.netrc`` entry for the host (a ``default`` one matches every host) made it refuse
every call that carries an ``Authorization`` header.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

from msgwire.errors import MissingExtraError

from ._failures import NetworkFailure, RequestFailure

try:
    import aiohttp
    import yarl
    from aiohttp.helpers import get_env_proxy_for_url
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
        # origin (scheme, host and port) -> the environment's proxy for it and its credentials
        self._proxies: dict[str, tuple[str | None, aiohttp.BasicAuth | None]] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            self._forget_closed_loops()
            connector = aiohttp.TCPConnector(limit=CONNECTIONS, loop=loop)
            session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
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
            proxy, proxy_auth = self._proxies.get(_origin(url)) or self._proxy(url)
            response = await self._session().post(
                url, data=body, headers=dict(headers), timeout=timeout, proxy=proxy, proxy_auth=proxy_auth
            )
        except (aiohttp.InvalidURL, ValueError) as cause:
            raise RequestFailure(f"{type(cause).__name__}: {cause}") from cause
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as cause:
            raise NetworkFailure(f"{type(cause).__name__}: {cause}") from cause
        except aiohttp.ClientError as cause:
            raise RequestFailure(f"{type(cause).__name__}: {cause}") from cause
        return AioResponse(response)

    def _proxy(self, url: str) -> tuple[str | None, aiohttp.BasicAuth | None]:
        """The environment's proxy for ``url``'s origin, as aiohttp's ``trust_env`` finds it,
        looked up once: in the loop (a read of ``~/.netrc`` for the proxy's credentials once per
        client, not a thread hop per request)."""
        try:
            proxy, auth = get_env_proxy_for_url(yarl.URL(url))
        except LookupError:  # none, or NO_PROXY names the host
            found: tuple[str | None, aiohttp.BasicAuth | None] = (None, None)
        else:
            found = (str(proxy), auth)
        self._proxies[_origin(url)] = found
        return found

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


def _origin(url: str) -> str:
    scheme, netloc, *_ = urlsplit(url)
    return f"{scheme}://{netloc}"
