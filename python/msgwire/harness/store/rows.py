"""The row format: one database row per message, ``{"kind", "id", "timestamp", "data_json"}``.

``kind`` is the message's type (``user``, ``assistant``, ``tool_result``, ``system_control``, or
an unknown message's own tag), ``data_json`` the message exactly as ``msgwire.dumps`` writes it,
so a table of rows holds a conversation losslessly and any SQL client can read it. The seed
system's rows (kinds ``system`` / ``user`` / ``assistant`` / ``tool_call`` / ``tool_result`` with
their own ``data_json``) load through the wire layer's migration (``msgwire.legacy``).

The functions live in ``msgwire.codec`` (``Session.to_rows`` / ``from_rows`` call them and the
wire layer never imports the harness); this module is the harness's name for them, plus what a
store needs: one row per message, and the report of a row that could not be read.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec

from msgwire import Message, Session, dumps
from msgwire.codec import session_from_rows, session_to_rows

__all__ = ["BadRow", "from_rows", "kind_of", "message_row", "to_rows"]


def to_rows(session: Session) -> list[dict[str, Any]]:
    """One row per message (a ``system`` row first for the system prompt): ``Session.to_rows``."""
    return session_to_rows(session)


def from_rows(rows: Any, **envelope: Any) -> Session:
    """A Session from rows written by ``to_rows`` or by the seed system: ``Session.from_rows``."""
    return session_from_rows(rows, **envelope)


def kind_of(message: Message) -> str:
    """The ``kind`` of a message's row: its type tag."""
    return message.type


def message_row(message: Message) -> dict[str, Any]:
    """The row of one message."""
    return {
        "kind": message.type,
        "id": getattr(message, "id", None),
        "timestamp": getattr(message, "timestamp", None),
        "data_json": dumps(message).decode(),
    }


class BadRow(msgspec.Struct, frozen=True, kw_only=True):
    """A stored row that could not be decoded, as ``load(..., on_error=...)`` reports it:
    the conversation, the row's ``seq``, which table, the error and the bytes as stored."""

    conversation_id: str
    seq: int
    table: str
    error: str
    data: bytes
    timestamp: dt.datetime | None = None
