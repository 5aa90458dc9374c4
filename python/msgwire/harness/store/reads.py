"""Reading a store: a conversation's row (``info``, ``conversations``), its messages (the latest
state of each, in one query: all, or the last N), as a ``Session``, or every row of a table in
pages for an export (``msgwire.harness.store.parquet``).

A message's bytes are in its entries (``msgwire_message_rows`` says which entry holds its latest
state): all the messages are one pass over the entries, each message where it first appeared
and at its last state (when no message changed, as many entries as messages, the entries are
the messages and their ids are not read); the last N are the message rows joined to the
entries that hold them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

import msgspec

from msgwire import Message, Session, loads
from msgwire.errors import DecodeError

from ..audit import Entry, apply_change
from .base import ConversationInfo, Cursor, OnError, report_bad_row
from .header import HeaderColumn, accepted, refuse
from .rows import BadRow
from .trail import ENTRY_ROWS, INFO, TrailTables

__all__ = ["MessageReads"]

_message_decoder = msgspec.json.Decoder(Message)
# Each message's first entry and its row, in the entries' (conversation, seq) order.
_FIRSTS = (
    "msgwire_entries e JOIN msgwire_message_rows m ON m.conversation_id = e.conversation_id "
    "AND m.id = e.message_id AND m.seq = e.seq"
)
# A conversation's entries (head seq, from 0) and messages: as many of each when no message
# changed, and its messages are then its entries' as they are, in one read of nothing else.
_SIZES = (
    "SELECT head_seq, (SELECT count(*) FROM msgwire_message_rows WHERE conversation_id = ?) "
    "FROM msgwire_conversations WHERE id = ?"
)


class MessageReads(TrailTables):
    """The rows of a store, read (see the module docs)."""

    def info(self, conversation_id: str) -> ConversationInfo:
        """The header and size of one conversation (``KeyError`` if none)."""
        row = self._run(
            lambda cur: cur.one(f"SELECT {INFO} FROM msgwire_conversations WHERE id = ?", (self._key(conversation_id),))
        )
        if row is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        return self._info(row)

    def conversations(self, *, agent: str | None = None) -> list[ConversationInfo]:
        """Every stored conversation (``agent``: that agent's), oldest first."""
        sql = f"SELECT {INFO} FROM msgwire_conversations"
        params: tuple[Any, ...] = ()
        if agent is not None:
            sql += " WHERE agent = ?"
            params = (self._key(agent),)
        rows = self._run(lambda cur: cur.rows(sql + " ORDER BY created_at, id", params))
        return [self._info(r) for r in rows]

    def messages(self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise") -> list[Message]:
        """The messages at their latest state, in the order they were first appended: all of
        them, or the ``last`` N (one query, no entry read)."""
        key = self._key(conversation_id)
        if last is not None and last < 0:
            raise ValueError(f"last must be at least 0, got {last}")

        def work(cur: Cursor) -> list[Any] | None:
            message = self.types.message_bytes
            if last is not None:
                if cur.one("SELECT 1 FROM msgwire_conversations WHERE id = ?", (key,)) is None:
                    return None
                recent = cur.rows(
                    f"SELECT {self._state_sql(message)} FROM {_FIRSTS} WHERE e.conversation_id = ? "
                    "ORDER BY e.seq DESC LIMIT ?",
                    (key, last),
                    binary=True,
                )
                return [r[0] for r in reversed(recent)]
            sizes = cur.one(_SIZES, (key, key))
            if sizes is None:
                return None
            entries, messages = sizes[0] + 1, sizes[1]
            if entries == messages:  # each entry a message's first and only: no message changed
                rows = cur.rows(
                    f"SELECT {message('e')} FROM msgwire_entries e WHERE conversation_id = ? ORDER BY seq",
                    (key,),
                    binary=True,
                )
                return [r[0] for r in rows]
            return _latest_states(
                cur.rows(
                    f"SELECT message_id, {message('e')} FROM msgwire_entries e WHERE conversation_id = ? ORDER BY seq",
                    (key,),
                    binary=True,
                )
            )

        found = self._run(work)
        if found is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        # One typed decode per message: joining 100,000 into one array first costs more than
        # the per-call overhead it saves (a 120 MB copy: 0.78 -> 0.57 s for 100k messages).
        # Any failure (an unknown message type, a bad row) goes to the slow path, which says which.
        decode = _message_decoder.decode
        try:
            return [decode(data) for data in found]
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            pass
        return self._messages_slow(conversation_id, last, on_error)

    def _vouched_row(
        self, cur: Cursor, conversation_id: str, accept: frozenset[HeaderColumn]
    ) -> tuple[tuple[Any, ...], list[Entry]]:
        """The conversation's row (``INFO``), its header checked against the trail without
        reading the whole trail: its mode changes and branch switches (returned too), and the
        entries the check looks at (``header.py``). ``KeyError`` for none;
        ``HeaderMismatchError`` for a column the trail does not vouch for, unless ``accept``
        names it."""
        key = self._key(conversation_id)
        row = cur.one(f"SELECT {INFO} FROM msgwire_conversations WHERE id = ?", (key,))
        if row is None:
            raise KeyError(f"no conversation {conversation_id!r} in {self.url}")
        stored = self._stored(row)
        made = stored.made()
        links, head = stored.columns.chain, stored.head_seq
        at = links[-1].at if links else 0
        wanted = sorted({s for s in (0, head, at - 1, at) if 0 <= s <= head})
        found = {
            r[0]: (bytes(r[1]), r[2])
            for r in (cur.rows(ENTRY_ROWS + " AND seq IN " + self._in(len(wanted)), (key, *wanted)) if wanted else [])
        }
        rows = cur.rows(
            ENTRY_ROWS + " AND seq <= ? AND decision IN (?, ?) ORDER BY seq",
            (key, head, self._key("mode_change"), self._key("branch_switch")),
        )
        changes = self._entries(conversation_id, rows, "raise")
        live = None
        if made is not None:
            state = msgspec.structs.replace(made, modes=dict(made.modes))
            for entry in changes:
                apply_change(state, entry)
            live = (state.mode, state.system_prompt, state.branch)
        refuse(stored.mismatches(made, live, found.get), accept, conversation_id=conversation_id, url=self.url)
        return row, changes

    def _state_sql(self, slice_of: Callable[[str], str]) -> str:
        """The message of a first entry ``e`` (row ``m``) at its latest state, as ``slice_of``
        cuts it from the entry that holds it (``e`` itself unless the message changed since)."""
        return (
            f"CASE WHEN m.state_seq = e.seq THEN {slice_of('e')} ELSE (SELECT {slice_of('s')} FROM "
            "msgwire_entries s WHERE s.conversation_id = e.conversation_id AND s.seq = m.state_seq) END"
        )

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
                report_bad_row(bad, on_error)
        return found

    def session(
        self,
        conversation_id: str,
        *,
        last: int | None = None,
        on_error: OnError = "raise",
        accept_header: Iterable[HeaderColumn] = (),
    ) -> Session:
        """A ``msgwire.Session`` of the stored conversation (its latest states; ``last``: the
        most recent N messages), its system prompt checked against the trail as ``load``
        checks it (``HeaderMismatchError``, unless ``accept_header`` names the columns)."""
        accept = accepted(accept_header)
        row, _ = self._run(lambda cur: self._vouched_row(cur, conversation_id, accept))
        info = self._info(row)
        return Session(
            id=info.id,
            system_prompt=info.system_prompt,
            created_at=info.created_at,
            updated_at=info.updated_at,
            metadata=info.metadata,
            messages=self.messages(conversation_id, last=last, on_error=on_error),
        )

    # --- bulk reading (exports) ---------------------------------------------------------------

    def iter_rows(
        self, table: Literal["messages", "entries"], *, conversation_id: str | None = None, batch: int = 10_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of ``table`` (of one conversation, or all), in (conversation, seq) order,
        ``batch`` rows at a time, each transaction short: ``messages`` rows are
        ``(conversation_id, seq, id, kind, timestamp, data_json)``, ``entries`` rows
        ``(conversation_id, seq, id, message_id, decision, timestamp, hash, body)``, ids as
        strings and bodies as text."""
        columns, source = {
            "messages": (
                f"e.conversation_id, e.seq, m.id, m.kind, m.timestamp, {self._state_sql(self.types.message_sql)}",
                _FIRSTS,
            ),
            "entries": ("e.conversation_id, e.seq, e.id, e.message_id, e.decision, e.timestamp, e.hash, e.body", ""),
        }[table]
        source = source or "msgwire_entries e"
        where, params = ("e.conversation_id = ? AND ", [self._key(conversation_id)]) if conversation_id else ("", [])
        last: tuple[Any, int] | None = None
        while True:
            page = f"SELECT {columns} FROM {source} WHERE {where}"
            args: list[Any] = list(params)
            if last is not None:
                page += "(e.conversation_id > ? OR (e.conversation_id = ? AND e.seq > ?))"
                args += [last[0], last[0], last[1]]
            else:
                page += "1 = 1"
            page += " ORDER BY e.conversation_id, e.seq LIMIT ?"
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


def _page(cur: Cursor, *, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return cur.rows(sql, params)


def _latest_states(rows: list[tuple[Any, Any]]) -> list[Any]:
    """From ``(message id, message bytes)`` rows in entry order: each message where it first
    appeared, at its last state."""
    at: dict[Any, int] = {}
    found: list[Any] = []
    for message_id, data in rows:
        place = at.setdefault(message_id, len(found))
        if place == len(found):
            found.append(data)
        else:
            found[place] = data
    return found
