"""What both stores do, written once: ``SQLStore`` holds every operation in portable SQL, and
``sqlite.py`` / ``postgres.py`` give it connections, transactions and a few dialect words.

Appends: one transaction per batch. It locks the conversation's head (SQLite: the database's
write lock from ``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE`` on the
conversation's row), seals each entry at the next ``seq`` chained to the stored head hash,
writes the entries, the message rows and the new head, and commits: ``seq`` is gap-free per
conversation and a batch is there entirely or not at all. A draft whose message id is already
stored (or whose entry id is) is a no-op that returns the stored entry, so an append retried
after a lost reply never duplicates anything.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any, Literal, Self, TypeVar

import msgspec

from msgwire import Message, Session, loads
from msgwire._ids import new_id, new_ids, now
from msgwire.errors import DecodeError, StoreError

from ..audit import GENESIS, AuditHeader, Committed, Draft, Entry, Parent, decode_entries, seal_draft
from ..conversation import Conversation, default_decision, message_key, state_before
from .rows import BadRow, kind_of
from .schema import SCHEMA_VERSION, Types, migrations

__all__ = ["ConversationInfo", "Cursor", "OnError", "SQLBase"]

_log = logging.getLogger("msgwire.harness.store")
T = TypeVar("T")

OnError = Literal["raise", "skip"] | Callable[[BadRow], None]
"""What a load does with a row it cannot decode: ``"raise"`` a ``DecodeError`` naming the
conversation and seq; ``"skip"`` it (logged as a warning on the ``msgwire.harness.store``
logger); or a callable, given each ``BadRow``, after which the row is skipped."""


class ConversationInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation as ``conversations()`` lists it (no entries read)."""

    id: str
    agent: str | None
    system_prompt: str | None
    mode: str | None
    branch: str
    parent: Parent | None
    created_at: dt.datetime
    updated_at: dt.datetime
    entries: int
    head: str
    metadata: dict[str, Any]


class Cursor:
    """One transaction's statements: ``rows`` / ``one`` / ``run`` / ``many`` over the driver's
    cursor, the SQL written with ``?`` placeholders (the dialect's replace them)."""

    def __init__(self, raw: Any, placeholder: Callable[[str], str]) -> None:
        self._raw = raw
        self._sql = placeholder

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._raw.execute(self._sql(sql), params)
        return list(self._raw.fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        self._raw.execute(self._sql(sql), params)
        row = self._raw.fetchone()
        return tuple(row) if row is not None else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._raw.execute(self._sql(sql), params)
        return int(self._raw.rowcount)

    def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        if params:
            self._raw.executemany(self._sql(sql), params)


class _Head(msgspec.Struct, kw_only=True):
    seq: int
    hash: str
    system_prompt: str | None
    mode: str | None
    modes: dict[str, str]
    branch: str


_modes_decoder = msgspec.json.Decoder(dict[str, str])
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])
_message_decoder = msgspec.json.Decoder(Message)
_HEAD = "head_seq, head_hash, system_prompt, mode, modes, branch"
_INSERT_ENTRY = (
    "INSERT INTO msgwire_entries (conversation_id, seq, id, message_id, decision, timestamp, body, hash, "
    "message_at, message_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_MESSAGE = (
    "INSERT INTO msgwire_messages (conversation_id, seq, id, kind, timestamp, data_json, state_seq) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE_MESSAGE = (
    "UPDATE msgwire_messages SET data_json = ?, state_seq = ?, timestamp = ? WHERE conversation_id = ? AND id = ?"
)
_ENTRY_ROWS = "SELECT seq, body, hash, timestamp FROM msgwire_entries WHERE conversation_id = ?"
_INFO = (
    "id, agent, system_prompt, mode, branch, parent_id, parent_entry, parent_hash, created_at, updated_at, "
    "head_seq, head_hash, metadata, modes"
)


