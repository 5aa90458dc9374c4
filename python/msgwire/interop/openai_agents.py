"""openai-agents sessions on msgwire's stores: ``StoreSession(session_id, store)`` is the
``Session`` protocol of openai-agents (``get_items``, ``add_items``, ``pop_item``,
``clear_session``) on a SQLite or PostgreSQL store, so that a run's history is a msgwire
conversation: typed messages, a hash-chained audit trail (``msgwire audit``, ``verify``), forks,
and PostgreSQL for many workers::

    session = StoreSession("user-42", open_store("sqlite:///agents.db"))
    result = await Runner.run(agent, "Hi", session=session)

The session is the conversation whose id is ``session_id`` (made on the first ``add_items``).
Each item is one message, read and written by msgwire's Responses reader and writer
(``msgwire.interop.responses_items``): ``get_items`` gives every item back equal to what was
added; what msgwire's message does not carry is kept beside it, in the entry's audit
(``{"openai_agents": {"item", "form", "losses"}}``, chained like the rest), and listed by
``report()``. ``messages()`` is the live items as msgwire messages.

The trail is never rewritten. ``add_items`` appends its items in one transaction.
``pop_item`` appends a ``system_control`` entry ``openai_agents.pop_item`` (``{"message_id",
"item"}``: the item it removed) and ``clear_session`` one ``openai_agents.clear_session``;
``get_items`` leaves out what they removed, and ``verify()`` holds as for any append. Clearing
keeps the conversation (and so the session's whole history, for the audit): to erase it,
``store.delete(session_id)``. Two workers popping at once pop two items: a pop entry's message
id is made from the item it removes, so the store appends only one of two claims on an item
and the other worker pops the next. A pop removes the item that was last when it read the
trail (an item another worker appends meanwhile stays).

Reads are incremental: the session keeps the live items it has read (their JSON, about the
size of the history) and each call reads only the entries appended since, checking that the
last one it knows is still there (a conversation deleted or replaced is read again whole).
Every call runs in a worker thread (the pool of an ``AsyncStore``, else the event loop's
default executor); a write whose caller is cancelled is waited for, then the cancellation is
raised, so that what was stored is known.

openai-agents is imported here only (``pip install 'msgwire[openai-agents]'``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from ..errors import MissingExtraError, StoreError
from ..harness.audit import Draft, Entry, default_decision, message_key
from ..harness.store import AsyncStore, ConversationStore, HeaderColumn
from ..harness.store.header import accepted
from ..types import (
    AssistantMessage,
    Loss,
    LossReport,
    Message,
    SystemControlMessage,
    ToolCallBlock,
    new_id,
    now,
)
from .responses_items import ReadItem, items_json, read_item

try:
    from agents.items import TResponseInputItem
    from agents.memory import Session
    from agents.memory.session_settings import SessionSettings, coerce_session_settings, resolve_session_limit
except ImportError as exc:
    raise MissingExtraError("msgwire.interop.openai_agents (StoreSession)", "openai-agents", exc) from None

from .openai_agents_model import MsgwireModel, MsgwireModelProvider  # the Model, in a module of its own

__all__ = ["CLEAR", "POP", "MsgwireModel", "MsgwireModelProvider", "StoreSession"]

POP = "openai_agents.pop_item"
"""The ``system_control`` of a ``pop_item``: ``{"message_id", "item"}``, the item removed."""
CLEAR = "openai_agents.clear_session"
"""The ``system_control`` of a ``clear_session``: every item before it is removed."""
AUDIT = "openai_agents"
"""The key of an item's entry audit that keeps what its message does not carry."""

T = TypeVar("T")
_item_decoder = msgspec.json.Decoder(dict[str, Any])


class _Live(msgspec.Struct, frozen=True, gc=False):
    """A message of the session, as its items' JSON and what msgwire does not carry of them."""

    message: Message
    items: list[bytes]
    losses: list[Loss]


def _live_of(message: Message, audit: Mapping[str, Any]) -> _Live:
    """A stored message and its entry's audit as the session's items."""
    kept = audit.get(AUDIT)
    if isinstance(kept, dict):
        items = items_json(message, kept=kept.get("item"), form=kept.get("form"))
        return _Live(message, items, msgspec.convert(kept.get("losses", []), list[Loss]))
    return _Live(message, items_json(message), [])


