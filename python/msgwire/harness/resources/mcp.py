"""MCP resources (extra ``mcp``): the one module importing the official ``mcp`` SDK (2.x).

``MCPResources({"docs": ["python", "server.py"], "wiki": "http://127.0.0.1:8000/mcp"})`` connects
to named servers (a command line: stdio; a URL: streamable HTTP; or an ``mcp``
``StdioServerParameters``) on a background event loop of its own, so the calls below are plain
synchronous calls (from async code, run them in a worker thread):

- ``list(server=None)``: the resources the servers offer (``ResourceInfo``);
- ``read(server, uri)``: an ``MCPResourceBlock`` (server name, uri, text ``content`` or base64
  ``blob``, mime type, ``retrieved_at``), ``status="error"`` with the server's error when it
  fails; never raises for a resource;
- ``resolve_message(message)``: its pending MCP resource blocks read;
- ``context(*blocks)``: a ``UserMessage(source="context")`` holding them, the way resources enter
  a conversation (system-provided context; see the README for how each dialect sees it).

Caching builds on the SDK's own: entries are SDK ``CacheEntry``s in an SDK ``ResponseCacheStore``
(``InMemoryResponseCacheStore``, an LRU, by default; any store keeping values as they are works),
keyed per server and uri, expiring as SEP-2549 entries do. A read within the freshness period
is served from it (``stats.hits``); a stale one is read again. Freshness: a positive ``ttl_ms`` the
server sends is honoured (capped by the client's own rule: the shorter wins); otherwise the
client's ``Freshness`` rule for the uri or mime type, one hour by default. The SDK's 2026 servers
send ``ttl_ms=0`` when their author set nothing, so 0 counts as no hint (``Freshness(by_uri={pattern:
0})`` never caches a resource). Change notifications invalidate: for each server every cached uri
is watched through the SDK's ``listen()`` (protocol 2026-07-28), re-opened with the new uri before
the first read of it (the new stream is acknowledged before the old one closes, so no update falls
between), and a ``ResourceUpdated`` event drops the entry. Servers on older protocol versions
have freshness only.
"""

from __future__ import annotations

import builtins
import datetime as dt
import fnmatch
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import anyio
import anyio.abc
import msgspec
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.caching import MAX_TTL_MS, CacheEntry, CacheKey, InMemoryResponseCacheStore, ResponseCacheStore
from mcp.client.subscriptions import ListenNotSupportedError, ResourceUpdated, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, TextResourceContents
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from msgwire.errors import ResourceError
from msgwire.types import ContentBlock, MCPResourceBlock, Message, UserMessage

from ._blocks import map_blocks
from .resolver import Resolver

__all__ = ["CacheStats", "Freshness", "MCPResources", "ResourceInfo"]

log = logging.getLogger("msgwire.harness.resources")

ServerSpec = Sequence[str] | str | StdioServerParameters
_READ = "resources/read"
_T = TypeVar("_T")


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


class ResourceInfo(msgspec.Struct, frozen=True, kw_only=True):
    server_name: str
    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None


