"""The peers' stores at msgwire's durability, shared by the store benches."""

from __future__ import annotations

import sqlite3

from agents.memory.sqlite_session import SQLiteSession


class NormalSyncSession(SQLiteSession):
    """openai-agents' SQLiteSession at the durability msgwire runs with (WAL, synchronous=NORMAL)."""

    @staticmethod
    def _configure_connection(conn: sqlite3.Connection) -> None:
        SQLiteSession._configure_connection(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
