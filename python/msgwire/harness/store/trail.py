"""The append transaction: entries and message rows, written once for every SQL store.

Appends: one transaction per batch. It locks the conversation's head (SQLite: the database's
write lock from ``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE`` on the
conversation's row), seals each entry at the next ``seq`` chained to the stored head hash,
writes the new head, the entries and the message rows, and commits: ``seq`` is gap-free per
conversation and a batch is there entirely or not at all. Whether a draft is appended is the
trail's own rule (``audit.admission``): a draft whose message id is already stored (or whose
entry id is) is a no-op that returns the stored entry, so an append retried after a lost reply
never duplicates anything. A mode change or branch switch updates the stored header by
``audit.apply_change``, the rule a conversation in memory follows.

The assumed head: a store remembers the head it last committed for each conversation
(``_heads``, a hint only). With it, an append of new messages reads nothing: it seals after
that head and writes at once, and the head's own ``UPDATE`` checks it (its ``seq`` becomes NULL,
which the column refuses, when the stored head is another); a message already stored fails its
row's primary key. Either refusal rolls the transaction back and the append runs again the
careful way, so a wrong hint costs time, never correctness. PostgreSQL sends such a transaction
in one round trip (``postgres.py``).

Group commit (``group.py``): appends after their assumed heads that threads send while another
append's transaction is under way share the next transaction (one round trip, one log flush),
each caller still returning once its own append is committed. They take their locks in the
order of their conversations' ids (and the swarm's agent rows after their conversations' rows;
a broadcast locks agent rows in the same order), so two such transactions never deadlock.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import msgspec

from msgwire import SystemControlMessage
from msgwire.errors import DecodeError, StoreError
from msgwire.types import now

from ..audit import (
    GENESIS,
    AuditHeader,
    Committed,
    Draft,
    Entry,
    Origin,
    Parent,
    Sealed,
    admission,
    apply_change,
    decode_entries,
    message_key,
    seal_draft,
    updates_stored,
)
from .base import ConversationInfo, Cursor, OnError, SQLBase, report_bad_row
from .group import GroupCommit, Pending
from .header import Chain, Made, StoredHeader
from .rows import BadRow

__all__ = ["ENTRY_ROWS", "INFO", "TrailTables"]

T = TypeVar("T")
_modes_decoder = msgspec.json.Decoder(dict[str, str])
_metadata_decoder = msgspec.json.Decoder(dict[str, Any])


_chain_decoder = msgspec.json.Decoder(Chain)
_HEAD = "head_seq, head_hash, system_prompt, mode, modes, branch"
_INSERT_ENTRY = (
    "INSERT INTO msgwire_entries (conversation_id, seq, id, message_id, decision, timestamp, body, hash, "
    "message_at, message_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_MESSAGE = (
    "INSERT INTO msgwire_message_rows (conversation_id, id, seq, kind, timestamp, state_seq) VALUES (?, ?, ?, ?, ?, ?)"
)
_UPDATE_MESSAGE = "UPDATE msgwire_message_rows SET state_seq = ?, timestamp = ? WHERE conversation_id = ? AND id = ?"
# The head's UPDATE when it was assumed: a NULL seq (refused: NOT NULL) unless the stored head is it
# (and, when the batch changes the header, the stored header fields are those it was changed from).
_MOVE_ASSUMED = "head_seq = CASE WHEN head_seq = ? AND head_hash = ?{header} THEN ? END"
_SAME_HEADER = (
    " AND (system_prompt = ? OR (system_prompt IS NULL AND CAST(? AS TEXT) IS NULL))"
    " AND (mode = ? OR (mode IS NULL AND CAST(? AS TEXT) IS NULL)) AND branch = ? AND modes = ?"
)
# The head's UPDATE, by (head assumed, header changed), made once: parameters the assumed head's
# seq and hash (and header fields), then seq, hash, updated_at (and the new header fields), id.
_UPDATE_HEAD = {
    (assumed, changed): "UPDATE msgwire_conversations SET "
    + (_MOVE_ASSUMED.format(header=_SAME_HEADER if changed else "") if assumed else "head_seq = ?")
    + ", head_hash = ?, updated_at = ?"
    + (", system_prompt = ?, mode = ?, branch = ?" if changed else "")
    + " WHERE id = ?"
    for assumed in (False, True)
    for changed in (False, True)
}
_HEADS_KEPT = 4096  # conversations whose head a store remembers (the oldest forgotten first)
_BATCH = 64  # appends of other threads committed in one transaction at most
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
    state (``stage``: the one place a sealed entry becomes rows)."""

    __slots__ = ("_key", "_stamps", "_time", "entries", "inserts", "key", "updates")

    def __init__(self, store: SQLBase, key: Any) -> None:
        self.entries: list[tuple[Any, ...]] = []
        self.inserts: list[tuple[Any, ...]] = []
        self.updates: list[tuple[Any, ...]] = []
        self.key = key  # the conversation's column value
        # None where an id is its own column value (SQLite's TEXT): no call per id
        self._key = None if type(store)._key is SQLBase._key else store._key
        self._time = store._time
        self._stamps: dict[dt.datetime, Any] = {}  # a batch's entries share a timestamp: formatted once

    def stage(self, sealed: Sealed, mkey: str, kind: str, *, new: bool) -> None:
        """The rows of one sealed entry: the entry, and its message's row (new, or its new state)."""
        entry, key, to_key = sealed.entry, self.key, self._key
        seq = entry.seq
        stamp = self._stamps.get(entry.timestamp)
        if stamp is None:
            stamp = self._stamps[entry.timestamp] = self._time(entry.timestamp)
        if to_key is None:
            entry_id, message_id, decision = entry.id, mkey, entry.decision
        else:
            entry_id, message_id, decision = to_key(entry.id), to_key(mkey), to_key(entry.decision)
        self.entries.append(
            (
                key,
                seq,
                entry_id,
                message_id,
                decision,
                stamp,
                sealed.body,
                entry.hash,
                sealed.message_at,
                sealed.message_len,
            )
        )
        made = getattr(entry.message, "timestamp", None)
        when = self._time(made) if isinstance(made, dt.datetime) else None
        if new:
            self.inserts.append((key, message_id, seq, kind, when, seq))
        else:
            self.updates.append((seq, when, key, message_id))

    def write(self, cur: Cursor) -> None:
        cur.many(_INSERT_ENTRY, self.entries)
        if self.inserts:
            cur.many(_INSERT_MESSAGE, self.inserts)
        if self.updates:
            cur.many(_UPDATE_MESSAGE, self.updates)


