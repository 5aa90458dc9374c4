"""MCP resources (extra ``mcp``): the one module importing the official ``mcp`` SDK (2.x).

``MCPResources({"docs": ["python", "server.py"], "wiki": "http://127.0.0.1:8000/mcp"})`` connects
to named servers on a background event loop of its own, so the calls below are plain synchronous
calls (from async code, run them in a worker thread). A server is a stdio command line (a list,
or one string split as a shell would with ``shlex``), an http(s) URL (streamable HTTP), or an
``mcp`` ``StdioServerParameters``; any other string (``ws://...``) is refused with a
``ValueError``.

- ``list(server=None)``: the resources the servers offer (``ResourceInfo``);
- ``templates(server=None)``: their resource templates (``TemplateInfo``: ``greeting://{name}``);
- ``read(server, uri)``: an ``MCPResourceBlock`` (server name, uri, text ``content`` or base64
  ``blob``, mime type, ``retrieved_at``), ``status="error"`` with the reason when it fails (the
  server's own message as it sent it, e.g. ``Resource not found: x://y``); never raises for a
  resource;
- ``resolve_message(message)``: its pending MCP resource blocks read;
- ``context(*blocks)``: a ``UserMessage(source="context")`` holding them, the way resources enter
  a conversation (system-provided context; docs/guide/resources.md says how each dialect sees it);
- ``unavailable``: the servers not connected at the moment, each with the reason.

Caching builds on the SDK's own: entries are SDK ``CacheEntry``s in an SDK ``ResponseCacheStore``
(``InMemoryResponseCacheStore``, an LRU, by default; any store keeping values as they are works),
keyed per server and uri, expiring as SEP-2549 entries do. A read within the freshness period
is served from it (``stats.hits``); a stale one is read again. Freshness: a positive ``ttl_ms`` the
server sends is honoured (capped by the client's own rule: the shorter wins); otherwise the
client's ``Freshness`` rule for the uri or mime type, one hour by default. The SDK's 2026 servers
send ``ttl_ms=0`` when their author set nothing, so 0 counts as no hint (``Freshness(by_uri={pattern:
0})`` never caches a resource). Change notifications invalidate: on a server that offers them
(protocol 2026-07-28 and ``resources.subscribe`` in its capabilities) every cached uri is watched
through the SDK's ``listen()``, re-opened with the new uri before the first read of it (the new
stream is acknowledged before the old one closes, so no update falls between), and a
``ResourceUpdated`` event drops the entry.

Under faults (each shown by a test in ``tests/harness/resources/``; ``docs/guarantees.md``):

- A server that cannot notify (no ``subscriptions/listen``, an older protocol, or a listen
  request it refuses) is read as any other; its entries live for their freshness period only.
- A server that fails to start or connect does not stop the others: ``open()`` connects every
  server at once and logs each failure, ``unavailable`` names it with the reason, and its reads
  are error blocks saying why (``could not connect: FileNotFoundError: ...``).
- A lost server is reconnected by the next call that needs it: a connection whose server ended
  it (a stdio server that exited) is dropped at once, and the next call connects again (a stdio
  server is started again) before it sends anything, so a server gone between two reads is not an
  error; while it stays down every read is an error block with the reason, and it works again
  once the server is back, without ``open()``. Cached entries that relied on its change stream
  are dropped (updates may have been missed); entries kept for their freshness period are still
  served.
- A call in flight when its connection is lost fails (``the connection was lost before the answer
  came: Connection closed``) and is never sent again: the server may have acted on it (a read with
  side effects would run twice), and a restart would take the call past its ``timeout``.
- A slow server: each request gets ``timeout`` seconds and the handshake ``connect_timeout``. A
  read past it is an error block (``no answer within 2 s``; the SDK cancels the request) and the
  connection stays up for the next read; other reads, of that server or another, go on meanwhile.
  A server silent at start is given up after ``connect_timeout`` (``no answer to the MCP
  handshake within 30 s``; its process is stopped) while the others connect. Each call on a
  server that is down tries once more to connect, so a silent one costs ``connect_timeout`` a
  call.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as dt
import fnmatch
import logging
import math
import re
import shlex
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, Self, TypeVar

import msgspec

from msgwire.errors import MissingExtraError, ResourceError
from msgwire.types import ContentBlock, MCPResourceBlock, Message, UserMessage

from ._blocks import map_blocks
from .resolver import Resolver

try:
    import anyio
    import anyio.abc
    from anyio.from_thread import BlockingPortal, start_blocking_portal
    from mcp import Client, StdioServerParameters
    from mcp.client.caching import MAX_TTL_MS, CacheEntry, CacheKey, InMemoryResponseCacheStore, ResponseCacheStore
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.subscriptions import ListenNotSupportedError, ResourceUpdated, SubscriptionLost
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        CONNECTION_CLOSED,
        METHOD_NOT_FOUND,
        BlobResourceContents,
        ListResourcesResult,
        ListResourceTemplatesResult,
        TextResourceContents,
    )
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
except ImportError as exc:
    raise MissingExtraError("msgwire's MCP resources (MCPResources)", "mcp", exc) from None

__all__ = ["CacheStats", "Freshness", "MCPResources", "ResourceInfo", "TemplateInfo"]

log = logging.getLogger("msgwire.harness.resources")

ServerSpec = Sequence[str] | str | StdioServerParameters
_READ = "resources/read"
_URL = re.compile(r"https?://", re.IGNORECASE)
_T = TypeVar("_T")
_PageT = TypeVar("_PageT", ListResourcesResult, ListResourceTemplatesResult)


class Freshness(msgspec.Struct, frozen=True, kw_only=True):
    """How long a resource read stays fresh, in seconds: the first ``by_uri`` glob matching the
    uri, else the first ``by_mime`` glob matching the mime type (``text/*``), else ``default``."""

    default: float = 3600.0
    by_uri: dict[str, float] = msgspec.field(default_factory=dict)
    by_mime: dict[str, float] = msgspec.field(default_factory=dict)

    def seconds(self, uri: str, mime_type: str | None, server_ttl_ms: int = 0) -> float:
        ours = next((s for p, s in self.by_uri.items() if fnmatch.fnmatchcase(uri, p)), None)
        if ours is None and mime_type:
            ours = next((s for p, s in self.by_mime.items() if fnmatch.fnmatchcase(mime_type, p)), None)
        if ours is None:
            ours = self.default
        if server_ttl_ms > 0:
            ours = min(ours, server_ttl_ms / 1000)
        return min(ours, MAX_TTL_MS / 1000)


class _Listed(msgspec.Struct, frozen=True, kw_only=True):
    """What a server says of each thing it lists (and which server it is)."""

    server_name: str
    name: str
    mime_type: str | None = None
    description: str | None = None
    title: str | None = None


class ResourceInfo(_Listed, frozen=True, kw_only=True):
    """One resource a server lists."""

    uri: str


class TemplateInfo(_Listed, frozen=True, kw_only=True):
    """One resource template a server lists: ``uri_template`` is an RFC 6570 template
    (``greeting://{name}``); a uri made from it is read with ``read`` like any other."""

    uri_template: str


_ListedT = TypeVar("_ListedT", ResourceInfo, TemplateInfo)


def _listed(cls: type[_ListedT], server_name: str, item: Any, **own: str) -> _ListedT:
    """``cls`` of an item of the SDK's listing: the fields every listing has, and ``own``."""
    return cls(
        server_name=server_name,
        name=item.name,
        mime_type=item.mime_type,
        description=item.description,
        title=item.title,
        **own,
    )


class CacheStats(msgspec.Struct, kw_only=True):
    hits: int = 0
    misses: int = 0
    invalidated: int = 0


class _Unavailable(Exception):
    """The server has no connection and none could be made; the message says why."""


class _Lost(Exception):
    """The connection was lost while a request waited for its answer; the message says how."""


class _Connection:
    """One live connection to a server: the SDK client, the task group its change stream runs
    in, and what that stream watches. A reconnect makes a new one."""

    def __init__(self, client: Client, group: anyio.abc.TaskGroup, ended: anyio.Event) -> None:
        self.client = client
        self.group = group
        self.stop = anyio.Event()
        self.ended = ended
        """Set once the server ended the connection (see ``_EndWatch``)."""
        resources = client.server_capabilities.resources
        self.notifies = client.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(resources and resources.subscribe)
        self.watched: set[str] = set()
        self.watching: anyio.CancelScope | None = None
        self.watch_lock = anyio.Lock()


class _Receiving(Protocol):
    """What ``_EndWatch`` uses of a transport's read stream (its items pass through untouched)."""

    async def receive(self) -> Any: ...

    async def aclose(self) -> None: ...


class _EndWatch:
    """A transport's read stream, passed through to the SDK, that sets ``ended`` once it is at its
    end (the server exited, or closed the connection): the SDK says so only to a request that
    fails, and a request must not be sent on a connection known to be gone."""

    def __init__(self, stream: _Receiving, ended: anyio.Event) -> None:
        self._stream = stream
        self._ended = ended

    def __getattr__(self, name: str) -> Any:  # the SDK reads ``last_context`` where there is one
        return getattr(self._stream, name)

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _transport(target: StdioServerParameters | str, ended: anyio.Event) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's transport to ``target`` (the one its ``Client`` makes of it), its end watched."""
    opened = streamable_http_client(target) if isinstance(target, str) else stdio_client(target)
    async with opened as (read, write):
        yield _EndWatch(read, ended), write


class _Link:
    """One named server: how to reach it, its connection when it has one, else why not."""

    def __init__(self, name: str, target: StdioServerParameters | str) -> None:
        self.name = name
        self.target = target
        self.connection: _Connection | None = None
        self.down = "not connected yet"
        self.handshake: anyio.CancelScope | None = None
        self.connecting = anyio.Lock()


class MCPResources(AbstractContextManager["MCPResources"], Resolver):
    """Named MCP servers and a cache of their resources (see the module docs)."""

    def __init__(
        self,
        servers: Mapping[str, ServerSpec],
        *,
        freshness: Freshness | None = None,
        store: ResponseCacheStore | None = None,
        clock: Callable[[], float] = time.time,
        max_bytes: int = 1 << 20,
        timeout: float = 30.0,
        connect_timeout: float = 30.0,
        on_change: Callable[[str, str], None] | None = None,
    ) -> None:
        """``servers`` maps names to servers (see the module docs; ``ValueError`` for one that is
        neither a command line nor an http(s) URL). ``timeout`` bounds each request to a server,
        ``connect_timeout`` starting and greeting one (the MCP handshake), in seconds."""
        self.freshness = freshness or Freshness()
        self.store: ResponseCacheStore = store or InMemoryResponseCacheStore()
        self.clock = clock
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.stats = CacheStats()
        self.on_change = on_change
        """Called with (server, uri) after a change notification dropped a cached resource."""
        self._specs = {name: _target(name, spec) for name, spec in servers.items()}
        self._links: dict[str, _Link] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._used: dict[tuple[str, str], float] = {}
        self._portal: BlockingPortal | None = None
        self._portal_cm: Any = None
        self._lock = threading.Lock()

    # --- life -----------------------------------------------------------------------------------

    def __enter__(self) -> MCPResources:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Start the event loop and connect every server at once. A server that cannot be
        started or reached is logged and left in ``unavailable`` (its reads say why, and each
        tries to connect again); the others work as usual."""
        with self._lock:
            if self._portal is not None:
                return
            self._portal_cm = start_blocking_portal()
            self._links = {name: _Link(name, target) for name, target in self._specs.items()}
            portal = self._portal = self._portal_cm.__enter__()
        portal.start_task(self._run, name="mcp")
        portal.call(self._connect_all)

    def close(self) -> None:
        """Disconnect every server (stdio servers are stopped) and stop the event loop."""
        with self._lock:
            portal, self._portal = self._portal, None
        if portal is None:
            return
        portal.call(self._stop_all)
        self._portal_cm.__exit__(None, None, None)

    @property
    def unavailable(self) -> dict[str, str]:
        """The servers without a connection at the moment, each with the reason (a server whose
        connection broke since its last call shows up after the call that finds it broken)."""
        if self._portal is None:
            return dict.fromkeys(self._specs, "MCPResources is not open")
        return {name: link.down for name, link in self._links.items() if link.connection is None}

    # --- reading --------------------------------------------------------------------------------

    def list(self, server: str | None = None) -> builtins.list[ResourceInfo]:
        """The resources of one server, or of every server in the order they were given.
        For one server, ``ResourceError`` says why it cannot be listed; listing every server
        leaves out those that cannot (logged; ``unavailable`` names them)."""
        return self._gather(server, self._list)

    def templates(self, server: str | None = None) -> builtins.list[TemplateInfo]:
        """The resource templates of one server, or of every server (``list``'s rules); a server
        without templates has none."""
        return self._gather(server, self._templates)

    def read(self, server: str, uri: str, *, refresh: bool = False) -> MCPResourceBlock:
        """The resource as a resolved block (from the cache when fresh, unless ``refresh``), or
        an error block; never raises for the resource itself."""
        block = MCPResourceBlock(server_name=server, resource_uri=uri)
        if server not in self._specs:
            return msgspec.structs.replace(block, status="error", error=f"no MCP server named {server!r}")
        try:
            return self._call(self._read, server, uri, refresh)
        except Exception as exc:  # the server's error, the connection, a timeout, a reply the SDK refused
            why = f"server {server!r} could not read {uri!r}: {self._reason(exc)}"
        return msgspec.structs.replace(block, status="error", error=why)

    def resolve(self, block: MCPResourceBlock) -> MCPResourceBlock:
        return self.read(block.server_name, block.resource_uri)

    def resolve_message(self, message: Message, role: str = "user", /) -> Message:
        """``message`` with its pending MCP resource blocks read (the same object when none);
        every role reads the same resources."""
        return map_blocks(message, lambda b: self.resolve(b) if type(b) is MCPResourceBlock and _pending(b) else b)

    def audit_record(self, block: ContentBlock, /) -> dict[str, Any] | None:
        if type(block) is not MCPResourceBlock:
            return None
        return {"type": "mcp_resource", "uri": block.resource_uri, "status": block.status, "error": block.error}

    def context(self, *blocks: MCPResourceBlock) -> UserMessage:
        """The message that puts resources into a conversation: system-provided context."""
        content: builtins.list[ContentBlock] = builtins.list(blocks)
        return UserMessage(content=content, source="context")

    def last_used(self, server: str, uri: str) -> float | None:
        """When the resource was last read or served from the cache (``clock`` time): the LRU
        order ``TokenBudget`` prunes by."""
        return self._used.get((server, uri))

    # --- from the caller's thread ---------------------------------------------------------------

    def _call(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        return self._opened().call(fn, *args)

    def _opened(self) -> BlockingPortal:
        portal = self._portal
        if portal is None:
            raise RuntimeError("MCPResources is not open (use it in a with block, or call open())")
        return portal

    def _gather(self, server: str | None, fetch: Callable[[str], Awaitable[builtins.list[_T]]]) -> builtins.list[_T]:
        if server is not None and server not in self._specs:
            raise ResourceError(f"no MCP server named {server!r}")
        self._opened()
        found: builtins.list[_T] = []
        for name in [server] if server is not None else self._specs:
            try:
                found += self._call(fetch, name)
            except Exception as exc:
                why = f"MCP server {name!r} could not be listed: {self._reason(exc)}"
                if server is not None:
                    raise ResourceError(why) from exc
                log.warning("%s", why)
        return found

    def _reason(self, exc: Exception) -> str:
        if isinstance(exc, _Unavailable | _Lost):
            return str(exc)
        if isinstance(exc, TimeoutError):
            return f"no answer within {self.timeout:g} s"
        if isinstance(exc, MCPError):
            return str(exc)
        return f"{type(exc).__name__}: {exc}"

    # --- on the loop: connections ---------------------------------------------------------------

    async def _run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """The task every connection lives under, until ``close``."""
        self._closing = anyio.Event()
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            await self._closing.wait()
            for link in self._links.values():
                self._release(link, "closed")
                if link.handshake is not None:
                    link.handshake.cancel()

    async def _connect_all(self) -> None:
        async def connect(link: _Link) -> None:
            with contextlib.suppress(_Unavailable):  # logged by _serve, kept in link.down for the reads
                await self._connection(link)

        async with anyio.create_task_group() as group:
            for link in self._links.values():
                group.start_soon(connect, link)

    async def _stop_all(self) -> None:
        if self._closing is not None:
            self._closing.set()

    async def _connection(self, link: _Link) -> _Connection:
        """``link``'s connection, made now when it has none or its server ended it (``_Unavailable``
        when it cannot be)."""
        async with link.connecting:
            if link.connection is not None and link.connection.ended.is_set():
                self._release(link, "the connection was lost: Connection closed")
            if link.connection is None and self._group is not None:
                await self._group.start(self._serve, link)
            if link.connection is None:
                raise _Unavailable(link.down)
            return link.connection

    async def _serve(self, link: _Link, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Hold one connection to ``link``'s server until it is released or lost. Reports
        itself started once connected, or once connecting failed (``link.down`` says why)."""
        connection: _Connection | None = None
        why = ""
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as handshake:
                link.handshake = handshake
                # no read timeout of the SDK's: it would bound the handshake too (and a probe timed
                # out makes the SDK fall back to the old protocol); _request bounds each request
                ended = anyio.Event()
                async with Client(_transport(link.target, ended), cache=None) as client:
                    handshake.deadline = math.inf
                    link.handshake = None
                    async with anyio.create_task_group() as group:
                        connection = link.connection = _Connection(client, group, ended)
                        group.start_soon(self._release_when_ended, link, connection)
                        task_status.started()
                        await connection.stop.wait()
                        group.cancel_scope.cancel()
            if connection is None:
                why = f"no answer to the MCP handshake within {self.connect_timeout:g} s"
        except Exception as exc:  # the process, the network, the handshake: the reason is kept
            why = _describe(exc)
        finally:
            link.handshake = None
        closing = self._closing is not None and self._closing.is_set()
        if connection is None:
            link.down = "closed" if closing else f"could not connect: {why}"
            if not closing:
                log.warning("MCP server %r %s", link.name, link.down)
            task_status.started()
            return
        if link.connection is connection:  # it ended by itself: not released
            link.connection = None
            link.down = f"the connection was lost: {why or 'closed'}"
            log.warning("MCP server %r: %s", link.name, link.down)
        if not closing:
            await self._forget(link.name, connection, "its connection ended")

    async def _release_when_ended(self, link: _Link, connection: _Connection) -> None:
        """Drop ``connection`` as soon as its server ends it, not at the next call: ``unavailable``
        says so at once, and a stdio server's process is reaped."""
        await connection.ended.wait()
        self._release(link, "the connection was lost: Connection closed", connection)

    def _release(self, link: _Link, why: str, connection: _Connection | None = None) -> None:
        """Stop using ``connection`` (``link``'s current one by default): the next call connects
        again."""
        connection = connection or link.connection
        if connection is None:
            return
        if link.connection is connection:
            link.connection = None
            link.down = why
        connection.stop.set()

    async def _request(self, link: _Link, call: Callable[[_Connection], Awaitable[_T]]) -> _T:
        """``call`` on ``link``'s connection, connecting first when there is none (or its server
        ended it since the last call), within ``timeout``. A connection lost while ``call`` waits
        is released and ``call`` fails (``_Lost``), never sent again: the server may have acted on
        it, and a restart would take the call past its timeout. The next call connects again."""
        connection = await self._connection(link)
        try:
            with anyio.fail_after(self.timeout):
                return await call(connection)
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise
            self._release(link, f"the connection was lost: {exc}", connection)
            raise _Lost(f"the connection was lost before the answer came: {exc}") from exc

    # --- on the loop: requests ------------------------------------------------------------------

    async def _list(self, name: str) -> builtins.list[ResourceInfo]:
        pages = await self._pages(name, lambda c, at: c.client.list_resources(cursor=at, cache_mode="bypass"))
        return [_listed(ResourceInfo, name, r, uri=str(r.uri)) for page in pages for r in page.resources]

    async def _templates(self, name: str) -> builtins.list[TemplateInfo]:
        pages = await self._pages(name, lambda c, at: c.client.list_resource_templates(cursor=at, cache_mode="bypass"))
        return [
            _listed(TemplateInfo, name, t, uri_template=t.uri_template)
            for page in pages
            for t in page.resource_templates
        ]

    async def _pages(
        self, name: str, fetch: Callable[[_Connection, str | None], Awaitable[_PageT]]
    ) -> builtins.list[_PageT]:
        """Every page of a listing, cursor after cursor (none when the server does not serve
        that list at all; ``ResourceError`` when it hands out a cursor twice)."""
        link = self._links[name]
        pages: builtins.list[_PageT] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:

            async def page_at(connection: _Connection, at: str | None = cursor) -> _PageT:
                return await fetch(connection, at)

            try:
                page = await self._request(link, page_at)
            except MCPError as exc:
                if exc.code == METHOD_NOT_FOUND and not pages:
                    return []
                raise
            pages.append(page)
            cursor = page.next_cursor
            if not cursor:
                return pages
            if cursor in seen:
                raise ResourceError(f"the server sent the cursor {cursor!r} twice: its listing does not end")
            seen.add(cursor)

    async def _read(self, name: str, uri: str, refresh: bool) -> MCPResourceBlock:
        key = CacheKey(_READ, uri, name)
        now = self.clock()
        self._used[(name, uri)] = now
        if not refresh:
            entry = await self.store.get(key)
            if entry is not None and entry.expires_at is not None and entry.expires_at > now:
                self.stats.hits += 1
                hit: MCPResourceBlock = entry.value  # a block this manager stored
                return hit
        self.stats.misses += 1

        link = self._links[name]

        async def read(connection: _Connection) -> Any:
            await self._watch(link, connection, uri)
            return await connection.client.read_resource(uri, cache_mode="bypass")

        result = await self._request(link, read)
        block = self._block(name, uri, result.contents, now)
        if block.status == "resolved":
            seconds = self.freshness.seconds(uri, block.mime_type, getattr(result, "ttl_ms", 0) or 0)
            if seconds > 0:
                await self.store.set(key, CacheEntry(value=block, scope="private", expires_at=now + seconds))
        return block

    def _block(self, name: str, uri: str, contents: Sequence[Any], now: float) -> MCPResourceBlock:
        texts = [c.text for c in contents if isinstance(c, TextResourceContents)]
        blobs = [c.blob for c in contents if isinstance(c, BlobResourceContents)]
        mime = next((c.mime_type for c in contents if c.mime_type), None)
        at = dt.datetime.fromtimestamp(now, dt.UTC)
        block = MCPResourceBlock(server_name=name, resource_uri=uri, mime_type=mime, retrieved_at=at)
        if not texts and not blobs:
            return msgspec.structs.replace(block, status="error", error=f"{uri!r} has no contents")
        content = "\n\n".join(texts) if texts else None
        blob = blobs[0] if not texts else None
        size = len(content.encode()) if content is not None else len(blob or "") * 3 // 4
        if size > self.max_bytes:
            why = f"{uri!r} is {size:,} bytes, over the limit of {self.max_bytes:,}"
            return msgspec.structs.replace(block, status="error", error=why)
        return msgspec.structs.replace(block, status="resolved", content=content, blob=blob)

    # --- on the loop: change notifications ------------------------------------------------------

    async def _watch(self, link: _Link, connection: _Connection, uri: str) -> None:
        """Listen for updates of ``uri`` (and every uri watched before) before it is read, when
        the server can notify. A server that turns the listen request down is read without."""
        if not connection.notifies or uri in connection.watched:
            return
        async with connection.watch_lock:
            if not connection.notifies or uri in connection.watched:
                return
            try:
                await connection.group.start(self._listen, link, connection, {*connection.watched, uri})
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    raise
                self._no_notifications(link.name, connection, exc)
            except (ListenNotSupportedError, SubscriptionLost) as exc:
                self._no_notifications(link.name, connection, exc)

    def _no_notifications(self, name: str, connection: _Connection, exc: Exception) -> None:
        connection.notifies = False
        log.info("MCP server %r sends no change notifications (%s): its resources are cached by freshness", name, exc)

    async def _listen(
        self,
        link: _Link,
        connection: _Connection,
        uris: set[str],
        *,
        task_status: anyio.abc.TaskStatus[None],
    ) -> None:
        """One change stream for ``uris``; once the server acknowledges it, it replaces the
        stream before (so no update falls between the two). A stream cut short (the server died,
        the network broke) takes the connection with it: the SDK may not notice a dead HTTP
        transport before a request times out, so the next call connects afresh."""
        started = False
        cut = None
        with anyio.CancelScope() as scope:
            try:
                async with connection.client.listen(resource_subscriptions=sorted(uris)) as events:
                    old, connection.watching, connection.watched = connection.watching, scope, uris
                    if old is not None:
                        old.cancel()
                    task_status.started()
                    started = True
                    async for event in events:
                        if isinstance(event, ResourceUpdated):
                            await self._invalidate(link.name, event.uri)
            except Exception as exc:  # before the acknowledgement: the caller's; after: the stream's end
                if not started:
                    raise
                cut = _describe(exc)
            # only an end the server caused gets here (replacing the stream cancels `scope`)
            if connection.watching is scope:
                await self._forget(link.name, connection, f"its change stream ended ({cut or 'closed by the server'})")
            if cut is not None and not connection.ended.is_set():  # else the server's end says why
                self._release(link, f"the connection was lost: its change stream was cut ({cut})", connection)

    async def _forget(self, name: str, connection: _Connection, why: str) -> None:
        """Drop what ``connection`` watched from the cache: updates may have been missed."""
        watched, connection.watched, connection.watching = connection.watched, set(), None
        if watched:
            log.warning("MCP server %r: %s; its %d watched cached resources are dropped", name, why, len(watched))
        for uri in sorted(watched):
            await self._invalidate(name, uri)

    async def _invalidate(self, name: str, uri: str) -> None:
        key = CacheKey(_READ, uri, name)
        if await self.store.get(key) is not None:
            await self.store.delete(key)
            self.stats.invalidated += 1
            log.info("MCP resource %s from %r changed on the server: cache entry dropped", uri, name)
        if self.on_change is not None:
            self.on_change(name, uri)


def _describe(exc: BaseException) -> str:
    """What went wrong, from the first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) if isinstance(exc, MCPError) else f"{type(exc).__name__}: {exc}"


def _pending(block: MCPResourceBlock) -> bool:
    return block.status == "pending" and block.content is None and block.blob is None and block.error is None


def _target(name: str, spec: ServerSpec) -> StdioServerParameters | str:
    """An MCP server as the SDK's ``Client`` takes it: an http(s) URL, or stdio parameters."""
    if isinstance(spec, StdioServerParameters):
        return spec
    if isinstance(spec, str):
        text = spec.strip()
        if _URL.match(text):
            return text
        if "://" in (text.split(maxsplit=1) or [""])[0]:
            raise ValueError(
                f"MCP server {name!r}: {spec!r} is not an http(s) URL; a stdio server is a command line, "
                "a list [command, *args] or one string split as a shell would"
            )
        try:
            command = shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"MCP server {name!r}: the command line {spec!r} cannot be split ({exc})") from None
    else:
        command = builtins.list(spec)
        if not all(isinstance(part, str) for part in command):
            raise TypeError(f"MCP server {name!r}: a command line is a list of strings, got {spec!r}")
    if not command:
        raise ValueError(f"MCP server {name!r}: the command line is empty")
    return StdioServerParameters(command=command[0], args=command[1:])
