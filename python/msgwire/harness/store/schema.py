"""The schema both stores share (docs/store.md), as DDL for each SQL dialect, and its migrations.

Every table is prefixed ``msgwire_`` so a store can live in a database that holds other
things. ``msgwire_schema`` records each migration applied; a store creates and migrates the
schema on first use, under a lock (SQLite's write lock, a PostgreSQL advisory lock), so any
number of processes may open a new database at once. Ids (conversations, messages, entries,
agents) and an entry's decision are ``TEXT`` in SQLite and ``BYTEA`` (their UTF-8 bytes) in
PostgreSQL, whose text type cannot hold a NUL character: an id is any string, and so is the
decision (a ``system_control`` message's control, say).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Types", "migrations"]

SCHEMA_VERSION = 2
"""The version this msgwire writes; a database with a later one is refused (``StoreError``)."""


@dataclass(frozen=True)
class Types:
    """Column types of one SQL dialect."""

    key: str  # an id: any string
    blob: str  # bytes kept as they are
    time: str  # a UTC timestamp
    serial: str  # an integer key the database assigns


SQLITE = Types(key="TEXT", blob="BLOB", time="TEXT", serial="INTEGER PRIMARY KEY")
POSTGRES = Types(
    key="BYTEA", blob="BYTEA", time="TIMESTAMPTZ", serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
)


def _v1(t: Types) -> list[str]:
    return [
        f"""CREATE TABLE msgwire_conversations (
            id {t.key} PRIMARY KEY,
            agent {t.key},
            system_prompt TEXT,
            mode TEXT,
            modes TEXT NOT NULL,
            branch TEXT NOT NULL,
            parent_id {t.key},
            parent_entry {t.key},
            parent_hash TEXT,
            created_at {t.time} NOT NULL,
            updated_at {t.time} NOT NULL,
            metadata TEXT NOT NULL,
            head_seq BIGINT NOT NULL,
            head_hash TEXT NOT NULL
        )""",
        "CREATE INDEX msgwire_conversations_agent ON msgwire_conversations (agent)",
        f"""CREATE TABLE msgwire_entries (
            conversation_id {t.key} NOT NULL REFERENCES msgwire_conversations (id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            id {t.key} NOT NULL,
            message_id {t.key} NOT NULL,
            decision {t.key} NOT NULL,
            timestamp {t.time} NOT NULL,
            body {t.blob} NOT NULL,
            hash TEXT NOT NULL,
            message_at INTEGER NOT NULL,
            message_len INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, seq),
            UNIQUE (conversation_id, id)
        )""",
        "CREATE INDEX msgwire_entries_message ON msgwire_entries (conversation_id, message_id, seq)",
        f"""CREATE TABLE msgwire_messages (
            conversation_id {t.key} NOT NULL REFERENCES msgwire_conversations (id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            id {t.key} NOT NULL,
            kind TEXT NOT NULL,
            timestamp {t.time},
            data_json TEXT NOT NULL,
            state_seq BIGINT NOT NULL,
            PRIMARY KEY (conversation_id, id),
            UNIQUE (conversation_id, seq)
        )""",
        f"""CREATE TABLE msgwire_agents (
            name {t.key} PRIMARY KEY,
            conversation_id {t.key} NOT NULL REFERENCES msgwire_conversations (id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (state IN ('idle', 'running')),
            encouragement INTEGER NOT NULL,
            mail_from BIGINT NOT NULL,
            mail_seen BIGINT NOT NULL,
            updated_at {t.time} NOT NULL
        )""",
        f"""CREATE TABLE msgwire_mail (
            seq {t.serial},
            kind TEXT NOT NULL CHECK (kind IN ('broadcast', 'direct')),
            sender {t.key},
            target {t.key},
            created_at {t.time} NOT NULL,
            message_id {t.key} NOT NULL,
            data_json TEXT NOT NULL
        )""",
        "CREATE INDEX msgwire_mail_kind ON msgwire_mail (kind, seq)",
        "CREATE INDEX msgwire_mail_target ON msgwire_mail (target, seq)",
    ]


def _v2(t: Types) -> list[str]:
    """The header chained into the trail: a conversation's links (``audit.Link``) and the header
    as it was made (``audit.Origin``), JSON; NULL for a conversation made before (its trail
    reads as unchained in the header)."""
    return ["ALTER TABLE msgwire_conversations ADD COLUMN chain TEXT"]


MIGRATIONS = {1: _v1, 2: _v2}
"""Version -> the statements that bring the schema from the version before to it."""


def migrations(types: Types, current: int) -> list[tuple[int, list[str]]]:
    """The migrations to apply to a database at version ``current`` (0: empty), in order."""
    return [(v, MIGRATIONS[v](types)) for v in sorted(MIGRATIONS) if v > current]
