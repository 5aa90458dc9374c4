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

Both stores pass one test suite (``tests/harness/store/``). What a store does comes in two
parts (``protocols.py``): ``ConversationStore`` (conversations, their trails and message rows)
and ``SwarmStore`` (a swarm's agents and mail); ``Store`` is both, as every backend is.
``AsyncStore`` makes the same calls for asyncio (each runs in a worker thread: neither sqlite3
nor a pooled psycopg connection blocks the event loop). ``open_store`` picks the class from the
URL.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
from pathlib import Path
from typing import Any, Literal

from .async_store import AsyncStore
from .base import ConversationInfo, OnError
from .header import HEADER_COLUMNS, HeaderColumn
from .mailbox import AgentState, AgentView, Mail
from .protocols import ConversationStore, Store, SwarmStore
from .redact import redacted, redacted_conninfo
from .rows import BadRow, from_rows, message_row, to_rows
from .sql import SQLStore
from .sqlite import SQLiteStore, sqlite_url

__all__ = [
    "DEFAULT_URL",
    "HEADER_COLUMNS",
    "AgentState",
    "AgentView",
    "AsyncStore",
    "BadRow",
    "ConversationInfo",
    "ConversationStore",
    "HeaderColumn",
    "Mail",
    "OnError",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "SwarmStore",
    "aopen_store",
    "from_rows",
    "message_row",
    "open_store",
    "redacted",
    "to_rows",
    "url_of",
]

DEFAULT_URL = "sqlite:///msgwire.db"
"""Where ``open_store()`` keeps things when given no URL: ``msgwire.db`` in the working directory."""

_POSTGRES = ("postgresql://", "postgres://", "postgresql+psycopg://")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def open_store(url: str | os.PathLike[str] | None = None, **options: Any) -> Store:
    """A store from a URL: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, a
    plain path (SQLite, whatever characters it holds), or ``postgresql://user:password@host:port/db``
    (``postgres://`` too; extra ``postgres``). ``None``: ``DEFAULT_URL``. Any other scheme is
    refused (``ValueError``). ``options`` go to the store's constructor (``busy_timeout``,
    ``synchronous``, ``poll_interval``; ``connect_timeout``, ``min_size``, ``max_size``,
    ``timeout``, ``max_idle`` of PostgreSQL; ``create=False`` for both: open a store that
    exists, else ``StoreNotFoundError``, nothing created). A PostgreSQL server that cannot be reached for
    ``connect_timeout`` seconds raises ``StoreUnavailableError``, any other refusal to connect
    ``StoreError`` at once, both with the server's words."""
    kind, target = _target(url)
    if kind == "postgres":
        from .postgres import PostgresStore  # the optional psycopg, imported only when asked for

        return PostgresStore(target, **options)
    return SQLiteStore(Path(target), **options)


def url_of(location: str | os.PathLike[str] | None = None) -> str:
    """The ``url`` of the store ``open_store(location)`` opens (its password left out), without
    opening it: to tell whether two locations name one store, or to show one."""
    kind, target = _target(location)
    return redacted_conninfo(target) if kind == "postgres" else sqlite_url(Path(target))


def _target(url: str | os.PathLike[str] | None) -> tuple[Literal["postgres", "sqlite"], str]:
    """Which store ``url`` names: a PostgreSQL connection string, or a SQLite file's path."""
    text = os.fspath(url) if url is not None else DEFAULT_URL
    if text.startswith(_POSTGRES):
        return "postgres", text.replace("postgresql+psycopg://", "postgresql://", 1)
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://")
        text = text.removeprefix("/") if not text.startswith("//") else text[1:]
        if not text:
            raise ValueError("a SQLite URL needs a path: sqlite:///msgwire.db")
    elif (scheme := _SCHEME.match(text)) is not None:
        raise ValueError(
            f"unsupported store URL scheme {scheme.group(1)!r} in {redacted(text)!r}: msgwire stores are "
            "sqlite:///path (or a plain path) and postgresql://user@host/db"
        )
    return "sqlite", text


async def aopen_store(url: str | os.PathLike[str] | None = None, **options: Any) -> AsyncStore:
    """``open_store`` for asyncio (the schema check runs off the event loop)."""
    loop = asyncio.get_running_loop()
    store = await loop.run_in_executor(None, functools.partial(open_store, url, **options))
    return AsyncStore(store)
