"""The conversation store's writes: conversations made, bound, opened, deleted, appended to,
forked, exported and imported, over the append transaction of ``trail.py``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any, Literal, get_args

from msgwire import Message, UnknownMessage
from msgwire.errors import StoreError
from msgwire.types import new_id, new_ids, now

from ..audit import Committed, Draft, Entry, default_decision, fork_header
from ..conversation import Conversation
from .base import Cursor, OnError
from .header import HeaderColumn, StoredHeader, accepted, refuse
from .mailbox import delete_agents
from .reads import MessageReads
from .trail import ENTRY_ROWS, INFO

__all__ = ["ConversationTables"]

_MESSAGES = (*get_args(Message), UnknownMessage)  # the message classes (Message leaves UnknownMessage out at run time)


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

    def open(
        self, conversation_id: str, *, on_error: OnError = "raise", accept_header: Iterable[HeaderColumn] = ()
    ) -> Conversation:
        """The stored conversation, bound: every ``add`` is stored, ``sync()`` takes what other
        writers appended. Its header is checked as ``load`` says."""
        conversation = self.load(conversation_id, on_error=on_error, accept_header=accept_header)
        conversation.bind(self)
        return conversation

    def load(
        self, conversation_id: str, *, on_error: OnError = "raise", accept_header: Iterable[HeaderColumn] = ()
    ) -> Conversation:
        """The stored conversation, whole (header and every entry), not bound. Its header is the
        trail's (the header as made, chained, and the entries' mode changes and branch
        switches), and every header column an agent uses is checked against it
        (``msgwire.harness.store.header``): a column changed behind the store's back raises
        ``HeaderMismatchError`` naming it, unless ``accept_header`` names it (then the stored
        value is taken, and ``verify()`` names it)."""
        accept = accepted(accept_header)
        key = self._key(conversation_id)

        def work(cur: Cursor) -> tuple[tuple[Any, ...] | None, list[tuple[Any, ...]]]:
            info = cur.one(f"SELECT {INFO} FROM msgwire_conversations WHERE id = ?", (key,))
            if info is None:
                return None, []
            # the entries up to the row's head: what it describes (a later append may have committed since)
            return info, cur.rows(ENTRY_ROWS + " AND seq <= ? ORDER BY seq", (key, info[10]))

        info, rows = self._run(work)
        if info is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        entries = self._entries(conversation_id, rows, on_error)
        conversation = self._vouched(conversation_id, self._stored(info), entries, rows, accept)
        self._remember_row(info)  # its next append may assume this head
        return conversation

    def _vouched(
        self,
        conversation_id: str,
        stored: StoredHeader,
        entries: list[Entry],
        rows: list[tuple[Any, ...]],
        accept: frozenset[HeaderColumn],
    ) -> Conversation:
        """The conversation of a row and its entries, its header the trail's, each column
        compared with it (``refuse``: raises for a column not accepted)."""
        made = stored.made()
        if made is None:  # unchained: as stored
            conversation = Conversation.restore(stored.columns, entries)
            live = None
        else:
            assert stored.chain is not None
            replayed = stored.made()  # a header of its own: the replay changes it
            assert replayed is not None
            conversation = Conversation.restore(replayed, entries, origin=stored.chain.origin, replay=True)
            live = (conversation.mode, conversation.system_prompt, conversation.branch)

        def row_at(seq: int) -> tuple[bytes, str] | None:
            row = rows[seq] if 0 <= seq < len(rows) and rows[seq][0] == seq else None
            if row is None:
                row = next((r for r in rows if r[0] == seq), None)
            return None if row is None else (bytes(row[1]), row[2])

        found = stored.mismatches(made, live, row_at)
        if not found:
            return conversation
        unvouched = refuse(found, accept, conversation_id=conversation_id, url=self.url)
        # accepted: the stored values of those columns
        header, columns = conversation.header(), stored.columns
        taken = {m.column for m in found}
        for column in taken & {"system_prompt", "mode", "modes", "branch", "metadata", "created_at"}:
            setattr(header, column, getattr(columns, column))
        if "id" in taken:
            header.conversation_id = columns.conversation_id
        if taken & {"parent_id", "parent_entry", "parent_hash"}:
            header.parent = columns.parent
        origin = stored.chain.origin if stored.chain is not None else None
        return Conversation.restore(header, entries, origin=origin, unvouched=unvouched)

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
        # The cheap checks first: an isinstance of the abstract Sequence, zip with strict= and a
        # list comprehension's function each cost more than making a draft.
        if isinstance(messages, _MESSAGES):
            batch = [messages]
        else:
            batch = list(messages) if isinstance(messages, (list, tuple, Sequence)) else [messages]
            for i, m in enumerate(batch):
                if not isinstance(m, _MESSAGES) and (
                    not isinstance(getattr(m, "type", None), str) or isinstance(m, (str, bytes))
                ):
                    raise TypeError(
                        f"append takes msgwire messages (msgwire.user(...), ...); item {i} is {type(m).__name__}"
                    )
        stamp = now()
        ids = new_ids(len(batch))
        drafts = []
        for i, m in enumerate(batch):
            drafts.append(
                Draft(
                    id=ids[i],
                    timestamp=stamp,
                    message=m,
                    decision=decision if decision is not None else default_decision(m),
                    audit=dict(audit) if audit else {},
                )
            )
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
        rows = self._run(lambda cur: cur.rows(ENTRY_ROWS + " AND seq > ? ORDER BY seq", (key, after)), read_only=True)
        return self._entries(conversation_id, rows, "raise")

    # --- fork ---------------------------------------------------------------------------------

    def fork(
        self,
        conversation_id: str,
        at: str | None = None,
        *,
        id: str | None = None,  # noqa: A002
        accept_header: Iterable[HeaderColumn] = (),
    ) -> str:
        """Copy a conversation up to and including entry ``at`` (all of it for ``None``) into a
        new one, in SQL: the same entries (ids, seq, hashes), each message at its state as of
        ``at``, the mode, branch and system prompt as they stood there, ``parent`` recorded and
        the fork's header chained after the entries it kept (as ``Conversation.fork`` does).
        Returns the new id. The header is checked first, as ``load`` checks it (a fork would
        chain what it copies)."""
        accept = accepted(accept_header)
        new = id or new_id()
        key, new_key = self._key(conversation_id), self._key(new)

        def work(cur: Cursor) -> str:
            info, changes = self._vouched_row(cur, conversation_id, accept)
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
            later = [e for e in changes if e.seq > upto]
            header = fork_header(self._stored(info).columns, upto + 1, last[0] if last else None, later, new)
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
        accept_header: Iterable[HeaderColumn] = (),
    ) -> bytes | None:
        """The audit JSON of ``Conversation.export_audit`` for a stored conversation (loaded
        as ``load`` does: ``accept_header`` too)."""
        return self.load(conversation_id, accept_header=accept_header).export_audit(dest, format=format)

    def import_audit(
        self,
        source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes],
        *,
        agent: str | None = None,
    ) -> Conversation:
        """Store an export (``Conversation.load_audit`` reads it), entries as they are, and
        return it bound. Importing the same export again changes nothing."""
        return self.bind(Conversation.load_audit(source), agent=agent)
