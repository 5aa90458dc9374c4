"""What a store is, in two parts: the conversation store (conversations and their audit trails)
and the swarm's part (agents and mail). ``SQLiteStore`` and ``PostgresStore`` implement both
(``Store``); a swarm needs only ``SwarmStore``, whose ``create`` / ``open`` / ``register_agent``
are what it makes its agents' conversations with."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any, Literal, Protocol, Self, runtime_checkable

from msgwire import Message, Session, UserMessage

from ..audit import Committed, Draft, Entry
from ..conversation import Conversation
from .base import ConversationInfo, OnError
from .header import HeaderColumn
from .mailbox import AgentState, AgentView, Mail

__all__ = ["ConversationStore", "Store", "SwarmStore"]


class _Conversations(Protocol):
    """What both parts need: to make and reopen a conversation, and to close."""

    url: str

    def create(
        self,
        *,
        id: str | None = None,  # noqa: A002
        agent: str | None = None,
        system_prompt: str | None = None,
        mode: str | None = None,
        modes: Mapping[str, str] | None = None,
        branch: str = "main",
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation: ...
    def open(
        self, conversation_id: str, *, on_error: OnError = "raise", accept_header: Iterable[HeaderColumn] = ()
    ) -> Conversation: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...  # `with open_store(url) as store:` closes it at the end
    def __exit__(self, *exc_info: object) -> None: ...


@runtime_checkable
class ConversationStore(_Conversations, Protocol):
    """Conversations and their audit trails (see ``ConversationTables`` and ``MessageReads``
    for each call)."""

    def bind(self, conversation: Conversation, *, agent: str | None = None) -> Conversation: ...
    def load(
        self, conversation_id: str, *, on_error: OnError = "raise", accept_header: Iterable[HeaderColumn] = ()
    ) -> Conversation: ...
    def info(self, conversation_id: str) -> ConversationInfo: ...
    def conversations(self, *, agent: str | None = None) -> list[ConversationInfo]: ...
    def delete(self, conversation_id: str) -> bool: ...
    def messages(
        self, conversation_id: str, *, last: int | None = None, on_error: OnError = "raise"
    ) -> list[Message]: ...
    def session(
        self,
        conversation_id: str,
        *,
        last: int | None = None,
        on_error: OnError = "raise",
        accept_header: Iterable[HeaderColumn] = (),
    ) -> Session: ...
    def append(
        self,
        conversation_id: str,
        messages: Message | Sequence[Message],
        *,
        decision: str | None = None,
        audit: Mapping[str, Any] | None = None,
    ) -> list[Entry]: ...
    def update(
        self, conversation_id: str, message: Message, decision: str, audit: Mapping[str, Any] | None = None
    ) -> Entry: ...
    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> Committed: ...
    def since(self, conversation_id: str, after: int, /) -> list[Entry]: ...
    def fork(
        self,
        conversation_id: str,
        at: str | None = None,
        *,
        id: str | None = None,  # noqa: A002
        accept_header: Iterable[HeaderColumn] = (),
    ) -> str: ...
    def export_audit(
        self,
        conversation_id: str,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        format: Literal["json", "jsonl"] = "json",  # noqa: A002
        accept_header: Iterable[HeaderColumn] = (),
    ) -> bytes | None: ...
    def import_audit(
        self, source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes], *, agent: str | None = None
    ) -> Conversation: ...


@runtime_checkable
class SwarmStore(_Conversations, Protocol):
    """A swarm's agents and mail, and the conversations its agents keep (see ``SwarmTables``
    for each call)."""

    def register_agent(
        self, name: str, conversation_id: str, *, state: Literal["idle", "running"] = "idle"
    ) -> AgentState: ...
    def agent(self, name: str) -> AgentState: ...
    def agents(self) -> list[AgentState]: ...
    def set_agent(
        self, name: str, *, state: Literal["idle", "running"] | None = None, encouragement: int | None = None
    ) -> None: ...
    def post(
        self,
        message: str | UserMessage,
        *,
        to: str | None = None,
        sender: str | None = None,
        expires: float | dt.timedelta | dt.datetime | None = None,
    ) -> Mail: ...
    def broadcast(
        self,
        message: str | UserMessage,
        *,
        to: Sequence[str] | None = None,
        sender: str | None = None,
        expires: float | dt.timedelta | dt.datetime | None = None,
    ) -> Mail: ...
    def clear_mail(self, *, to: str | None = None, older_than: float | dt.timedelta | None = None) -> int: ...
    def idle_unless_mail(self, name: str) -> bool: ...
    def record_step(self, name: str, *, encouragement: int | None = None, idle: bool = False) -> bool: ...
    def mail(self, name: str) -> list[Mail]: ...
    def deliver(self, name: str) -> list[Entry]: ...
    def view(self, name: str) -> AgentView: ...
    def commit_step(
        self,
        name: str,
        conversation_id: str,
        drafts: Sequence[Draft],
        after: int | None,
        *,
        take: Sequence[Mail] = (),
        upto: int | None = None,
        encouragement: int | None = None,
        idle: bool = False,
    ) -> tuple[Committed, AgentView]: ...
    def since(self, conversation_id: str, after: int, /) -> list[Entry]: ...
    def latest_broadcast(self, name: str | None = None) -> UserMessage | None: ...
    def mail_seq(self) -> int: ...
    def wait_mail(self, after: int, timeout: float) -> int: ...
    def wake_waiters(self) -> None: ...


@runtime_checkable
class Store(ConversationStore, SwarmStore, Protocol):
    """Both parts: what ``SQLiteStore`` and ``PostgresStore`` are."""