class _Append:
    """One append: its conversation, drafts, the caller's last seq, whether the drafts' entry ids
    are new (``fresh``), and the work ``then`` that shares its transaction."""

    __slots__ = ("after", "conversation_id", "drafts", "fresh", "then")

    def __init__(
        self,
        conversation_id: str,
        drafts: Sequence[Draft],
        after: int | None,
        fresh: bool,
        then: Callable[[Cursor], Any],
    ) -> None:
        self.conversation_id = conversation_id
        self.drafts = drafts
        self.after = after
        self.fresh = fresh
        self.then = then


class TrailTables(SQLBase):
    """Entries and message rows (see the module docs); the layer ``ConversationTables`` and
    ``SwarmTables`` write through."""

    _assume_heads = True  # whether appends try the assumed head first (see the module docs)

    def __init__(self) -> None:
        super().__init__()
        self._heads: dict[str, _Head] = {}  # conversation id -> the head this store last committed
        self._heads_lock = threading.Lock()  # the eviction iterates the dict: no thread may resize it meanwhile
        self._group: GroupCommit[tuple[Committed, Any]] = GroupCommit(self._commit_batch, self._alone_or_forget)

    def _append(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, *, fresh: bool) -> Committed:
        """Seal and store ``drafts`` in one transaction: after the assumed head when there is
        one and every draft may be new, else (or when the database refused it) the careful way."""
        return self._append_then(conversation_id, drafts, after, fresh=fresh, then=_nothing)[0]

    def _append_then(
        self,
        conversation_id: str,
        drafts: Sequence[Draft],
        after: int | None,
        *,
        fresh: bool,
        then: Callable[[Cursor], T],
    ) -> tuple[Committed, T]:
        """``_append``, and ``then(cur)`` in the same transaction once the entries are written
        (its reads through ``Cursor.later``, which a one-round-trip transaction allows). An
        append after the assumed head joins the appends other threads send meanwhile
        (``group.py``: one transaction for them all)."""
        request = _Append(conversation_id, drafts, after, fresh, then)
        if self._assumable(request) is not None:
            return self._group.run(request)
        return self._careful(request)

    def acommit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> asyncio.Future[Committed]:
        """``commit`` for an event loop: returns at once a future of the loop running, which the
        commit resolves (``AsyncEntryLedger``). The append joins the group commit (``group.py``)
        and is committed off the loop, by a thread of the store's own when no waiting thread
        commits it; the future is resolved once it is stored, as ``commit`` returns."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Committed] = loop.create_future()

        def done(pending: Pending[tuple[Committed, Any]]) -> None:  # in the committing thread
            with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile: nobody to tell
                loop.call_soon_threadsafe(_settle, future, pending)

        self._group.submit(_Append(conversation_id, drafts, after, False, _nothing), done)
        return future

    def _assumable(self, request: _Append) -> _Head | None:
        """The head an append may assume (``None``: it must read first). Nothing to read: no
        entries since `after`; a message to update is one the caller's trail up to `after`
        holds (so it is stored); and an attempt refused, or lost with its outcome unknown, is
        found again the careful way if it was stored after all: among the entries since
        `after`, or (every draft a new message) by its messages' rows, keyed by message id, else
        by entry id."""
        drafts, after = request.drafts, request.after
        assumed = self._heads.get(request.conversation_id) if self._assume_heads and drafts else None
        if assumed is None:
            return None
        if after is None:
            for d in drafts:  # every draft a new message (a loop: a generator under all() costs more)
                if d.how != "new":
                    return None
            return assumed
        return assumed if after == assumed.seq else None

    def _careful(self, request: _Append) -> tuple[Committed, Any]:
        """An append that reads the stored head (and what else it must) first."""
        cid, drafts, after, fresh = request.conversation_id, request.drafts, request.after, request.fresh
        return self._run(lambda cur: (self._commit(cur, cid, drafts, after, fresh=fresh), request.then(cur)))

    def _alone(self, request: _Append) -> tuple[Committed, Any]:
        """An append in a transaction of its own: after the assumed head in one round trip, else
        (or when the database refused it) the careful way."""
        assumed = self._assumable(request)
        if assumed is not None:
            cid, drafts, after, fresh = request.conversation_id, request.drafts, request.after, request.fresh
            done = self._run_once(
                lambda cur: (self._commit(cur, cid, drafts, after, fresh=fresh, assumed=assumed), request.then(cur))
            )
            if done is not None:
                return done
        return self._careful(request)

    def _commit_batch(self, batch: Sequence[Pending[tuple[Committed, Any]]]) -> list[Pending[tuple[Committed, Any]]]:
        """The appends that queued together (``group.py``), each after its assumed head, in one
        transaction (in chunks of ``_BATCH``). When the database refuses the transaction, each
        goes alone, as does any that must read first; a conversation's second append waits for
        the next batch (returned), after its first."""
        if len(batch) == 1:  # the usual case: nobody else was appending
            self._commit_alone(batch[0])
            return []
        alone = []
        together: list[tuple[Pending[tuple[Committed, Any]], _Head]] = []
        later: list[Pending[tuple[Committed, Any]]] = []
        conversations: set[str] = set()
        for pending in batch:
            request: _Append = pending.request
            if request.conversation_id in conversations:
                later.append(pending)
                continue
            conversations.add(request.conversation_id)
            assumed = self._assumable(request)
            if assumed is None:
                alone.append(pending)
            else:
                together.append((pending, assumed))
        together.sort(key=lambda item: item[0].request.conversation_id)  # the order every batch locks in
        for chunk in (together[i : i + _BATCH] for i in range(0, len(together), _BATCH)):
            if len(chunk) == 1:
                alone.append(chunk[0][0])
                continue

            def work(cur: Cursor, chunk: list[tuple[Pending[tuple[Committed, Any]], _Head]] = chunk) -> list[Any]:
                done = []
                for pending, assumed in chunk:
                    r: _Append = pending.request
                    committed = self._commit(cur, r.conversation_id, r.drafts, r.after, fresh=r.fresh, assumed=assumed)
                    done.append((committed, r.then(cur)))
                return done

            try:
                results = self._run_once(work)
            except Exception:  # one of them failed: each alone says which
                results = None
            if results is None:
                for pending, _ in chunk:
                    self._forget(pending.request.conversation_id)  # the heads it remembered were not stored
                    alone.append(pending)
                continue
            for (pending, _), result in zip(chunk, results, strict=True):
                pending.result, pending.finished = result, True
        for pending in alone:
            self._commit_alone(pending)
        return later

    def _commit_alone(self, pending: Pending[tuple[Committed, Any]]) -> None:
        """One queued append in a transaction of its own; its outcome set."""
        try:
            pending.result = self._alone_or_forget(pending.request)
        except BaseException as exc:
            pending.error = exc
        pending.finished = True

    def _alone_or_forget(self, request: _Append) -> tuple[Committed, Any]:
        """``_alone``; when it fails, the conversation's head is forgotten: an append queued
        after this one may have counted it in its `after` (submit): its head must be read, not
        assumed, lest a draft pass for what was not stored."""
        try:
            return self._alone(request)
        except BaseException:
            self._forget(request.conversation_id)
            raise

    def _commit(
        self,
        cur: Cursor,
        conversation_id: str,
        drafts: Sequence[Draft],
        after: int | None,
        *,
        fresh: bool = False,
        assumed: _Head | None = None,
    ) -> Committed:
        """Seal and write ``drafts`` after the stored head; ``fresh``: their entry ids were just
        made, so none can be a retry of a stored one; ``assumed``: the head, not read (nor the
        stored messages: a draft is a new message unless it updates one of the caller's trail,
        which holds it), checked by the database."""
        key = self._key(conversation_id)
        message_keys = [message_key(d.message) or d.id for d in drafts]
        if assumed is None:
            head = self._lock_head(cur, conversation_id)
            known = self._known_messages(cur, key, message_keys)
        else:
            # A message a draft updates is stored: the caller holds the trail up to the assumed
            # head (its `after`), which holds it (and the head's UPDATE checks that head).
            head = msgspec.structs.replace(assumed)
            known = {}
            for k, d in zip(message_keys, drafts, strict=False):  # of equal length: made above
                if updates_stored(d):
                    known[k] = (d.message.type, -1)
        # Other writers' entries since `after` (the caller has the rest): a retried draft's is among them.
        catch_up = self._read_entries(cur, conversation_id, range(after + 1, head.seq + 1)) if after is not None else []
        retried = {} if fresh else self._retried(cur, key, drafts, catch_up, after)
        results: list[Entry | int] = []  # the new entry, or the seq of the stored one a no-op draft returns
        rows = _Rows(self, key)
        seq, prev = head.seq, head.hash
        header_changed = noop = False
        for draft, mkey in zip(drafts, message_keys, strict=False):  # of equal length: made above
            if draft.id in retried:
                results.append(retried[draft.id])
                noop = True
                continue
            message = draft.message
            kind = message.type
            stored = known.get(mkey)
            if admission(draft.how, mkey, kind, None if stored is None else stored[0], conversation_id) == "duplicate":
                assert stored is not None
                results.append(stored[1])  # already there: the entry that added it
                noop = True
                continue
            seq += 1
            sealed = seal_draft(draft, seq=seq, prev=prev)
            entry = sealed.entry
            prev = entry.hash
            rows.stage(sealed, mkey, kind, new=stored is None)
            if stored is None:
                known[mkey] = (kind, seq)
            if type(message) is SystemControlMessage and apply_change(head, entry):  # a mode change, a branch switch
                header_changed = True
            results.append(entry)
        if rows.entries:
            params: list[Any] = [assumed.seq, assumed.hash] if assumed is not None else []
            if assumed is not None and header_changed:
                params += _header_values(assumed)
            params += [seq, prev, rows.entries[-1][5]]  # updated: when its last entry was appended
            if header_changed:
                params += [head.system_prompt, head.mode, head.branch]
            params.append(key)
            cur.run(_UPDATE_HEAD[assumed is not None, header_changed], params)
            rows.write(cur)
            head.seq, head.hash = seq, prev
        self._remember(conversation_id, head)
        if not noop:  # every draft a new entry
            new: list[Entry] = results  # type: ignore[assignment]
            return Committed(entries=catch_up + new if catch_up else new, results=new)
        # The stored entries of no-op drafts (older than the catch-up: read now).
        wanted = sorted({r for r in results if isinstance(r, int)} - {e.seq for e in catch_up})
        stored_entries = {e.seq: e for e in catch_up}
        stored_entries.update((e.seq, e) for e in self._read_entries(cur, conversation_id, wanted))
        return Committed(
            entries=catch_up + [r for r in results if isinstance(r, Entry)],
            results=[stored_entries[r] if isinstance(r, int) else r for r in results],
        )

    def _remember(self, conversation_id: str, head: _Head) -> None:
        heads = self._heads
        with self._heads_lock:
            if conversation_id not in heads and len(heads) >= _HEADS_KEPT:
                heads.pop(next(iter(heads)), None)  # the oldest remembered
            heads[conversation_id] = head

    def _remember_row(self, row: tuple[Any, ...]) -> None:
        """The head of a conversation's row as read (``INFO``), remembered."""
        self._remember(
            self._unkey(row[0]),
            _Head(
                seq=row[10],
                hash=row[11],
                system_prompt=row[2],
                mode=row[3],
                modes=_modes_decoder.decode(row[13]),
                branch=row[4],
            ),
        )

    def _forget(self, conversation_id: str) -> None:
        with self._heads_lock:
            self._heads.pop(conversation_id, None)

    def _read_entries(self, cur: Cursor, conversation_id: str, seqs: Sequence[int]) -> list[Entry]:
        """The stored entries at ``seqs`` (a range or a sorted list), in seq order."""
        if not seqs:
            return []
        key = self._key(conversation_id)
        if isinstance(seqs, range):
            found = cur.rows(ENTRY_ROWS + " AND seq >= ? AND seq < ? ORDER BY seq", (key, seqs.start, seqs.stop))
        else:
            found = cur.rows(ENTRY_ROWS + " AND seq IN " + self._in(len(seqs)) + " ORDER BY seq", (key, *seqs))
        return self._entries(conversation_id, found, "raise")

    def _retried(
        self,
        cur: Cursor,
        key: Any,
        drafts: Sequence[Draft],
        catch_up: list[Entry],
        after: int | None,
    ) -> dict[str, int]:
        """Drafts already stored under their entry id (a retry whose reply was lost) -> their
        seq: the entries since ``after`` hold them (read already: ``catch_up``); with no
        ``after``, one pass over the conversation's."""
        ids = {d.id for d in drafts}
        if after is not None:
            return {e.id: e.seq for e in catch_up if e.id in ids}
        rows = cur.rows(
            "SELECT id, seq FROM msgwire_entries WHERE conversation_id = ? AND id IN " + self._in(len(ids)),
            (key, *(self._key(i) for i in ids)),
        )
        return {self._unkey(r[0]): r[1] for r in rows}

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
            "SELECT id, kind, seq FROM msgwire_message_rows WHERE conversation_id = ? AND id IN "
            + self._in(len(unique)),
            (key, *(self._key(i) for i in unique)),
        )
        return {self._unkey(r[0]): (r[1], r[2]) for r in rows}

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
        header = msgspec.structs.replace(header, created_at=created)  # the column and `chain` alike
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
        self._remember(
            header.conversation_id,
            _Head(
                seq=head[0],
                hash=head[1],
                system_prompt=header.system_prompt,
                mode=header.mode,
                modes=dict(header.modes),
                branch=header.branch,
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
        rows = _Rows(self, key)
        for e, mkey in zip(entries, keys, strict=True):
            draft = Draft(id=e.id, timestamp=e.timestamp, message=e.message, decision=e.decision, audit=e.audit)
            body = seal_draft(draft, seq=e.seq, prev=GENESIS)  # only its body: the hash is the entry's own
            sealed = msgspec.structs.replace(body, entry=e)
            rows.stage(sealed, mkey, e.message.type, new=mkey not in known)
            known.setdefault(mkey, (e.message.type, e.seq))
        rows.write(cur)
        last = entries[-1]
        if last.seq > stored.seq:
            cur.run(
                "UPDATE msgwire_conversations SET head_seq = ?, head_hash = ?, updated_at = ? WHERE id = ?",
                (last.seq, head, self._time(last.timestamp), key),
            )
            stored.seq, stored.hash = last.seq, head
        self._remember(conversation_id, stored)

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

    def _stored(self, row: tuple[Any, ...]) -> StoredHeader:
        """A conversation's row (``INFO``) as stored: its header columns, ``chain``, its head."""
        info = self._info(row)
        chain = _chain_decoder.decode(row[14]) if row[14] else None
        columns = AuditHeader(
            conversation_id=info.id,
            created_at=info.created_at,
            system_prompt=info.system_prompt,
            mode=info.mode,
            modes=_modes_decoder.decode(row[13]),
            branch=info.branch,
            parent=info.parent,
            metadata=info.metadata,
            chain=chain.links if chain is not None else [],
        )
        return StoredHeader(columns, chain, row[10], row[11])

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


def _settle(future: asyncio.Future[Committed], pending: Pending[tuple[Committed, Any]]) -> None:
    """Resolve ``acommit``'s future with its append's outcome (in the loop's thread)."""
    if future.done():  # cancelled: the append is stored all the same
        return
    if pending.error is not None:
        future.set_exception(pending.error)
    else:
        assert pending.result is not None
        future.set_result(pending.result[0])


def _nothing(cur: Cursor) -> None:
    """No more work in an append's transaction."""


def _header_values(head: _Head) -> list[Any]:
    """The parameters of ``_SAME_HEADER``: the header fields ``head`` says are stored."""
    modes = msgspec.json.encode(head.modes).decode()
    return [head.system_prompt, head.system_prompt, head.mode, head.mode, head.branch, modes]


def _chain_column(header: AuditHeader, origin: Origin | None) -> str | None:
    """The ``chain`` column: the links, the origin, and the rest of the header as made (what
    ``header.py`` checks the columns against)."""
    if not header.chain:
        return None
    if origin is None:
        origin = Origin(mode=header.mode, system_prompt=header.system_prompt, branch=header.branch)
    made = Made(
        conversation_id=header.conversation_id,
        created_at=header.created_at,
        modes=header.modes,
        parent=header.parent,
        metadata=header.metadata,
    )
    return msgspec.json.encode(Chain(links=header.chain, origin=origin, made=made)).decode()
