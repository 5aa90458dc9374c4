"""Stores: conversations, their audit trails and a swarm's mail in SQLite (the default) or
PostgreSQL (for many workers on many machines); the schema is documented in ``docs/store.md``.

::

    from msgwire.harness.store import open_store

    store = open_store("sqlite:///msgwire.db")          # or "postgresql://user@host/db"
    conversation = store.create(system_prompt="Be brief.")
    conversation.add(msgwire.user("hi"))                 # stored: the store gave it seq 0
    store.append(conversation.id, [m1, m2])              # one transaction; retries never duplicate
    store.messages(conversation.id, last=20)             # the most recent 20, one query
    fork_id = store.fork(conversation.id, at=entry_id)   # a copy in SQL

Both stores pass one test suite (``tests/harness/test_store.py``); ``Store`` is what they share,
``AsyncStore`` the same calls for asyncio (each runs in a worker thread: neither sqlite3 nor a
pooled psycopg connection blocks the event loop). ``open_store`` picks the class from the URL.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Literal, ParamSpec, Protocol, TypeVar, runtime_checkable

from msgwire import Message, Session, UserMessage

from ..audit import Committed, Draft, Entry
from ..conversation import Conversation
from .mail import AgentState, Mail, SQLStore
from .rows import BadRow, from_rows, message_row, to_rows
from .sql import ConversationInfo, OnError
from .sqlite import SQLiteStore

__all__ = [
    "DEFAULT_URL",
    "AgentState",
    "AsyncStore",
    "BadRow",
    "ConversationInfo",
    "Mail",
    "OnError",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "aopen_store",
    "from_rows",
    "message_row",
    "open_store",
    "to_rows",
]

DEFAULT_URL = "sqlite:///msgwire.db"
"""Where ``open_store()`` keeps things when given no URL: ``msgwire.db`` in the working directory."""

P = ParamSpec("P")
T = TypeVar("T")


@runtime_checkable
class Store(Protocol):
    """What every store does (``SQLiteStore``, ``PostgresStore``); see ``SQLStore`` for each call."""

    url: str

    def create(
        self,
        *,
        id: str | None = None,  # noqa: A002
        agent: str | None = None,
        system_prompt: str | None = None,
        mode: str | None = None,
        modes: Mapping[str, str] | None = None,
        branch: str = "main",
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation: ...
    def bind(self, conversation: Conversation, *, agent: str | None = None) -> Conversation: ...
    def open(self, conversation_id: str, *, on_error: OnError = "raise") -> Conversation: ...
    def load(self, conversation_id: str, *, on_error: OnError = "raise") -> Conversation: ...
    def info(self, conversation_id: str) -> ConversationInfo: ...
    def conversations(self, *, agent: str | None = None) -> list[ConversationInfo]: ...
    def delete(self, conversation_id: str) -> bool: ...
    def messages(
        self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise"
    ) -> list[Message]: ...
    def session(self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise") -> Session: ...
    def append(
        self,
        conversation_id: str,
        messages: Message | Sequence[Message],
        *,
        decision: str | None = None,
        audit: Mapping[str, Any] | None = None,
    ) -> list[Entry]: ...
    def update(
        self, conversation_id: str, message: Message, decision: str, audit: Mapping[str, Any] | None = None
    ) -> Entry: ...
    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> Committed: ...
    def since(self, conversation_id: str, after: int, /) -> list[Entry]: ...
    def fork(self, conversation_id: str, at: str | None = None, *, id: str | None = None) -> str: ...  # noqa: A002
    def export_audit(
        self,
        conversation_id: str,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        format: Literal["json", "jsonl"] = "json",  # noqa: A002
    ) -> bytes | None: ...
    def import_audit(
        self, source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes], *, agent: str | None = None
    ) -> Conversation: ...
    def register_agent(
        self, name: str, conversation_id: str, *, state: Literal["idle", "running"] = "idle"
    ) -> AgentState: ...
    def agent(self, name: str) -> AgentState: ...
    def agents(self) -> list[AgentState]: ...
    def set_agent(
        self, name: str, *, state: Literal["idle", "running"] | None = None, encouragement: int | None = None
    ) -> None: ...
    def post(self, message: str | UserMessage, *, to: str | None = None, sender: str | None = None) -> Mail: ...
    def broadcast(
        self, message: str | UserMessage, *, to: Sequence[str] | None = None, sender: str | None = None
    ) -> Mail: ...
    def rest(self, name: str) -> bool: ...
    def mail(self, name: str) -> list[Mail]: ...
    def deliver(self, name: str) -> list[Entry]: ...
    def latest_broadcast(self, name: str | None = None) -> UserMessage | None: ...
    def mail_seq(self) -> int: ...
    def wait_mail(self, after: int, timeout: float) -> int: ...
    def close(self) -> None: ...


def open_store(url: str | os.PathLike[str] | None = None, **options: Any) -> SQLStore:
    """A store from a URL: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, a
    plain path (SQLite), or ``postgresql://user:password@host:port/db`` (and any libpq
    connection string; extra ``postgres``). ``None``: ``DEFAULT_URL``. ``options`` go to the
    store's constructor (``busy_timeout``, ``synchronous``, ``poll_interval``; ``min_size``,
    ``max_size``, ``timeout`` of the PostgreSQL pool)."""
    text = os.fspath(url) if url is not None else DEFAULT_URL
    if text.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")) or (
        "=" in text and not text.startswith("sqlite:")
    ):
        from .postgres import PostgresStore  # the optional psycopg, imported only when asked for

        return PostgresStore(text.replace("postgresql+psycopg://", "postgresql://", 1), **options)
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://")
        text = text.removeprefix("/") if not text.startswith("//") else text[1:]
        if not text:
            raise ValueError("a SQLite URL needs a path: sqlite:///msgwire.db")
    return SQLiteStore(Path(text), **options)


class AsyncStore:
    """The calls of a store as coroutines: ``await astore.append(...)``. Each runs in a thread
    of the store's own pool (sized like its connections), so the event loop never waits on
    the database. ``astore.store`` is the synchronous store underneath."""

    def __init__(self, store: SQLStore, *, threads: int = 8) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="msgwire-store")

    def _wrap(self, call: Callable[P, T]) -> Callable[P, Any]:
        @functools.wraps(call)
        async def run(*args: P.args, **kwargs: P.kwargs) -> T:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, functools.partial(call, *args, **kwargs))

        return run

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.store, name)
        if not callable(call) or name.startswith("_"):
            return call
        return self._wrap(call)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, self.store.close)
        self._pool.shutdown(wait=False)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def aopen_store(url: str | os.PathLike[str] | None = None, **options: Any) -> AsyncStore:
    """``open_store`` for asyncio (the schema check runs off the event loop)."""
    loop = asyncio.get_running_loop()
    store = await loop.run_in_executor(None, functools.partial(open_store, url, **options))
    return AsyncStore(store)
