"""The peers' stores at msgwire's durability, and the floor of a SQLite store, shared by the
store benches (``test_store.py``, ``store_interleaved.py``)."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import msgspec
from agents.memory.sqlite_session import SQLiteSession

import msgwire
from msgwire import Message


class NormalSyncSession(SQLiteSession):
    """openai-agents' SQLiteSession at the durability msgwire runs with (WAL, synchronous=NORMAL)."""

    @staticmethod
    def _configure_connection(conn: sqlite3.Connection) -> None:
        SQLiteSession._configure_connection(conn)
        conn.execute("PRAGMA synchronous=NORMAL")


class SQLiteFloor:
    """The least any SQLite store of these messages does: one row per message (the conversation,
    ``seq`` and the message's canonical bytes, keyed by both), written in one ``BEGIN
    IMMEDIATE`` transaction at the same durability (WAL, ``synchronous=NORMAL``), read back in
    ``seq`` order and decoded into msgwire's typed Structs. No audit trail, no idempotency, no
    head: what 5x the faster peer has to fit under."""

    def __init__(self, path: Path, messages: list[Message], base: int) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(
            "CREATE TABLE rows (conversation_id TEXT, seq INTEGER, data BLOB, PRIMARY KEY (conversation_id, seq))"
        )
        self.seq = itertools.count()
        self.decode = msgspec.json.Decoder(Message).decode
        self.append(messages[:base])

    def append(self, batch: list[Message]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO rows VALUES ('c', ?, ?)", [(next(self.seq), msgwire.dumps(m)) for m in batch]
        )
        self.conn.execute("COMMIT")

    def load(self) -> list[Message]:
        rows = self.conn.execute("SELECT data FROM rows WHERE conversation_id = 'c' ORDER BY seq").fetchall()
        return [self.decode(r[0]) for r in rows]
