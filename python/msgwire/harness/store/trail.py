"""The append transaction: entries and message rows, written once for every SQL store.

Appends: one transaction per batch. It locks the conversation's head (SQLite: the database's
write lock from ``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE`` on the
conversation's row), seals each entry at the next ``seq`` chained to the stored head hash,
writes the entries, the message rows and the new head, and commits: ``seq`` is gap-free per
conversation and a batch is there entirely or not at all. Whether a draft is appended is the
trail's own rule (``audit.admission``): a draft whose message id is already stored (or whose
entry id is) is a no-op that returns the stored entry, so an append retried after a lost reply
never duplicates anything. A mode change or branch switch updates the stored header by
``audit.apply_change``, the rule a conversation in memory follows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from msgwire.errors import DecodeError, StoreError
from msgwire.types import now

from ..audit import (
    GENESIS,
    AuditHeader,
    Committed,
    Draft,
    Entry,
    Link,
    Origin,
    Parent,
    Sealed,
    admission,
    apply_change,
    decode_entries,
    message_key,
    seal_draft,
)
from .base import ConversationInfo, Cursor, OnError, SQLBase, report_bad_row
from .rows import BadRow

__all__ = ["ENTRY_ROWS", "INFO", "TrailTables"]

_modes_decoder = msgspec.json.Decoder(dict[str, str])
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])


class _Chain(msgspec.Struct, kw_only=True):
    """A conversation's ``chain`` column: its header links and the header's origin."""

    links: list[Link]
    origin: Origin


_chain_decoder = msgspec.json.Decoder(_Chain)
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
ENTRY_ROWS = "SELECT seq, body, hash, timestamp FROM msgwire_entries WHERE conversation_id = ?"
"""The entries of a conversation, as ``_entries`` reads them (add the conditions and the order)."""
INFO = (
    "id, agent, system_prompt, mode, branch, parent_id, parent_entry, parent_hash, created_at, updated_at, "
    "head_seq, head_hash, metadata, modes, chain"
)
"""The columns of a conversation's row, as ``_info`` / ``_header`` read them."""


class _Head(msgspec.Struct, kw_only=True):
    """A conversation's row as an append locks it (an ``audit.HeaderState``)."""

    seq: int
    hash: str
    system_prompt: str | None
    mode: str | None
    modes: dict[str, str]
    branch: str


class _Rows:
    """The rows one transaction writes: entries, new message rows, message rows moved to a newer
    state (the one place a sealed entry becomes rows)."""

    __slots__ = ("entries", "inserts", "updates")

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []
        self.inserts: list[tuple[Any, ...]] = []
        self.updates: list[tuple[Any, ...]] = []

    def write(self, cur: Cursor) -> None:
        cur.many(_INSERT_ENTRY, self.entries)
        cur.many(_INSERT_MESSAGE, self.inserts)
        cur.many(_UPDATE_MESSAGE, self.updates)