def _audit_of(read: ReadItem) -> dict[str, Any]:
    """What an item's entry keeps beside its message: the item, its form, the losses."""
    kept: dict[str, Any] = {}
    if read.kept is not None:
        kept["item"] = read.kept
    if read.form is not None:
        kept["form"] = read.form
    if read.losses:
        kept["losses"] = msgspec.to_builtins([msgspec.structs.replace(loss, message=None) for loss in read.losses])
    return {AUDIT: kept} if kept else {}


class _Trail:
    """The session's conversation read as items: the live messages (in order, by message id)
    from the entries read so far, the seq and hash of the last one, and the writes. Every call
    runs under one lock (the session's calls come from worker threads)."""

    def __init__(self, store: ConversationStore, conversation_id: str, accept: Sequence[HeaderColumn] = ()) -> None:
        self.store = store
        self.id = conversation_id
        self.accept = accept
        self.lock = threading.Lock()
        self._seq = -1
        self._hash = ""
        self._live: dict[str, _Live] = {}
        self._generation = 0  # how many times the conversation was found replaced and read again

    # --- reading the trail --------------------------------------------------------------------

    def refresh(self) -> None:
        """Take the entries appended since the last one read (all of them again when that one
        is gone: the conversation was deleted or replaced)."""
        if self._seq >= 0:
            fresh = self.store.since(self.id, self._seq - 1)
            if fresh and fresh[0].seq == self._seq and fresh[0].hash == self._hash:
                self._take(fresh[1:])
                return
            self._forget()
        self._take(self._whole())

    def _whole(self) -> list[Entry]:
        """Every entry, read by ``store.load``: a session goes on only from a conversation whose
        header is its trail's (``HeaderMismatchError`` otherwise, unless accepted); none when
        there is no conversation yet."""
        try:
            return self.store.load(self.id, accept_header=self.accept).entries
        except KeyError:
            return []

    def _first(self) -> None:
        """Read the conversation before the first write to it (a write takes every entry since
        the last one read: it would skip the check)."""
        if self._seq < 0:
            self.refresh()

    def _forget(self) -> None:
        self._seq, self._hash, self._live = -1, "", {}
        self._generation += 1

    def _take(self, entries: Sequence[Entry], known: Mapping[str, _Live] | None = None) -> None:
        """Apply entries that follow the last one read (``known``: the items of this session's
        own new entries, by entry id, already written)."""
        for entry in entries:
            self._seq, self._hash = entry.seq, entry.hash
            message = entry.message
            if isinstance(message, SystemControlMessage):
                self._control(message)
                continue
            key = message_key(message) or entry.id
            live = (known or {}).get(entry.id) or _live_of(message, entry.audit)
            if live.items:
                self._live[key] = live
            else:  # a message of no item (a foreign writer's): nothing to show
                self._live.pop(key, None)

    def _control(self, message: SystemControlMessage) -> None:
        if message.control == CLEAR:
            self._live.clear()
        elif message.control == POP:
            key, index = message.params.get("message_id"), message.params.get("item")
            live = self._live.get(key) if isinstance(key, str) else None
            if live is None or not isinstance(index, int):
                return
            if index <= 0:
                del self._live[cast(str, key)]
            else:
                self._live[cast(str, key)] = msgspec.structs.replace(live, items=live.items[:index])

    # --- what the session asks ----------------------------------------------------------------

    def items(self, limit: int | None) -> list[bytes]:
        self.refresh()
        items = [item for live in self._live.values() for item in live.items]
        return items if limit is None else items[max(0, len(items) - limit) :] if limit else []

    def messages(self) -> list[Message]:
        self.refresh()
        return [live.message for live in self._live.values()]

    def report(self) -> LossReport:
        self.refresh()
        entries: list[Loss] = []
        position = 0
        for live in self._live.values():
            entries += [msgspec.structs.replace(loss, message=position) for loss in live.losses]
            position += len(live.items)
        return LossReport(entries=entries)

    def add(self, items: Sequence[Mapping[str, Any]]) -> None:
        self._first()
        names: dict[str, str] = {}  # the calls of the batch, then of the session
        read_all = False

        def tool_name(call_id: str) -> str | None:
            nonlocal read_all
            if call_id not in names and not read_all:  # a result whose call came before the batch
                self.refresh()
                read_all = True
                names.update((c.id, c.name) for live in self._live.values() for c in _calls(live.message))
            return names.get(call_id)

        reads: list[ReadItem] = []
        for index, item in enumerate(items):
            read = read_item(item, index=index, tool_name=tool_name)
            names.update((c.id, c.name) for c in _calls(read.message))
            reads.append(read)
        drafts: list[Draft] = []
        known: dict[str, _Live] = {}
        stamp = now()
        for read in reads:
            draft = Draft(
                id=new_id(),
                timestamp=stamp,
                message=read.message,
                decision=default_decision(read.message),
                audit=_audit_of(read),
            )
            drafts.append(draft)
            losses = [msgspec.structs.replace(loss, message=None) for loss in read.losses]
            known[draft.id] = _Live(read.message, [read.json], losses)
        self._commit(drafts, known, create=True)

    def pop(self) -> bytes | None:
        while True:
            self.refresh()
            if not self._live:
                return None
            key = next(reversed(self._live))
            live = self._live[key]
            index = len(live.items) - 1
            # the pop's message id is made from the item: of two workers claiming it, one is stored
            claim = SystemControlMessage(
                id=f"{key}/{POP}/{index}", control=POP, params={"message_id": key, "item": index}
            )
            draft = Draft(id=new_id(), timestamp=now(), message=claim, decision=POP)
            generation = self._generation
            entry = self._commit([draft], {}, create=False)
            if entry is None:
                return None  # the conversation is gone
            if entry.id == draft.id and self._generation == generation:
                return live.items[index]
            # another worker popped this item first (or the conversation was replaced, and the
            # claim names no item of it): the next one

    def clear(self) -> None:
        self._first()
        draft = Draft(id=new_id(), timestamp=now(), message=SystemControlMessage(control=CLEAR), decision=CLEAR)
        self._commit([draft], {}, create=False)

    def _commit(self, drafts: list[Draft], known: Mapping[str, _Live], *, create: bool) -> Entry | None:
        """Store ``drafts`` in one transaction and take every entry since the last one read;
        the first draft's entry (``None``: no conversation, and ``create`` is false)."""
        try:
            committed = self.store.commit(self.id, drafts, self._seq)
        except KeyError:
            if not create:
                self._forget()
                return None
            # made meanwhile by another worker, if this fails (any other failure shows again below)
            with contextlib.suppress(StoreError):
                self.store.create(id=self.id)
            committed = self.store.commit(self.id, drafts, self._seq)
        if committed.entries and committed.entries[0].seq != self._seq + 1:
            self._forget()  # the conversation was replaced under us: read it again whole
            self.refresh()
        else:
            self._take(committed.entries, known)
        return committed.results[0] if committed.results else None


