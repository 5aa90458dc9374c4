"""The conversation store's writes: conversations made, bound, opened, deleted, appended to,
forked, exported and imported, over the append transaction of ``trail.py``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import IO, Any, Literal

from msgwire import Message
from msgwire.errors import StoreError
from msgwire.types import new_id, new_ids, now

from ..audit import Committed, Draft, Entry, default_decision, fork_header
from ..conversation import Conversation
from .base import Cursor, OnError
from .mailbox import delete_agents
from .reads import MessageReads
from .trail import ENTRY_ROWS, INFO

__all__ = ["ConversationTables"]


class ConversationTables(MessageReads):
    """Conversations in SQL (the ``ConversationStore`` calls; see ``msgwire.harness.store``)."""

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
        if not isinstance(conversation, Conversation):
            raise TypeError(f"bind takes a Conversation, got {type(conversation).__name__}")
        header, entries, head = conversation.header(), conversation.entries, conversation.head
        cid = header.conversation_id

        def work(cur: Cursor) -> None:
            if self._insert_header(cur, header, agent, exists="keep", origin=conversation.origin):
                self._insert_entries(cur, cid, entries, head)
                return
            stored = cur.one("SELECT head_seq FROM msgwire_conversations WHERE id = ?", (self._key(cid),))
            stored_head = stored[0] if stored else -1
            if entries:
                last = min(stored_head, entries[-1].seq)
                row = cur.one(
                    "SELECT hash FROM msgwire_entries WHERE conversation_id = ? AND seq = ?", (self._key(cid), last)
                )
                if last >= 0 and (row is None or row[0] != entries[last].hash):
                    raise StoreError(f"conversation {cid!r} is stored with another history (entry seq {last} differs)")
                if entries[-1].seq > stored_head:
                    self._insert_entries(cur, cid, entries[stored_head + 1 :], head)

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
            info = cur.one(f"SELECT {INFO} FROM msgwire_conversations WHERE id = ?", (key,))
            if info is None:
                return None, []
            return info, cur.rows(ENTRY_ROWS + " ORDER BY seq", (key,))

        info, rows = self._run(work)
        if info is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        self._remember_row(info)  # its next append may assume this head
        entries = self._entries(conversation_id, rows, on_error)
        return Conversation.restore(self._header(info), entries, origin=self._origin(info))

    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation and all its rows; ``False`` if there was none. Its forks stay
        (their ``parent`` still names it). The agent whose conversation it is goes too, with its
        mail: what is addressed to it and the direct messages it sent; the broadcasts it sent
        stay, and with a store's last agent every mail goes (``mailbox.delete_agents``)."""
        key = self._key(conversation_id)

        def work(cur: Cursor) -> bool:
            delete_agents(cur, key)
            for table in ("msgwire_message_rows", "msgwire_entries"):
                cur.run(f"DELETE FROM {table} WHERE conversation_id = ?", (key,))
            return cur.run("DELETE FROM msgwire_conversations WHERE id = ?", (key,)) > 0

        self._forget(conversation_id)
        return self._run(work)

    # --- appending ----------------------------------------------------------------------------

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
        for i, m in enumerate(batch):
            if not isinstance(getattr(m, "type", None), str) or isinstance(m, (str, bytes)):
                raise TypeError(
                    f"append takes msgwire messages (msgwire.user(...), ...); item {i} is {type(m).__name__}"
                )
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
        return self._append(conversation_id, drafts, None, fresh=True).results

    def update(
        self, conversation_id: str, message: Message, decision: str, audit: Mapping[str, Any] | None = None
    ) -> Entry:
        """A new state of a stored message (an approval decided later): a new entry, and the
        message's row takes the new state (``KeyError`` if no such message)."""
        draft = Draft(
            id=new_id(), timestamp=now(), message=message, decision=decision, audit=dict(audit or {}), how="update"
        )
        return self._append(conversation_id, [draft], None, fresh=True).results[0]

    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> Committed:
        """Seal and store drafts in one transaction (see ``trail.py``); the ``EntryLedger`` of a
        bound ``Conversation``."""
        return self._append(conversation_id, drafts, after, fresh=False)

    def since(self, conversation_id: str, after: int, /) -> list[Entry]:
        """The stored entries with a seq above ``after``."""
        key = self._key(conversation_id)
        rows = self._run(lambda cur: cur.rows(ENTRY_ROWS + " AND seq > ? ORDER BY seq", (key, after)))
        return self._entries(conversation_id, rows, "raise")

    # --- fork ---------------------------------------------------------------------------------

    def fork(self, conversation_id: str, at: str | None = None, *, id: str | None = None) -> str:  # noqa: A002
        """Copy a conversation up to and including entry ``at`` (all of it for ``None``) into a
        new one, in SQL: the same entries (ids, seq, hashes), each message at its state as of
        ``at``, the mode, branch and system prompt as they stood there, ``parent`` recorded and
        the fork's header chained after the entries it kept (as ``Conversation.fork`` does).
        Returns the new id."""
        new = id or new_id()
        key, new_key = self._key(conversation_id), self._key(new)

        def work(cur: Cursor) -> str:
            info = cur.one(f"SELECT {INFO} FROM msgwire_conversations WHERE id = ?", (key,))
            if info is None:
                raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
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
            last = self._entries(conversation_id, cur.rows(ENTRY_ROWS + " AND seq = ?", (key, upto)), "raise")
            # The header as it stood at `upto`: what the first later mode / branch change says was old.
            later = cur.rows(
                ENTRY_ROWS + " AND seq > ? AND seq <= ? AND decision IN (?, ?) ORDER BY seq",
                (key, upto, head_seq, self._key("mode_change"), self._key("branch_switch")),
            )
            header = fork_header(
                self._header(info),
                upto + 1,
                last[0] if last else None,
                self._entries(conversation_id, later, "raise"),
                new,
            )
            self._insert_header(cur, header, None, exists="fail", head=(upto, header.chain[-1].hash))
            cur.run(
                "INSERT INTO msgwire_entries (conversation_id, seq, id, message_id, decision, timestamp, body, hash, "
                "message_at, message_len) SELECT ?, seq, id, message_id, decision, timestamp, body, hash, message_at, "
                "message_len FROM msgwire_entries WHERE conversation_id = ? AND seq <= ?",
                (new_key, key, upto),
            )
            # Each message at its last state up to `upto`: the last of its entries kept (one pass
            # over them for the messages with a later state).
            cur.run(
                "INSERT INTO msgwire_message_rows (conversation_id, id, seq, kind, timestamp, state_seq) "
                "SELECT ?, m.id, m.seq, m.kind, m.timestamp, CASE WHEN m.state_seq <= ? THEN m.state_seq "
                "ELSE kept.seq END FROM msgwire_message_rows m LEFT JOIN (SELECT e.message_id, max(e.seq) AS seq "
                "FROM msgwire_entries e WHERE e.conversation_id = ? AND e.seq <= ? AND e.message_id IN "
                "(SELECT id FROM msgwire_message_rows WHERE conversation_id = ? AND state_seq > ?) "
                "GROUP BY e.message_id) kept ON kept.message_id = m.id WHERE m.conversation_id = ? AND m.seq <= ?",
                (new_key, upto, key, upto, key, upto, key, upto),
            )
            return new

        return self._run(work)

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