class TrailTables(SQLBase):
    """Entries and message rows (see the module docs); the layer ``ConversationTables`` and
    ``SwarmTables`` write through."""

    def _commit(
        self, cur: Cursor, conversation_id: str, drafts: Sequence[Draft], after: int | None, *, fresh: bool = False
    ) -> Committed:
        """Seal and write ``drafts`` after the stored head; ``fresh``: their entry ids were just
        made, so none can be a retry of a stored one."""
        key = self._key(conversation_id)
        head = self._lock_head(cur, conversation_id)
        first_head = head.seq
        message_keys = [message_key(d.message) or d.id for d in drafts]
        known = self._known_messages(cur, key, message_keys)
        known_entries = {} if fresh else self._known_entries(cur, key, [d.id for d in drafts])
        results: list[Entry | int] = []
        rows = _Rows()
        seq, prev = head.seq, head.hash
        header_changed = False
        # a batch's drafts share one timestamp: each distinct one formatted once
        times = {stamp: self._time(stamp) for stamp in {d.timestamp for d in drafts}}
        for draft, mkey in zip(drafts, message_keys, strict=True):
            if draft.id in known_entries:
                results.append(known_entries[draft.id])
                continue
            kind = draft.message.type
            stored = known.get(mkey)
            verdict = admission(draft.how, mkey, kind, stored[0] if stored else None, conversation_id)
            if verdict == "duplicate":
                assert stored is not None
                results.append(stored[1])  # already there: the entry that added it
                continue
            seq += 1
            sealed = seal_draft(draft, seq=seq, prev=prev)
            prev = sealed.entry.hash
            self._stage(rows, key, sealed, mkey, times[draft.timestamp], new=stored is None)
            if stored is None:
                known[mkey] = (kind, seq)
            header_changed = apply_change(head, sealed.entry) or header_changed
            results.append(sealed.entry)
        rows.write(cur)
        if rows.entries:
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
            found = cur.rows(ENTRY_ROWS + " AND seq IN " + self._in(len(wanted)), (key, *sorted(wanted)))
            stored_entries = {e.seq: e for e in self._entries(conversation_id, found, "raise")}
        new = [r for r in results if isinstance(r, Entry)]
        catch_up = [stored_entries[s] for s in range(after + 1, first_head + 1)] if after is not None else []
        return Committed(
            entries=catch_up + new, results=[stored_entries[r] if isinstance(r, int) else r for r in results]
        )

    def _stage(self, rows: _Rows, key: Any, sealed: Sealed, mkey: str, stamp: Any, *, new: bool) -> None:
        """The rows of one sealed entry: the entry, and its message's row (new, or its new state)."""
        entry = sealed.entry
        rows.entries.append(
            (
                key,
                entry.seq,
                self._key(entry.id),
                self._key(mkey),
                self._key(entry.decision),
                stamp,
                sealed.body,
                entry.hash,
                sealed.message_at,
                sealed.message_len,
            )
        )
        data = sealed.body[sealed.message_at : sealed.message_at + sealed.message_len].decode()
        made = getattr(entry.message, "timestamp", None)
        when = self._time(made) if isinstance(made, dt.datetime) else None
        if new:
            rows.inserts.append((key, entry.seq, self._key(mkey), entry.message.type, when, data, entry.seq))
        else:
            rows.updates.append((data, entry.seq, when, key, self._key(mkey)))

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

    # --- a conversation made elsewhere (in memory, an import, a fork) ---------------------------

    def _insert_header(
        self,
        cur: Cursor,
        header: AuditHeader,
        agent: str | None,
        *,
        exists: Literal["fail", "keep"],
        head: tuple[int, str] | None = None,
        origin: Origin | None = None,
    ) -> bool:
        """The conversation's row; ``head``: its last seq and hash (by default none, and the
        header's own link as the hash its first entry chains to); ``origin``: the header as it
        was made, when it has changed since."""
        key = self._key(header.conversation_id)
        if cur.one("SELECT 1 FROM msgwire_conversations WHERE id = ?", (key,)) is not None:
            if exists == "keep":
                return False
            raise StoreError(f"conversation {header.conversation_id!r} already exists in {self.url}")
        if head is None:
            head = (-1, header.chain[-1].hash if header.chain else GENESIS)
        parent = header.parent
        created = header.created_at or now()
        cur.run(
            f"INSERT INTO msgwire_conversations ({INFO}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                _chain_column(header, origin),
            ),
        )
        return True

    def _insert_entries(self, cur: Cursor, conversation_id: str, entries: Sequence[Entry], head: str) -> None:
        """Store sealed entries as they are (an import, or a conversation made in memory);
        ``head`` is the trail's last hash once they are in."""
        if not entries:
            return
        stored = self._lock_head(cur, conversation_id)
        key = self._key(conversation_id)
        keys = [message_key(e.message) or e.id for e in entries]
        known = self._known_messages(cur, key, keys)
        rows = _Rows()
        for e, mkey in zip(entries, keys, strict=True):
            draft = Draft(id=e.id, timestamp=e.timestamp, message=e.message, decision=e.decision, audit=e.audit)
            body = seal_draft(draft, seq=e.seq, prev=GENESIS)  # only its body: the hash is the entry's own
            sealed = msgspec.structs.replace(body, entry=e)
            self._stage(rows, key, sealed, mkey, self._time(e.timestamp), new=mkey not in known)
            known.setdefault(mkey, (e.message.type, e.seq))
        rows.write(cur)
        last = entries[-1]
        if last.seq > stored.seq:
            cur.run(
                "UPDATE msgwire_conversations SET head_seq = ?, head_hash = ?, updated_at = ? WHERE id = ?",
                (last.seq, head, self._time(last.timestamp), key),
            )

    # --- rows -> objects ----------------------------------------------------------------------

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
                report_bad_row(bad, on_error)
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
            chain=_chain_decoder.decode(row[14]).links if row[14] else [],
        )

    def _origin(self, row: tuple[Any, ...]) -> Origin | None:
        """How the header of a conversation's row was made (``None``: a row written before
        headers were chained: as it is)."""
        return _chain_decoder.decode(row[14]).origin if row[14] else None

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


def _chain_column(header: AuditHeader, origin: Origin | None) -> str | None:
    if not header.chain:
        return None
    if origin is None:
        origin = Origin(mode=header.mode, system_prompt=header.system_prompt, branch=header.branch)
    return msgspec.json.encode(_Chain(links=header.chain, origin=origin)).decode()