def _calls(message: Message) -> list[ToolCallBlock]:
    return message.tool_calls if isinstance(message, AssistantMessage) else []


class StoreSession:
    """openai-agents' ``Session`` on a msgwire store (see the module docs): ``store`` is a
    store (``open_store(url)``) or an ``AsyncStore``; the conversation's id is ``session_id``.
    ``session_settings.limit`` is the default ``limit`` of ``get_items``. The first call reads
    the stored conversation with ``store.load``, so a session whose stored header columns are
    not what its trail says raises ``HeaderMismatchError``, unless ``accept_header`` names
    them."""

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        store: ConversationStore | AsyncStore,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        accept_header: Iterable[HeaderColumn] = (),
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
        sync = store.store if isinstance(store, AsyncStore) else store
        if not isinstance(sync, ConversationStore):
            raise TypeError(
                f"store must be a msgwire store (open_store(url)) or an AsyncStore, got {type(store).__name__}"
            )
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self.store = sync
        self._async = store if isinstance(store, AsyncStore) else None
        accept = tuple(accepted(accept_header))  # a bad name is refused here, not at the first read
        self._trail = _Trail(sync, session_id, accept)
        self._closed = False

    def close(self) -> None:
        """Close the session, as ``SQLiteSession.close()``: every call after it raises
        ``RuntimeError``; closing again does nothing. The store is the caller's and stays open
        (``store.close()`` closes it; a session whose store was closed raises ``RuntimeError``
        too)."""
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"StoreSession {self.session_id!r} is closed")

    def __repr__(self) -> str:
        return f"StoreSession({self.session_id!r}, {self.store.url!r})"

    # --- the Session protocol -----------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items in order, equal to what was added (the latest ``limit``; by
        default ``session_settings.limit``; ``None`` or a negative limit: all, ``0``: none, as
        ``SQLiteSession``)."""
        self._check_open()
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"limit must be an int or None, got {type(limit).__name__}")
        if limit is not None and limit < 0:
            limit = None  # as SQLiteSession: SQLite's LIMIT -1, no limit
        items = await self._read(lambda trail: trail.items(limit))
        return [cast(TResponseInputItem, _item_decoder.decode(item)) for item in items]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in one transaction (all or none), each one message. Raises
        ``TypeError`` for an item that is not a JSON object."""
        self._check_open()
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise TypeError(f"add_items takes a list of items, got {type(items).__name__}")
        if not items:
            return
        batch = list(items)
        await self._write(lambda trail: trail.add(cast(list[Mapping[str, Any]], batch)))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the last item and return it (``None`` when the session is empty): a
        ``system_control`` entry records the removal."""
        self._check_open()
        item = await self._write(lambda trail: trail.pop())
        return None if item is None else cast(TResponseInputItem, _item_decoder.decode(item))

    async def clear_session(self) -> None:
        """Remove every item: a ``system_control`` entry records it; the trail keeps them."""
        self._check_open()
        await self._write(lambda trail: trail.clear())

    # --- msgwire's side -----------------------------------------------------------------------

    async def messages(self) -> list[Message]:
        """The live items as msgwire messages, one per item (a ``provider_item`` unknown message
        for an item msgwire has no message for)."""
        self._check_open()
        return await self._read(lambda trail: trail.messages())

    async def report(self) -> LossReport:
        """What msgwire's messages do not carry of the live items (``Loss.message``: the item's
        position in ``get_items()``; action ``fallback``): a part the reader keeps whole
        (``kind="provider_part"``, ``block`` its place), an item kept whole as a ``provider_item``
        message or kept beside its message (``kind="item"``, the reason naming the fields). Every
        item comes back equal all the same."""
        self._check_open()
        return await self._read(lambda trail: trail.report())

    # --- running off the event loop -----------------------------------------------------------

    def _locked(self, work: Callable[[_Trail], T]) -> Callable[..., T]:
        trail = self._trail

        def run(*_: object) -> T:
            with trail.lock:
                try:
                    return work(trail)
                except ValueError as error:
                    if not str(error).endswith(" is closed"):  # the stores' words for it
                        raise
                    raise RuntimeError(f"StoreSession {self.session_id!r}: its store {error}") from error

        return run

    def _submit(self, work: Callable[[_Trail], T]) -> asyncio.Future[T]:
        job = self._locked(work)
        if self._async is not None:
            return asyncio.ensure_future(self._async.run(job))
        return asyncio.get_running_loop().run_in_executor(None, job)

    async def _read(self, work: Callable[[_Trail], T]) -> T:
        return await self._submit(work)

    async def _write(self, work: Callable[[_Trail], T]) -> T:
        """A write whose caller may be cancelled: its outcome is waited for first."""
        future = self._submit(work)
        cancelled: asyncio.CancelledError | None = None
        while not future.done():
            try:
                await asyncio.wait({future})
            except asyncio.CancelledError as exc:
                cancelled = cancelled or exc
        if cancelled is not None:
            future.exception()  # seen: the cancellation is what the caller gets
            raise cancelled
        return future.result()


if TYPE_CHECKING:

    def _is_a_session(session: StoreSession) -> Session:  # mypy checks the protocol here
        return session