class SQLBase:
    """The operations of a store over any SQL database (see ``msgwire.harness.store.Store``).

    A subclass gives: ``_transaction()`` (a context manager: a ``Cursor`` inside one
    transaction that takes the write lock), ``_transient(exc)`` (an error after which the
    transaction was rolled back and may be retried), ``_key`` / ``_unkey`` (an id to its
    column value and back), ``_time`` / ``_untime``, ``_in(n)`` (a placeholder list for
    ``IN``), ``_for_update`` and ``_message_sql`` (the message bytes inside an entry's body).
    """

    url: str
    types: Types
    _for_update = ""
    # the message rows of a conversation (all, or the last N), in order
    _all_json = "SELECT {column} FROM msgwire_messages WHERE conversation_id = ? ORDER BY seq"
    _last_json = (
        "SELECT {column} FROM (SELECT seq, data_json FROM msgwire_messages WHERE conversation_id = ? "
        "ORDER BY seq DESC LIMIT ?) recent ORDER BY seq"
    )
    _retries = 8

    # --- dialect hooks (subclasses) -----------------------------------------------------------

    def _transaction(self) -> contextlib.AbstractContextManager[Cursor]:
        raise NotImplementedError

    def _transient(self, exc: BaseException) -> bool:
        raise NotImplementedError

    def _db_errors(self) -> tuple[type[BaseException], ...]:
        raise NotImplementedError

    def _key(self, value: str) -> Any:
        return value

    def _unkey(self, value: Any) -> str:
        return str(value)

    def _time(self, value: dt.datetime) -> Any:
        return value.isoformat()

    def _untime(self, value: Any) -> dt.datetime:
        return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value)

    def _in(self, n: int) -> str:
        return "(" + ",".join("?" * n) + ")"

    def _message_sql(self, alias: str) -> str:
        raise NotImplementedError

    def _json_bytes(self, column: str) -> str:
        """A text column read as bytes when the driver makes that cheaper (SQLite)."""
        return column

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- running a transaction ----------------------------------------------------------------

    def _run(self, work: Callable[[Cursor], T]) -> T:
        """``work`` in one transaction, retried (with a growing pause) when the database
        rolled it back for contention, so "database is locked" never reaches the caller."""
        delay = 0.005
        for attempt in range(self._retries + 1):
            try:
                with self._transaction() as cur:
                    return work(cur)
            except self._db_errors() as exc:
                if attempt < self._retries and self._transient(exc):
                    time.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                raise StoreError(f"{type(exc).__name__}: {exc}") from exc
        raise AssertionError("unreachable")

    def _migrate(self, cur: Cursor, current: int) -> None:
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the database's msgwire schema is version {current}; this msgwire knows "
                f"{SCHEMA_VERSION}: upgrade msgwire"
            )
        for version, statements in migrations(self.types, current):
            for statement in statements:
                cur.run(statement)
            cur.run("INSERT INTO msgwire_schema (version, applied_at) VALUES (?, ?)", (version, self._time(now())))

    # --- conversations ------------------------------------------------------------------------

    def create(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the conversation id, as Conversation's
        agent: str | None = None,
        system_prompt: str | None = None,
        mode: str | None = None,
        modes: Mapping[str, str] | None = None,
        branch: str = "main",
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation:
        """A new, empty conversation, stored and bound (``StoreError`` if the id is taken)."""
        conversation = Conversation(
            id=id, system_prompt=system_prompt, mode=mode, modes=modes, branch=branch, metadata=metadata
        )
        self._run(lambda cur: self._insert_header(cur, conversation.header(), agent, exists="fail"))
        conversation.bind(self)
        return conversation

    def bind(self, conversation: Conversation, *, agent: str | None = None) -> Conversation:
        """Store a conversation made in memory (its header and every entry, as they are, in one
        transaction) and bind it, so that every later ``add`` is stored too. A conversation
        already stored under its id takes what is stored since (``StoreError`` if the two
        differ in an entry both have)."""
        header, entries = conversation.header(), conversation.entries

        def work(cur: Cursor) -> None:
            created = self._insert_header(cur, header, agent, exists="keep")
            if created:
                self._insert_entries(cur, header.conversation_id, entries)
                return
            stored = cur.one(
                "SELECT head_seq FROM msgwire_conversations WHERE id = ?", (self._key(header.conversation_id),)
            )
            head = stored[0] if stored else -1
            if entries:
                last = min(head, entries[-1].seq)
                row = cur.one(
                    "SELECT hash FROM msgwire_entries WHERE conversation_id = ? AND seq = ?",
                    (self._key(header.conversation_id), last),
                )
                if last >= 0 and (row is None or row[0] != entries[last].hash):
                    raise StoreError(
                        f"conversation {header.conversation_id!r} is stored with another history "
                        f"(entry seq {last} differs)"
                    )
                if entries[-1].seq > head:
                    self._insert_entries(cur, header.conversation_id, entries[head + 1 :])

        self._run(work)
        conversation.bind(self)
        conversation.sync()
        return conversation

    def open(self, conversation_id: str, *, on_error: OnError = "raise") -> Conversation:
        """The stored conversation, bound: every ``add`` is stored, ``sync()`` takes what other
        writers appended."""
        conversation = self.load(conversation_id, on_error=on_error)
        conversation.bind(self)
        return conversation

    def load(self, conversation_id: str, *, on_error: OnError = "raise") -> Conversation:
        """The stored conversation, whole (header and every entry), not bound."""
        key = self._key(conversation_id)

        def work(cur: Cursor) -> tuple[tuple[Any, ...] | None, list[tuple[Any, ...]]]:
            info = cur.one(f"SELECT {_INFO} FROM msgwire_conversations WHERE id = ?", (key,))
            if info is None:
                return None, []
            rows = cur.rows(_ENTRY_ROWS + " ORDER BY seq", (key,))
            return info, rows

        info, rows = self._run(work)
        if info is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        header = self._header(info)
        entries = self._entries(conversation_id, rows, on_error)
        return Conversation.restore(header, entries)

    def info(self, conversation_id: str) -> ConversationInfo:
        """The header and size of one conversation (``KeyError`` if none)."""
        row = self._run(
            lambda cur: cur.one(
                f"SELECT {_INFO} FROM msgwire_conversations WHERE id = ?", (self._key(conversation_id),)
            )
        )
        if row is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        return self._info(row)

    def conversations(self, *, agent: str | None = None) -> list[ConversationInfo]:
        """Every stored conversation (``agent``: that agent's), oldest first."""
        sql = f"SELECT {_INFO} FROM msgwire_conversations"
        params: tuple[Any, ...] = ()
        if agent is not None:
            sql += " WHERE agent = ?"
            params = (self._key(agent),)
        rows = self._run(lambda cur: cur.rows(sql + " ORDER BY created_at, id", params))
        return [self._info(r) for r in rows]

    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation and all its rows; ``False`` if there was none. Its forks stay
        (their ``parent`` still names it)."""
        key = self._key(conversation_id)

        def work(cur: Cursor) -> bool:
            for table in ("msgwire_agents", "msgwire_messages", "msgwire_entries"):
                column = "conversation_id"
                cur.run(f"DELETE FROM {table} WHERE {column} = ?", (key,))
            return cur.run("DELETE FROM msgwire_conversations WHERE id = ?", (key,)) > 0

        return self._run(work)

    # --- messages -----------------------------------------------------------------------------

    def messages(self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise") -> list[Message]:
        """The messages at their latest state, in the order they were first appended: all of
        them, or the ``last`` N (one query, no entry read)."""
        key = self._key(conversation_id)
        if last is not None and last < 0:
            raise ValueError(f"last must be at least 0, got {last}")

        column = self._json_bytes("data_json")

        def work(cur: Cursor) -> list[tuple[Any, ...]] | None:
            if cur.one("SELECT 1 FROM msgwire_conversations WHERE id = ?", (key,)) is None:
                return None
            if last is None:
                return cur.rows(self._all_json.format(column=column), (key,))
            return cur.rows(self._last_json.format(column=column), (key, last))

        rows = self._run(work)
        if rows is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        # One typed decode per row: joining 100,000 rows into one array first costs more than
        # the per-call overhead it saves (a 120 MB copy: 0.78 -> 0.57 s for 100k messages).
        # Any failure (an unknown message type, a bad row) goes to the slow path, which says which.
        decode = _message_decoder.decode
        try:
            return [decode(r[0]) for r in rows]
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            pass
        return self._messages_slow(conversation_id, last, on_error)

    def _messages_slow(self, conversation_id: str, last: int | None, on_error: OnError) -> list[Message]:
        key = self._key(conversation_id)
        sql = "SELECT seq, data_json, timestamp FROM msgwire_messages WHERE conversation_id = ? ORDER BY seq"
        rows = self._run(lambda cur: cur.rows(sql, (key,)))
        if last is not None:
            rows = rows[len(rows) - last :] if last else []
        found: list[Message] = []
        for seq, data, stamp in rows:
            try:
                found.append(loads(data, type=Message))
            except DecodeError as exc:
                if on_error == "raise":
                    error = DecodeError(f"conversation {conversation_id!r}, seq {seq}: {exc}", path=exc.path)
                    error.conversation_id, error.seq = conversation_id, seq  # type: ignore[attr-defined]
                    raise error from None
                when = self._untime(stamp) if stamp is not None else None
                bad = BadRow(
                    conversation_id=conversation_id,
                    seq=seq,
                    table="messages",
                    error=str(exc),
                    data=data.encode(),
                    timestamp=when,
                )
                _report(bad, on_error)
        return found

    def session(self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise") -> Session:
        """A ``msgwire.Session`` of the stored conversation (its latest states; ``last``: the
        most recent N messages)."""
        info = self.info(conversation_id)
        return Session(
            id=info.id,
            system_prompt=info.system_prompt,
            created_at=info.created_at,
            updated_at=info.updated_at,
            metadata=info.metadata,
            messages=self.messages(conversation_id, last=last, on_error=on_error),
        )

    def append(
        self,
        conversation_id: str,
        messages: Message | Sequence[Message],
        *,
        decision: str | None = None,
        audit: Mapping[str, Any] | None = None,
    ) -> list[Entry]:
        """Append messages in one transaction (all or none); returns their entries. A message
        whose id is already stored is not appended again: its stored entry is returned."""
        batch = [messages] if not isinstance(messages, Sequence) else list(messages)
        stamp = now()
        drafts = [
            Draft(
                id=entry_id,
                timestamp=stamp,
                message=m,
                decision=decision if decision is not None else default_decision(m),
                audit=dict(audit) if audit else {},
            )
            for m, entry_id in zip(batch, new_ids(len(batch)), strict=True)
        ]
        return self._run(lambda cur: self._commit(cur, conversation_id, drafts, None, fresh=True)).results

    def update(
        self, conversation_id: str, message: Message, decision: str, audit: Mapping[str, Any] | None = None
    ) -> Entry:
        """A new state of a stored message (an approval decided later): a new entry, and the
        message's row takes the new state (``KeyError`` if no such message)."""
        draft = Draft(
            id=new_id(), timestamp=now(), message=message, decision=decision, audit=dict(audit or {}), how="update"
        )
        return self._run(lambda cur: self._commit(cur, conversation_id, [draft], None, fresh=True)).results[0]

    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None) -> Committed:
        """Seal and store drafts in one transaction (see the module documentation); the
        ``EntryLedger`` of a bound ``Conversation``."""
        return self._run(lambda cur: self._commit(cur, conversation_id, drafts, after))

    def since(self, conversation_id: str, after: int) -> list[Entry]:
        """The stored entries with a seq above ``after``."""
        key = self._key(conversation_id)
        rows = self._run(
            lambda cur: cur.rows(
                _ENTRY_ROWS + " AND seq > ? ORDER BY seq",
                (key, after),
            )
        )
        return self._entries(conversation_id, rows, "raise")

    def _commit(
        self, cur: Cursor, conversation_id: str, drafts: Sequence[Draft], after: int | None, *, fresh: bool = False
    ) -> Committed:
        key = self._key(conversation_id)
        head = self._lock_head(cur, conversation_id)
        first_head = head.seq
        message_keys = [message_key(d.message) or d.id for d in drafts]
        known = self._known_messages(cur, key, message_keys)
        # Drafts made here have ids just made: only others' drafts may be a retry of stored ones.
        known_entries = {} if fresh else self._known_entries(cur, key, [d.id for d in drafts])
        results: list[Entry | int] = []
        entry_rows: list[tuple[Any, ...]] = []
        inserts: list[tuple[Any, ...]] = []
        updates: list[tuple[Any, ...]] = []
        seq, prev = head.seq, head.hash
        header_changed = False
        # a batch's drafts share one timestamp: each distinct one formatted once
        times = {stamp: self._time(stamp) for stamp in {d.timestamp for d in drafts}}
        for draft, mkey in zip(drafts, message_keys, strict=True):
            if draft.id in known_entries:
                results.append(known_entries[draft.id])
                continue
            kind = kind_of(draft.message)
            stored = known.get(mkey)
            if stored is not None and draft.how == "new":
                results.append(stored[1])  # already there: the entry that added it
                continue
            if stored is None and draft.how == "update":
                raise KeyError(f"no message with id {mkey!r} in conversation {conversation_id!r}")
            if stored is not None and stored[0] != kind:
                raise TypeError(f"message {mkey!r} is a {stored[0]} message, not a {kind} message")
            seq += 1
            sealed = seal_draft(draft, seq=seq, prev=prev)
            prev = sealed.entry.hash
            entry_rows.append(
                (
                    key,
                    seq,
                    self._key(draft.id),
                    self._key(mkey),
                    self._key(draft.decision),
                    times[draft.timestamp],
                    sealed.body,
                    prev,
                    sealed.message_at,
                    sealed.message_len,
                )
            )
            data = sealed.body[sealed.message_at : sealed.message_at + sealed.message_len].decode()
            stamp = getattr(draft.message, "timestamp", None)
            when = self._time(stamp) if isinstance(stamp, dt.datetime) else None
            if stored is None:
                inserts.append((key, seq, self._key(mkey), kind, when, data, seq))
                known[mkey] = (kind, seq)
            else:
                updates.append((data, seq, when, key, self._key(mkey)))
            header_changed = _apply_header(head, sealed.entry) or header_changed
            results.append(sealed.entry)
        cur.many(
            _INSERT_ENTRY,
            entry_rows,
        )
        cur.many(
            _INSERT_MESSAGE,
            inserts,
        )
        cur.many(
            _UPDATE_MESSAGE,
            updates,
        )
        if entry_rows:
            sets, params = "head_seq = ?, head_hash = ?, updated_at = ?", [seq, prev, self._time(now())]
            if header_changed:
                sets += ", system_prompt = ?, mode = ?, branch = ?"
                params += [head.system_prompt, head.mode, head.branch]
            cur.run(f"UPDATE msgwire_conversations SET {sets} WHERE id = ?", (*params, key))
        # Entries to read back: other writers' since `after`, and those of no-op drafts.
        wanted = {r for r in results if isinstance(r, int)}
        stored_entries: dict[int, Entry] = {}
        if after is not None and after < first_head:
            wanted.update(range(after + 1, first_head + 1))
        if wanted:
            rows = cur.rows(
                _ENTRY_ROWS + " AND seq IN " + self._in(len(wanted)),
                (key, *sorted(wanted)),
            )
            stored_entries = {e.seq: e for e in self._entries(conversation_id, rows, "raise")}
        new = [r for r in results if isinstance(r, Entry)]
        catch_up = [stored_entries[s] for s in range(after + 1, first_head + 1)] if after is not None else []
        return Committed(
            entries=catch_up + new, results=[stored_entries[r] if isinstance(r, int) else r for r in results]
        )

    def _lock_head(self, cur: Cursor, conversation_id: str) -> _Head:
        row = cur.one(
            f"SELECT {_HEAD} FROM msgwire_conversations WHERE id = ?{self._for_update}", (self._key(conversation_id),)
        )
        if row is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        return _Head(
            seq=row[0],
            hash=row[1],
            system_prompt=row[2],
            mode=row[3],
            modes=_modes_decoder.decode(row[4]),
            branch=row[5],
        )

    def _known_messages(self, cur: Cursor, key: Any, ids: list[str]) -> dict[str, tuple[str, int]]:
        """Stored messages among ``ids``: id -> (kind, the seq of the entry that added it)."""
        unique = list(dict.fromkeys(ids))
        rows = cur.rows(
            "SELECT id, kind, seq FROM msgwire_messages WHERE conversation_id = ? AND id IN " + self._in(len(unique)),
            (key, *(self._key(i) for i in unique)),
        )
        return {self._unkey(r[0]): (r[1], r[2]) for r in rows}

    def _known_entries(self, cur: Cursor, key: Any, ids: list[str]) -> dict[str, int]:
        rows = cur.rows(
            "SELECT id, seq FROM msgwire_entries WHERE conversation_id = ? AND id IN " + self._in(len(ids)),
            (key, *(self._key(i) for i in ids)),
        )
        return {self._unkey(r[0]): r[1] for r in rows}

    # --- fork ---------------------------------------------------------------------------------

    def fork(self, conversation_id: str, at: str | None = None, *, id: str | None = None) -> str:  # noqa: A002
        """Copy a conversation up to and including entry ``at`` (all of it for ``None``) into a
        new one, in SQL: the same entries (ids, seq, hashes), each message at its state as of
        ``at``, the mode, branch and system prompt as they stood there, ``parent`` recorded
        (as ``Conversation.fork`` does). Returns the new id."""
        new = id or new_id()
        key, new_key = self._key(conversation_id), self._key(new)

        def work(cur: Cursor) -> str:
            info = cur.one(f"SELECT {_INFO} FROM msgwire_conversations WHERE id = ?", (key,))
            if info is None:
                raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
            header = self._header(info)
            head_seq = info[10]
            if at is None:
                upto = head_seq
            else:
                row = cur.one(
                    "SELECT seq FROM msgwire_entries WHERE conversation_id = ? AND id = ?", (key, self._key(at))
                )
                if row is None:
                    raise KeyError(f"no entry {at!r} in conversation {conversation_id!r}")
                upto = row[0]
            last = cur.one("SELECT id, hash FROM msgwire_entries WHERE conversation_id = ? AND seq = ?", (key, upto))
            # The header as it stood at `upto`: what the first later mode / branch change says was old.
            later = cur.rows(
                _ENTRY_ROWS + " AND seq > ? AND seq <= ? AND decision IN (?, ?) ORDER BY seq",
                (key, upto, head_seq, self._key("mode_change"), self._key("branch_switch")),
            )
            header.mode, header.system_prompt, header.branch = state_before(
                self._entries(conversation_id, later, "raise"), header
            )
            header.conversation_id, header.created_at = new, now()
            header.parent = Parent(
                conversation_id=conversation_id,
                entry_id=self._unkey(last[0]) if last else None,
                hash=last[1] if last else None,
            )
            self._insert_header(cur, header, None, exists="fail", head=(upto, last[1] if last else GENESIS))
            cur.run(
                "INSERT INTO msgwire_entries (conversation_id, seq, id, message_id, decision, timestamp, body, hash, "
                "message_at, message_len) SELECT ?, seq, id, message_id, decision, timestamp, body, hash, message_at, "
                "message_len FROM msgwire_entries WHERE conversation_id = ? AND seq <= ?",
                (new_key, key, upto),
            )
            # Each message at its last state up to `upto`, its row from the entry that set it.
            cur.run(
                "INSERT INTO msgwire_messages (conversation_id, seq, id, kind, timestamp, data_json, state_seq) "
                f"SELECT ?, m.seq, m.id, m.kind, m.timestamp, CASE WHEN m.state_seq <= ? THEN m.data_json ELSE "
                f"(SELECT {self._message_sql('e')} FROM msgwire_entries e WHERE e.conversation_id = m.conversation_id "
                "AND e.message_id = m.id AND e.seq <= ? ORDER BY e.seq DESC LIMIT 1) END, "
                "CASE WHEN m.state_seq <= ? THEN m.state_seq ELSE (SELECT max(e.seq) FROM msgwire_entries e "
                "WHERE e.conversation_id = m.conversation_id AND e.message_id = m.id AND e.seq <= ?) END "
                "FROM msgwire_messages m WHERE m.conversation_id = ? AND m.seq <= ?",
                (new_key, upto, upto, upto, upto, key, upto),
            )
            return new

        return self._run(work)

    # --- bulk reading (exports) ---------------------------------------------------------------

    def iter_rows(
        self, table: Literal["messages", "entries"], *, conversation_id: str | None = None, batch: int = 10_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of ``table`` (of one conversation, or all), in (conversation, seq) order,
        ``batch`` rows at a time, each transaction short: ``messages`` rows are
        ``(conversation_id, seq, id, kind, timestamp, data_json)``, ``entries`` rows
        ``(conversation_id, seq, id, message_id, decision, timestamp, hash, body)``, ids as
        strings and bodies as text."""
        columns = {
            "messages": "conversation_id, seq, id, kind, timestamp, data_json",
            "entries": "conversation_id, seq, id, message_id, decision, timestamp, hash, body",
        }[table]
        where, params = ("conversation_id = ? AND ", [self._key(conversation_id)]) if conversation_id else ("", [])
        last: tuple[Any, int] | None = None
        while True:
            page = f"SELECT {columns} FROM msgwire_{table} WHERE {where}"
            args: list[Any] = list(params)
            if last is not None:
                page += "(conversation_id > ? OR (conversation_id = ? AND seq > ?))"
                args += [last[0], last[0], last[1]]
            else:
                page += "1 = 1"
            page += " ORDER BY conversation_id, seq LIMIT ?"
            rows = self._run(functools.partial(_page, sql=page, params=(*args, batch)))
            if not rows:
                return
            last = (rows[-1][0], rows[-1][1])
            yield [self._export_row(table, r) for r in rows]

    def _export_row(self, table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
        if table == "messages":
            cid, seq, mid, kind, stamp, data = row
            return (self._unkey(cid), seq, self._unkey(mid), kind, None if stamp is None else self._untime(stamp), data)
        cid, seq, eid, mid, decision, stamp, digest, body = row
        return (
            self._unkey(cid),
            seq,
            self._unkey(eid),
            self._unkey(mid),
            self._unkey(decision),
            self._untime(stamp),
            digest,
            bytes(body).decode(),
        )

    # --- audit export and import --------------------------------------------------------------

    def export_audit(
        self,
        conversation_id: str,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        format: Literal["json", "jsonl"] = "json",  # noqa: A002
    ) -> bytes | None:
        """The audit JSON of ``Conversation.export_audit`` for a stored conversation."""
        return self.load(conversation_id).export_audit(dest, format=format)

    def import_audit(
        self,
        source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes],
        *,
        agent: str | None = None,
    ) -> Conversation:
        """Store an export (``Conversation.load_audit`` reads it), entries as they are, and
        return it bound. Importing the same export again changes nothing."""
        return self.bind(Conversation.load_audit(source), agent=agent)

    # --- rows <-> objects ---------------------------------------------------------------------

    def _insert_header(
        self,
        cur: Cursor,
        header: AuditHeader,
        agent: str | None,
        *,
        exists: Literal["fail", "keep"],
        head: tuple[int, str] = (-1, GENESIS),
    ) -> bool:
        key = self._key(header.conversation_id)
        if cur.one("SELECT 1 FROM msgwire_conversations WHERE id = ?", (key,)) is not None:
            if exists == "keep":
                return False
            raise StoreError(f"conversation {header.conversation_id!r} already exists in {self.url}")
        parent = header.parent
        created = header.created_at or now()
        cur.run(
            f"INSERT INTO msgwire_conversations ({_INFO}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                None if agent is None else self._key(agent),
                header.system_prompt,
                header.mode,
                header.branch,
                None if parent is None else self._key(parent.conversation_id),
                None if parent is None or parent.entry_id is None else self._key(parent.entry_id),
                None if parent is None else parent.hash,
                self._time(created),
                self._time(created),
                head[0],
                head[1],
                msgspec.json.encode(header.metadata).decode(),
                msgspec.json.encode(header.modes).decode(),
            ),
        )
        return True

    def _insert_entries(self, cur: Cursor, conversation_id: str, entries: Sequence[Entry]) -> None:
        """Store sealed entries as they are (an import or a conversation made in memory)."""
        if not entries:
            return
        head = self._lock_head(cur, conversation_id)
        key = self._key(conversation_id)
        known = self._known_messages(cur, key, [message_key(e.message) or e.id for e in entries])
        rows, inserts, updates = [], [], []
        for e in entries:
            sealed = seal_draft(
                Draft(id=e.id, timestamp=e.timestamp, message=e.message, decision=e.decision, audit=e.audit),
                seq=e.seq,
                prev=GENESIS,  # only the body is used: the stored hash is the entry's own
            )
            mkey = message_key(e.message) or e.id
            rows.append(
                (
                    key,
                    e.seq,
                    self._key(e.id),
                    self._key(mkey),
                    self._key(e.decision),
                    self._time(e.timestamp),
                    sealed.body,
                    e.hash,
                    sealed.message_at,
                    sealed.message_len,
                )
            )
            data = sealed.body[sealed.message_at : sealed.message_at + sealed.message_len].decode()
            stamp = getattr(e.message, "timestamp", None)
            when = self._time(stamp) if isinstance(stamp, dt.datetime) else None
            if mkey in known:
                updates.append((data, e.seq, when, key, self._key(mkey)))
            else:
                known[mkey] = (kind_of(e.message), e.seq)
                inserts.append((key, e.seq, self._key(mkey), kind_of(e.message), when, data, e.seq))
        cur.many(
            _INSERT_ENTRY,
            rows,
        )
        cur.many(
            _INSERT_MESSAGE,
            inserts,
        )
        cur.many(
            _UPDATE_MESSAGE,
            updates,
        )
        last = entries[-1]
        if last.seq > head.seq:
            cur.run(
                "UPDATE msgwire_conversations SET head_seq = ?, head_hash = ?, updated_at = ? WHERE id = ?",
                (last.seq, last.hash, self._time(last.timestamp), key),
            )

    def _entries(self, conversation_id: str, rows: Sequence[tuple[Any, ...]], on_error: OnError) -> list[Entry]:
        """Entries from ``(seq, body, hash, timestamp)`` rows: one decode, or row by row to
        name (or skip) the bad ones."""
        pairs = [(bytes(r[1]), r[2]) for r in rows]
        try:
            return decode_entries(pairs)
        except DecodeError:
            pass
        found: list[Entry] = []
        for (seq, _, _, stamp), pair in zip(rows, pairs, strict=True):
            try:
                found += decode_entries([pair], where=[f"conversation {conversation_id!r} entry seq {seq}"])
            except DecodeError as exc:
                error = DecodeError(f"conversation {conversation_id!r}, seq {seq}: {exc}", path=exc.path)
                error.conversation_id, error.seq = conversation_id, seq  # type: ignore[attr-defined]
                if on_error == "raise":
                    raise error from None
                bad = BadRow(
                    conversation_id=conversation_id,
                    seq=seq,
                    table="entries",
                    error=str(exc),
                    data=pair[0],
                    timestamp=self._untime(stamp),
                )
                _report(bad, on_error)
        return found

    def _header(self, row: tuple[Any, ...]) -> AuditHeader:
        info = self._info(row)
        return AuditHeader(
            conversation_id=info.id,
            created_at=info.created_at,
            system_prompt=info.system_prompt,
            mode=info.mode,
            modes=_modes_decoder.decode(row[13]),
            branch=info.branch,
            parent=info.parent,
            metadata=info.metadata,
        )

    def _info(self, row: tuple[Any, ...]) -> ConversationInfo:
        (
            cid,
            agent,
            prompt,
            mode,
            branch,
            parent_id,
            parent_entry,
            parent_hash,
            created,
            updated,
            head_seq,
            head_hash,
            meta,
        ) = row[:13]
        parent = None
        if parent_id is not None:
            parent = Parent(
                conversation_id=self._unkey(parent_id),
                entry_id=None if parent_entry is None else self._unkey(parent_entry),
                hash=parent_hash,
            )
        return ConversationInfo(
            id=self._unkey(cid),
            agent=None if agent is None else self._unkey(agent),
            system_prompt=prompt,
            mode=mode,
            branch=branch,
            parent=parent,
            created_at=self._untime(created),
            updated_at=self._untime(updated),
            entries=head_seq + 1,
            head=head_hash,
            metadata=_metadata_decoder.decode(meta),
        )


def _apply_header(head: _Head, entry: Entry) -> bool:
    """A mode change or branch switch sealed into the trail, applied to the stored header by
    the rule ``Conversation`` follows; whether anything changed."""
    message = entry.message
    control = getattr(message, "control", None)
    if control not in ("mode_change", "branch_switch"):
        return False
    new = message.params.get("new")  # type: ignore[union-attr]
    if not isinstance(new, str):
        return False
    if control == "branch_switch":
        head.branch = new
        return True
    head.mode = new
    recorded = entry.audit.get("system_prompt")
    if isinstance(recorded, dict) and (recorded.get("new") is None or isinstance(recorded.get("new"), str)):
        head.system_prompt = recorded.get("new")
    else:
        head.system_prompt = head.modes.get(new, head.system_prompt)
    return True


def _page(cur: Cursor, *, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return cur.rows(sql, params)


def _report(bad: BadRow, on_error: OnError) -> None:
    if on_error == "skip":
        _log.warning(
            "skipped a bad %s row of conversation %r at seq %d: %s", bad.table, bad.conversation_id, bad.seq, bad.error
        )
    elif callable(on_error):
        on_error(bad)
