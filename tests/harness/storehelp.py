"""What the store tests share: raw SQL on a store's database (to corrupt a row, or to look at
what is really stored), whatever the backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from msgwire.harness.store import SQLiteStore, SQLStore


def raw_sql(store: SQLStore, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement outside msgwire (``?`` placeholders) and commit; the rows it returns."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall()
    import psycopg

    from msgwire.harness.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.conninfo, autocommit=True) as conn:
        cur = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


def key(store: SQLStore, value: str) -> Any:
    """An id as the store's columns hold it (PostgreSQL: its UTF-8 bytes)."""
    return value if isinstance(store, SQLiteStore) else value.encode()