class CacheStats(msgspec.Struct, kw_only=True):
    hits: int = 0
    misses: int = 0
    invalidated: int = 0


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
        on_change: Callable[[str, str], None] | None = None,
    ) -> None:
        self.freshness = freshness or Freshness()
        self.store: ResponseCacheStore = store or InMemoryResponseCacheStore()
        self.clock = clock
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.stats = CacheStats()
        self.on_change = on_change
        """Called with (server, uri) after a change notification dropped a cached resource."""
        self._specs = {name: _target(spec) for name, spec in servers.items()}
        self._clients: dict[str, Client] = {}
        self._groups: dict[str, anyio.abc.TaskGroup] = {}
        self._watched: dict[str, set[str]] = {}
        self._watching: dict[str, anyio.CancelScope | None] = {}
        self._listens: dict[str, bool] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._stops: dict[str, anyio.Event] = {}
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
        """Start the event loop and connect every server (``ResourceError`` when one cannot
        be started or connected)."""
        with self._lock:
            if self._portal is not None:
                return
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        for name in self._specs:
            try:
                self._portal.start_task(self._serve, name, name=f"mcp:{name}")
            except Exception as exc:
                self.close()
                cause = _leaf(exc)
                raise ResourceError(
                    f"MCP server {name!r} could not be started: {type(cause).__name__}: {cause}"
                ) from exc

    def close(self) -> None:
        with self._lock:
            portal, self._portal = self._portal, None
        if portal is None:
            return
        for stop in list(self._stops.values()):
            portal.call(_set, stop)
        self._portal_cm.__exit__(None, None, None)
        self._clients.clear()

    async def _serve(self, name: str, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        stop = self._stops[name] = anyio.Event()
        self._locks[name] = anyio.Lock()
        self._watched[name] = set()
        self._watching[name] = None
        async with Client(self._specs[name], cache=None, read_timeout_seconds=self.timeout) as client:
            self._clients[name] = client
            self._listens[name] = client.protocol_version in MODERN_PROTOCOL_VERSIONS
            async with anyio.create_task_group() as group:
                self._groups[name] = group
                task_status.started()
                await stop.wait()
                group.cancel_scope.cancel()

    # --- reading --------------------------------------------------------------------------------

    def list(self, server: str | None = None) -> builtins.list[ResourceInfo]:
        """The resources of one server, or of every server (in the order they were given)."""
        names = [server] if server is not None else list(self._specs)
        return [info for name in names for info in self._call(self._list, name)]

    def read(self, server: str, uri: str, *, refresh: bool = False) -> MCPResourceBlock:
        """The resource as a resolved block (from the cache when fresh, unless ``refresh``), or
        an error block; never raises for the resource itself."""
        block = MCPResourceBlock(server_name=server, resource_uri=uri)
        if server not in self._specs:
            return msgspec.structs.replace(block, status="error", error=f"no MCP server named {server!r}")
        try:
            return self._call(self._read, server, uri, refresh)
        except MCPError as exc:
            why = f"server {server!r} could not read {uri!r}: {exc}"
        except Exception as exc:  # the connection, a timeout, a reply the SDK refused
            why = f"server {server!r} could not read {uri!r}: {type(exc).__name__}: {exc}"
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
        content: list[ContentBlock] = list(blocks)
        return UserMessage(content=content, source="context")

    def last_used(self, server: str, uri: str) -> float | None:
        """When the resource was last read or served from the cache (``clock`` time): the LRU
        order ``TokenBudget`` prunes by."""
        return self._used.get((server, uri))

    # --- on the loop ----------------------------------------------------------------------------

    def _call(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        portal = self._portal
        if portal is None:
            raise RuntimeError("MCPResources is not open (use it in a with block, or call open())")
        return portal.call(fn, *args)

    async def _list(self, name: str) -> builtins.list[ResourceInfo]:
        client = self._clients[name]
        infos, cursor = [], None
        while True:
            page = await client.list_resources(cursor=cursor, cache_mode="bypass")
            infos += [
                ResourceInfo(
                    server_name=name, uri=str(r.uri), name=r.name, mime_type=r.mime_type, description=r.description
                )
                for r in page.resources
            ]
            cursor = page.next_cursor
            if not cursor:
                return infos

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
        async with self._locks[name]:
            await self._watch(name, uri)
        result = await self._clients[name].read_resource(uri, cache_mode="bypass")
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

    async def _watch(self, name: str, uri: str) -> None:
        """Listen for updates of ``uri`` (and every uri cached before) before it is read."""
        if not self._listens[name] or uri in self._watched[name]:
            return
        uris = sorted({*self._watched[name], uri})
        try:
            scope = await self._groups[name].start(self._listen, name, uris)
        except ListenNotSupportedError:
            self._listens[name] = False
            return
        old, self._watching[name] = self._watching[name], scope
        self._watched[name].add(uri)
        if old is not None:
            old.cancel()

    async def _listen(
        self, name: str, uris: builtins.list[str], *, task_status: anyio.abc.TaskStatus[anyio.CancelScope]
    ) -> None:
        with anyio.CancelScope() as scope:
            try:
                async with self._clients[name].listen(resource_subscriptions=uris) as events:
                    task_status.started(scope)
                    async for event in events:
                        if isinstance(event, ResourceUpdated):
                            await self._invalidate(name, event.uri)
            except SubscriptionLost:
                # updates may have been missed: nothing cached from this server can be trusted
                log.warning("MCP server %r dropped its change stream; its cached resources are dropped", name)
                for uri in list(self._watched[name]):
                    await self._invalidate(name, uri)
                self._watched[name].clear()

    async def _invalidate(self, name: str, uri: str) -> None:
        key = CacheKey(_READ, uri, name)
        if await self.store.get(key) is not None:
            await self.store.delete(key)
            self.stats.invalidated += 1
            log.info("MCP resource %s from %r changed on the server: cache entry dropped", uri, name)
        if self.on_change is not None:
            self.on_change(name, uri)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _set(event: anyio.Event) -> None:
    event.set()


def _pending(block: MCPResourceBlock) -> bool:
    return block.status == "pending" and block.content is None and block.blob is None and block.error is None


def _target(spec: ServerSpec) -> StdioServerParameters | str:
    if isinstance(spec, StdioServerParameters | str):
        return spec
    command = list(spec)
    if not command:
        raise ValueError("an MCP server command line may not be empty")
    return StdioServerParameters(command=command[0], args=command[1:])
