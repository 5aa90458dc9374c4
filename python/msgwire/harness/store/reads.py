"""Reading a store without its entries: a conversation's row (``info``, ``conversations``), its
messages: the latest state of each message in
one query (all, or the last N), as a ``Session``, or every row of a table in pages for an
export (``msgwire.harness.store.parquet``)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Literal

import msgspec

from msgwire import Message, Session, loads
from msgwire.errors import DecodeError

from .base import ConversationInfo, Cursor, OnError, report_bad_row
from .rows import BadRow
from .trail import INFO, TrailTables

__all__ = ["MessageReads"]

_message_decoder = msgspec.json.Decoder(Message)
# the message rows of a conversation (all, or the last N), in order
_ALL_JSON = "SELECT {column} FROM msgwire_messages WHERE conversation_id = ? ORDER BY seq"
_LAST_JSON = (
    "SELECT {column} FROM (SELECT seq, data_json FROM msgwire_messages WHERE conversation_id = ? "
    "ORDER BY seq DESC LIMIT ?) recent ORDER BY seq"
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

        column = self._json_bytes("data_json")

        def work(cur: Cursor) -> list[tuple[Any, ...]] | None:
            if cur.one("SELECT 1 FROM msgwire_conversations WHERE id = ?", (key,)) is None:
                return None
            if last is None:
                return cur.rows(_ALL_JSON.format(column=column), (key,))
            return cur.rows(_LAST_JSON.format(column=column), (key, last))

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
                report_bad_row(bad, on_error)
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


def _page(cur: Cursor, *, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return cur.rows(sql, params)
