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

SCHEMA_VERSION = 5
"""The version this msgwire writes; a database with a later one is refused (``StoreError``)."""


@dataclass(frozen=True)
class Types:
    """Column types and a few words of one SQL dialect."""

    key: str  # an id: any string
    blob: str  # bytes kept as they are
    time: str  # a UTC timestamp
    serial: str  # an integer key the database assigns
    serial_reused: bool  # whether it assigns a deleted highest key again (SQLite's rowid without AUTOINCREMENT)
    keyed: str  # after a table of small rows stored in its primary key's order
    message_slice: str  # the message's bytes inside an entry's body ({e}: the entry's alias)
    text: str  # UTF-8 bytes as text ({}: the bytes)
    uncompressed: str  # a column's values kept whole, not compressed ({}: table, column); "" if they are

    def message_bytes(self, alias: str) -> str:
        """The message's own bytes (``msgwire.dumps``) inside the body of entry ``alias``."""
        return self.message_slice.format(e=alias)

    def message_sql(self, alias: str) -> str:
        """The same as text."""
        return self.text.format(self.message_bytes(alias))


SQLITE = Types(
    key="TEXT",
    blob="BLOB",
    time="TEXT",
    serial="INTEGER PRIMARY KEY",
    serial_reused=True,
    keyed=" WITHOUT ROWID",  # one B-tree, not a table and its primary key's index
    message_slice="substr({e}.body, {e}.message_at + 1, {e}.message_len)",
    text="CAST({} AS TEXT)",
    uncompressed="",  # SQLite compresses nothing
)
POSTGRES = Types(
    key="BYTEA",
    blob="BYTEA",
    time="TIMESTAMPTZ",
    serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    serial_reused=False,
    keyed="",
    message_slice="substring({e}.body from {e}.message_at + 1 for {e}.message_len)",
    text="convert_from({}, 'UTF8')",
    uncompressed="ALTER TABLE {} ALTER COLUMN {} SET STORAGE EXTERNAL",
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


def _v3(t: Types) -> list[str]:
    """An append writes less (issue 22): a message's bytes once, in its entry (the message row
    keeps where its latest state is: ``state_seq``; ``msgwire_messages`` is now a view with the
    columns it had), and two indexes fewer on the entries (their ids unique, and by message):
    what an append looks up is the message rows' primary key, what a fork or a retried draft
    looks up is read in one pass over the entries. The entries move to a table without the
    unique constraint (SQLite cannot drop one), their rows as they are."""
    entry_columns = "conversation_id, seq, id, message_id, decision, timestamp, body, hash, message_at, message_len"
    return [
        f"""CREATE TABLE msgwire_entries_v3 (
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
            CONSTRAINT msgwire_entries_seq PRIMARY KEY (conversation_id, seq)
        )""",
        f"INSERT INTO msgwire_entries_v3 ({entry_columns}) SELECT {entry_columns} FROM msgwire_entries",
        "DROP TABLE msgwire_entries",
        "ALTER TABLE msgwire_entries_v3 RENAME TO msgwire_entries",
        f"""CREATE TABLE msgwire_message_rows (
            conversation_id {t.key} NOT NULL REFERENCES msgwire_conversations (id) ON DELETE CASCADE,
            id {t.key} NOT NULL,
            seq BIGINT NOT NULL,
            kind TEXT NOT NULL,
            timestamp {t.time},
            state_seq BIGINT NOT NULL,
            CONSTRAINT msgwire_message_rows_id PRIMARY KEY (conversation_id, id)
        ){t.keyed}""",
        "INSERT INTO msgwire_message_rows (conversation_id, id, seq, kind, timestamp, state_seq) "
        "SELECT conversation_id, id, seq, kind, timestamp, state_seq FROM msgwire_messages",
        "DROP TABLE msgwire_messages",
        f"""CREATE VIEW msgwire_messages AS
            SELECT m.conversation_id AS conversation_id, m.seq AS seq, m.id AS id, m.kind AS kind,
                m.timestamp AS timestamp, {t.message_sql("e")} AS data_json, m.state_seq AS state_seq
            FROM msgwire_message_rows m
            JOIN msgwire_entries e ON e.conversation_id = m.conversation_id AND e.seq = m.state_seq""",
    ]


def _v4(t: Types) -> list[str]:
    """Entry bodies are kept uncompressed (PostgreSQL; SQLite compresses nothing): loading a
    conversation slices each message out of its entry's body, and a body over about 2 KB was
    compressed (pglz), so every load decompressed it again. The query that loads 100,000
    messages: 658-790 -> 562-618 ms (lz4 compression measured alike, 590 ms, but not every
    server is built with it). New rows only: the rows already stored stay as they are."""
    return [t.uncompressed.format("msgwire_entries", "body")] if t.uncompressed else []


def _v5(t: Types) -> list[str]:
    """Mail that expires, and mail that is deleted (issue 27: a deleted swarm's broadcast drove
    a new agent without end): ``expires_at`` (NULL: never), indexed for the deletion of expired
    mail each post makes. A mail's seq must then never be given twice, since an agent's
    ``mail_seen`` is one (a new mail under a seq it has seen would never reach it): PostgreSQL's
    identity never gives one twice, SQLite's ``INTEGER PRIMARY KEY`` gives the highest again
    once it is deleted, so SQLite's mail table is made again with ``AUTOINCREMENT``, its rows
    (and their seqs) as they are."""
    if not t.serial_reused:
        return [
            f"ALTER TABLE msgwire_mail ADD COLUMN expires_at {t.time}",
            "CREATE INDEX msgwire_mail_expires ON msgwire_mail (expires_at)",
        ]
    columns = "seq, kind, sender, target, created_at, message_id, data_json"
    return [
        f"""CREATE TABLE msgwire_mail_v5 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('broadcast', 'direct')),
            sender {t.key},
            target {t.key},
            created_at {t.time} NOT NULL,
            message_id {t.key} NOT NULL,
            data_json TEXT NOT NULL,
            expires_at {t.time}
        )""",
        f"INSERT INTO msgwire_mail_v5 ({columns}) SELECT {columns} FROM msgwire_mail",
        "DROP TABLE msgwire_mail",
        "ALTER TABLE msgwire_mail_v5 RENAME TO msgwire_mail",
        "CREATE INDEX msgwire_mail_kind ON msgwire_mail (kind, seq)",
        "CREATE INDEX msgwire_mail_target ON msgwire_mail (target, seq)",
        "CREATE INDEX msgwire_mail_expires ON msgwire_mail (expires_at)",
    ]


MIGRATIONS = {1: _v1, 2: _v2, 3: _v3, 4: _v4, 5: _v5}
"""Version -> the statements that bring the schema from the version before to it."""


def migrations(types: Types, current: int) -> list[tuple[int, list[str]]]:
    """The migrations to apply to a database at version ``current`` (0: empty), in order."""
    return [(v, MIGRATIONS[v](types)) for v in sorted(MIGRATIONS) if v > current]
