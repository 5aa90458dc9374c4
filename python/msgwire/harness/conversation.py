"""``Conversation``: a history in which every entry is traced, chained and exportable.

A conversation is an append-only list of ``Entry`` (``msgwire.harness.audit``): each records a
message as it stood, the decision it records and structured audit metadata, hash-chained to the
entry before it. Nothing is ever rewritten: when a message changes state (an approval sets a
tool call's ``approval``), the new state is a new entry with the same message id, and the
views (``messages()``, ``session()``) show each message at its latest state, in the order the
messages first appeared.

Decisions are open strings. The well-known ones (``DECISIONS``):

- ``user_input``: a user message;
- ``planning``: an assistant message that calls no tool (text, thinking, the final answer);
- ``tool_call_requested``: an assistant message with tool calls, as the model sent them;
- ``tool_call_approved`` / ``tool_call_denied``: one call decided; the entry's message is the
  assistant message's new state, the audit says who, why, and the arguments' fingerprint;
- ``tool_executed`` / ``tool_failed`` / ``permission_denied`` / ``tool_interrupted``: a tool
  result with status success / error / denied / interrupted;
- ``mode_change`` / ``branch_switch``: a ``system_control`` message {old, new};
- ``error``: something went wrong that the trail should show (a provider error, ...).

Thread safety: ``add``, ``update`` and ``record`` are atomic, from any number of threads or
asyncio tasks; entries get consecutive ``seq`` values in the order they were appended.

Binding a store: a *sink* (``EntrySink``: ``append(conversation, entries)``) is called with each
new entry, inside the append (under the conversation's lock), in seq order, before the entry
joins the conversation. When it raises, nothing is appended and the exception propagates:
memory and store never disagree. ``dirty`` lists the messages whose state
was replaced since the last ``take_dirty()``, for a store that writes one row per message.

A store that owns the sequence (``EntryLedger``: ``commit(conversation_id, drafts, after)``,
what ``msgwire.harness.store`` binds) takes *drafts* instead: it assigns ``seq`` and chains
each entry to the previous hash inside its own transaction, and hands back every entry
appended since the conversation's last one, other writers' included, so that the
conversation in memory stays the stored one (``sync()`` fetches them without appending).
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, Literal, Protocol, cast, overload, runtime_checkable

import msgspec

from msgwire import (
    AssistantMessage,
    Message,
    Session,
    SystemControlMessage,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
    system_control,
)
from msgwire.types import new_id, now

from . import audit as _audit
from .audit import DECISIONS, AuditHeader, Committed, Draft, Entry, Parent, Verification, default_decision, message_key

__all__ = [
    "DECISIONS",
    "AsyncEntryLedger",
    "Conversation",
    "Entry",
    "EntryLedger",
    "EntrySink",
    "Parent",
    "Verification",
    "default_decision",
    "message_key",
]


_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage, SystemControlMessage, UnknownMessage)


class EntrySink(Protocol):
    """Where a bound store receives entries: called inside each append, in seq order, with the
    new entries (one per ``add`` / ``update``). Raising refuses them: nothing is appended."""

    def append(self, conversation: Conversation, entries: Sequence[Entry], /) -> None: ...


@runtime_checkable
class EntryLedger(Protocol):
    """A store that owns ``seq`` and the chain (``msgwire.harness.store`` binds one).

    ``commit`` seals the drafts after the stored head in one transaction and returns every
    entry with a seq above ``after`` (the caller's last; ``None``: none but the drafts'),
    with each draft's entry; raising refuses them all. ``since`` returns the stored entries
    above ``after``."""

    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> Committed: ...

    def since(self, conversation_id: str, after: int, /) -> list[Entry]: ...


@runtime_checkable
class AsyncEntryLedger(EntryLedger, Protocol):
    """A store that commits without holding up the caller's event loop (msgwire's SQL stores):
    ``acommit`` returns at once a future of the running loop, resolved with what ``commit``
    would return once the drafts are stored (or with its error)."""

    def acommit(
        self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /
    ) -> asyncio.Future[Committed]: ...


class Conversation:
    """An audited conversation: header (id, system prompt, modes, branch, parent, metadata) and
    an append-only, hash-chained list of entries.

    ``modes`` maps a mode name to its system prompt; ``switch_mode`` records the change and
    updates the system prompt from it. The header is part of the chain (``msgwire.harness.audit``):
    ``metadata`` is fixed when the conversation is made (``metadata`` returns a copy).
    """

    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the conversation id, as Session's
        system_prompt: str | None = None,
        mode: str | None = None,
        modes: Mapping[str, str] | None = None,
        branch: str = "main",
        metadata: Mapping[str, Any] | None = None,
        created_at: dt.datetime | None = None,
        sink: EntrySink | EntryLedger | None = None,
    ) -> None:
        table = dict(modes or {})
        if system_prompt is None and mode is not None:
            system_prompt = table.get(mode)
        self._header = AuditHeader(
            conversation_id=id or new_id(),
            created_at=created_at or now(),
            system_prompt=system_prompt,
            mode=mode,
            modes=table,
            branch=branch,
            metadata=copy.deepcopy(dict(metadata or {})),
        )
        self._origin = _audit.Origin(mode=mode, system_prompt=system_prompt, branch=branch)
        self._header.chain = [_audit.Link(at=0, hash=_audit.header_link(self._header, _audit.GENESIS))]
        self._head = self._header.chain[0].hash
        self._set_sink(sink)
        self._lock = threading.RLock()
        self._entries: list[Entry] = []
        self._submitted: list[tuple[str, str]] = []  # (message key, kind) of each append under way (submit)
        self._latest: dict[str, Message] = {}  # message key -> latest state
        self._dirty: set[str] = set()
        self._unvouched: tuple[str, ...] = ()

    # --- header -----------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._header.conversation_id

    @property
    def created_at(self) -> dt.datetime:
        assert self._header.created_at is not None  # always set (here, or by load_document)
        return self._header.created_at

    @property
    def system_prompt(self) -> str | None:
        return self._header.system_prompt

    @property
    def mode(self) -> str | None:
        return self._header.mode

    @property
    def modes(self) -> dict[str, str]:
        """A copy of the mode table (mode -> system prompt)."""
        return dict(self._header.modes)

    @property
    def branch(self) -> str:
        return self._header.branch

    @property
    def parent(self) -> Parent | None:
        """The conversation and entry this one was forked from."""
        return self._header.parent

    @property
    def origin(self) -> _audit.Origin:
        """The mode, system prompt and branch the conversation was made with (its header link
        hashes them; its entries' changes made the current ones)."""
        return self._origin

    @property
    def metadata(self) -> dict[str, Any]:
        """A copy of the metadata (fixed when the conversation was made: the chain covers it)."""
        return copy.deepcopy(self._header.metadata)

    def bind(self, sink: EntrySink | EntryLedger | None) -> None:
        """Send every entry appended from now on to ``sink`` (``None`` unbinds): an
        ``EntrySink`` receives the sealed entries, an ``EntryLedger`` (a store) seals them."""
        with self._lock:
            self._set_sink(sink)

    def _set_sink(self, sink: EntrySink | EntryLedger | None) -> None:
        """The sink, and what kind it is (looked up once: a protocol check costs microseconds)."""
        self._sink = sink
        if sink is None:  # a conversation in memory (every agent's own): no protocol check
            self._ledger = self._async_ledger = None
            return
        self._ledger = sink if isinstance(sink, EntryLedger) else None
        self._async_ledger = sink if isinstance(sink, AsyncEntryLedger) else None

    @property
    def bound(self) -> EntrySink | EntryLedger | None:
        """The sink or store this conversation appends through (``None``: memory only)."""
        return self._sink

    def sync(self) -> list[Entry]:
        """Take the entries other writers appended to the bound store since this
        conversation's last one (none without an ``EntryLedger``); returns them."""
        with self._lock:
            sink = self._ledger
            if sink is None:
                return []
            fresh = sink.since(self.id, len(self._entries) - 1)
            for entry in fresh:
                self._take(entry)
            return fresh

    # --- entries ----------------------------------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        """A copy of the trail, in seq order."""
        with self._lock:
            return list(self._entries)

    @property
    def head(self) -> str:
        """The last hash of the chain (the last entry's; the header's link when there is no
        entry after it): keep it elsewhere to detect a rewritten or truncated tail with
        ``verify(head=...)``."""
        with self._lock:
            return self._head

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __contains__(self, message_id: object) -> bool:
        """Whether a message with this id is in the conversation."""
        with self._lock:
            return message_id in self._latest

    def entry(self, entry_id: str) -> Entry:
        """The entry with this id (``KeyError`` if none)."""
        with self._lock:
            for e in self._entries:
                if e.id == entry_id:
                    return e
        raise KeyError(entry_id)

    def add(self, message: Message, decision: str | None = None, audit: Mapping[str, Any] | None = None) -> Entry:
        """Append a new message (its id must be new to this conversation: ``ValueError``
        otherwise). ``decision`` defaults to ``default_decision(message)``."""
        return self._append(message, decision, audit, "new")

    def update(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None) -> Entry:
        """Append a new state of a message already here (same id and type; ``KeyError`` /
        ``TypeError`` otherwise), e.g. an assistant message whose tool call was approved.
        The old entries stay as they were; the message is marked dirty."""
        return self._append(message, decision, audit, "update")

    def record(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None) -> Entry:
        """``add`` for a new message id, ``update`` for a known one (what the tool runner calls)."""
        return self._append(message, decision, audit, "either")

    def _append(
        self,
        message: Message,
        decision: str | None,
        audit: Mapping[str, Any] | None,
        how: Literal["new", "update", "either"],
    ) -> Entry:
        if not isinstance(message, _MESSAGE_TYPES):
            raise TypeError(
                f"a conversation holds msgwire messages (msgwire.user(...), a UserMessage, ...), "
                f"got {type(message).__name__}"
            )
        if decision is None:
            decision = default_decision(message)
        entry_id = new_id()
        audit_dict = dict(audit) if audit else {}
        with self._lock:
            key = message_key(message) or entry_id
            old = self._latest.get(key)
            verdict = _audit.admission(how, key, message.type, old.type if old is not None else None, self.id)
            if verdict == "duplicate":
                raise ValueError(f"message id {key!r} is already in conversation {self.id!r}: use update()")
            if how == "either" and old is not None:
                how = "update"  # a message of its trail: the store need not look (one round trip)
            if self._ledger is not None:
                draft = Draft(
                    id=entry_id, timestamp=now(), message=message, decision=decision, audit=audit_dict, how=how
                )
                # after the last entry joined: appends submitted and stored since come back with it
                committed = self._ledger.commit(self.id, [draft], len(self._entries) - 1)
                self._take_committed(committed)
                return committed.results[0]
            entry = _audit.seal(
                id=entry_id,
                seq=len(self._entries),
                timestamp=now(),
                message=message,
                decision=decision,
                audit=audit_dict,
                prev=self._head,
            )
            if self._sink is not None:  # not a ledger (it sealed the entry itself, above): a sink
                cast("EntrySink", self._sink).append(self, [entry])  # raising refuses the entry: nothing changed yet
            self._take(entry)
            return entry

    # --- appends that do not hold up an event loop ---------------------------------------------

    async def aadd(
        self, message: Message, decision: str | None = None, audit: Mapping[str, Any] | None = None
    ) -> Entry:
        """``add`` for asyncio: with a store that commits off the loop (``AsyncEntryLedger``:
        msgwire's SQL stores) the loop goes on while it commits; otherwise as ``add``."""
        if self._async_ledger is None:  # nothing to wait for: no future made
            return self._append(message, decision, audit, "new")
        return await self.submit(message, decision, audit, how="new")

    async def aupdate(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None) -> Entry:
        """``update`` for asyncio (see ``aadd``)."""
        if self._async_ledger is None:  # nothing to wait for: no future made
            return self._append(message, decision, audit, "update")
        return await self.submit(message, decision, audit, how="update")

    async def arecord(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None) -> Entry:
        """``record`` for asyncio (see ``aadd``)."""
        if self._async_ledger is None:  # nothing to wait for: no future made
            return self._append(message, decision, audit, "either")
        return await self.submit(message, decision, audit, how="either")

    def submit(
        self,
        message: Message,
        decision: str | None = None,
        audit: Mapping[str, Any] | None = None,
        *,
        how: Literal["new", "update", "either"] = "either",
    ) -> asyncio.Future[Entry]:
        """Start an append (``how``: ``"new"`` as ``add``, ``"update"``, ``"either"`` as
        ``record``) and return at once a future of the running event loop, which gets its entry
        once the store committed it (or its error): what ``aadd`` awaits. The appends submitted
        to one conversation are stored in the order submitted, and join it in that order; one
        whose future is cancelled is stored and joins it all the same. Without a store that
        commits off the loop, the append is done before this returns (the future is done)."""
        loop = asyncio.get_running_loop()
        result: asyncio.Future[Entry] = loop.create_future()
        ledger = self._async_ledger
        if ledger is None:
            try:
                result.set_result(self._append(message, decision, audit, how))
            except Exception as exc:
                result.set_exception(exc)
            return result
        if not isinstance(message, _MESSAGE_TYPES):
            raise TypeError(
                f"a conversation holds msgwire messages (msgwire.user(...), a UserMessage, ...), "
                f"got {type(message).__name__}"
            )
        if decision is None:
            decision = default_decision(message)
        entry_id = new_id()
        with self._lock:
            key = message_key(message) or entry_id
            old = self._latest.get(key)
            kind = old.type if old is not None else next((k for m, k in reversed(self._submitted) if m == key), None)
            verdict = _audit.admission(how, key, message.type, kind, self.id)
            if verdict == "duplicate":
                raise ValueError(f"message id {key!r} is already in conversation {self.id!r}: use update()")
            if how == "either" and kind is not None:
                how = "update"  # a message of its trail: the store need not look (one round trip)
            draft = Draft(
                id=entry_id, timestamp=now(), message=message, decision=decision, audit=dict(audit or {}), how=how
            )
            # after the appends under way: the store commits them first, in order
            stored = ledger.acommit(self.id, [draft], len(self._entries) - 1 + len(self._submitted))
            pending = (key, message.type)
            self._submitted.append(pending)

        def joined(stored: asyncio.Future[Committed]) -> None:
            with self._lock:
                self._submitted.remove(pending)
                failure = stored.exception() if not stored.cancelled() else asyncio.CancelledError()
                if failure is None:
                    committed = stored.result()
                    self._take_committed(committed)
            if result.done():
                return
            if failure is not None:
                result.set_exception(failure)
            else:
                result.set_result(committed.results[0])

        stored.add_done_callback(joined)
        return result

    def _take_committed(self, committed: Committed) -> None:
        """Join what a store committed: every entry above this conversation's last, in seq order
        (one already joined, by an append that committed after it and read it back, is not
        joined twice; one beyond a gap, which an append still under way will fill, is left to
        the next append or ``sync()``, which read it back)."""
        for entry in committed.entries:
            if entry.seq == len(self._entries):
                self._take(entry)

    def _take(self, entry: Entry) -> None:
        """Join a sealed entry (in seq order): the trail, the latest state, the dirty set, the
        header (``audit.apply_change``)."""
        message = entry.message
        key = message_key(message) or entry.id
        if key in self._latest:
            self._dirty.add(key)
        self._entries.append(entry)
        self._latest[key] = message
        self._head = entry.hash
        _audit.apply_change(self._header, entry)

    # --- views ------------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """Every message at its latest state, in the order the messages first appeared."""
        with self._lock:
            return list(self._latest.values())

    def message(self, message_id: str) -> Message:
        """The latest state of one message (``KeyError`` if none)."""
        with self._lock:
            return self._latest[message_id]

    def messages_for_model(self) -> list[Message]:
        """What a model should see: ``messages()`` without ``system_control`` (and unknown)
        messages."""
        return self.session().messages_for_model()

    def session(self) -> Session:
        """A ``msgwire.Session`` of the latest states (for ``dumps``, ``formats.to_request``,
        ``context.build``): a new Session each call; the messages are the conversation's own
        frozen objects."""
        with self._lock:
            updated = self._entries[-1].timestamp if self._entries else self.created_at
            return Session(
                id=self.id,
                system_prompt=self.system_prompt,
                created_at=self.created_at,
                updated_at=updated,
                metadata=self.metadata,
                messages=list(self._latest.values()),
            )

    @property
    def dirty(self) -> frozenset[str]:
        """Ids of the messages whose state was replaced (``update``) since ``take_dirty()``."""
        with self._lock:
            return frozenset(self._dirty)

    def take_dirty(self) -> set[str]:
        """The dirty message ids, cleared at once (for a store's flush)."""
        with self._lock:
            taken, self._dirty = self._dirty, set()
            return taken

    # --- system control ---------------------------------------------------------------------

    def switch_mode(self, new: str, *, by: str | None = None, reason: str | None = None) -> Entry | None:
        """Record a ``mode_change`` {old, new} and take the system prompt from the mode table
        (kept as it is for a mode the table does not have; ``ValueError`` for a mode outside a
        non-empty table). The audit keeps both system prompts. Switching to the mode the
        conversation is in records nothing (``None``)."""
        with self._lock:
            if self._header.modes and new not in self._header.modes:
                raise ValueError(f"unknown mode {new!r} (modes: {', '.join(self._header.modes)})")
            old, old_prompt = self.mode, self.system_prompt
            if new == old:
                return None
            prompt = self._header.modes.get(new, old_prompt)
            audit = _who(by, reason) | {"system_prompt": {"old": old_prompt, "new": prompt}}
            return self._append(system_control("mode_change", old=old, new=new), "mode_change", audit, "new")

    def switch_branch(self, name: str, *, by: str | None = None, reason: str | None = None) -> Entry:
        """Record a ``branch_switch`` {old, new}, marking the transition in the trail."""
        with self._lock:
            message = system_control("branch_switch", old=self.branch, new=name)
            return self._append(message, "branch_switch", _who(by, reason), "new")

    def fork(self, at: str | None = None, *, id: str | None = None) -> Conversation:  # noqa: A002
        """An independent copy up to and including entry ``at`` (all of it for ``None``): a new
        id, the same entries (ids, seq, hashes: the fork proves its common past), the mode,
        branch and system prompt as they stood at ``at``, and ``parent`` recorded; the fork's
        own header is chained after the entries it kept. Nothing mutable is shared; the sink is
        not carried over."""
        with self._lock:
            if at is None:
                kept = list(self._entries)
            else:
                index = next((i for i, e in enumerate(self._entries) if e.id == at), None)
                if index is None:
                    raise KeyError(f"no entry {at!r} in conversation {self.id!r}")
                kept = self._entries[: index + 1]
            last = kept[-1] if kept else None
            header = _audit.fork_header(self._header, len(kept), last, self._entries[len(kept) :], id or new_id())
        return Conversation._from_parts(copy.deepcopy(header), [_detach(e) for e in kept])

    # --- audit ------------------------------------------------------------------------------

    def verify(self, *, head: str | None = None) -> Verification:
        """Check the hash chain, header included; the result is true when it holds, or names
        the first entry changed, removed or reordered, or the header rewritten (see
        ``msgwire.harness.audit.Verification``). A conversation a store loaded with header
        columns its trail does not vouch for (``accept_header=``) fails here with
        ``problem="header"``, the detail naming each column."""
        with self._lock:
            header, entries = self._header_copy(), list(self._entries)
        result = _audit.verify(entries, head=head, header=_audit.made_header(header, self._origin))
        if not self._unvouched:
            return result
        at = header.chain[-1].at if header.chain else 0
        if not result and result.seq is not None and result.seq < at:
            return result  # a problem before the header's link comes first
        return Verification(
            ok=False,
            problem="header",
            seq=at,
            detail="the store's header is not what the trail says: " + "; ".join(self._unvouched),
            checked=min(result.checked, at),
            header=result.header,
        )

    @property
    def unvouched(self) -> tuple[str, ...]:
        """What of the header its trail does not vouch for: each column a store kept otherwise
        than the trail says, accepted as stored by whoever loaded it (``accept_header=``), as a
        sentence naming the column (``verify()`` fails on them); empty for any other."""
        return self._unvouched

    @overload
    def export_audit(self, dest: None = None, *, format: Literal["json", "jsonl"] = "json") -> bytes: ...
    @overload
    def export_audit(
        self, dest: str | os.PathLike[str] | IO[bytes], *, format: Literal["json", "jsonl"] = "json"
    ) -> None: ...
    def export_audit(
        self,
        dest: str | os.PathLike[str] | IO[bytes] | None = None,
        *,
        format: Literal["json", "jsonl"] = "json",  # noqa: A002
    ) -> bytes | None:
        """The trail with its header as JSON (``{"version": 2, "conversation_id", ...,
        "chain": [...], "entries": [...]}``, the header as the conversation was made: the entries
        say what changed) or JSON Lines (the header, then one entry per line): the bytes, or
        written to ``dest`` (a path or a binary file)."""
        with self._lock:
            header, entries = self._header_copy(), list(self._entries)
        if header.chain:  # a chained export holds the header as it was made (a version 1 one, as it is)
            header = _audit.made_header(header, self._origin)
        dump = _audit.dump_document if format == "json" else _audit.dump_lines
        data = dump(header, entries)
        if dest is None:
            return data
        if isinstance(dest, (str, os.PathLike)):
            with open(dest, "wb") as f:
                f.write(data)
        else:
            dest.write(data)
        return None

    @classmethod
    def load_audit(
        cls,
        source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes],
        *,
        format: Literal["json", "jsonl"] | None = None,  # noqa: A002
    ) -> Conversation:
        """A conversation from ``export_audit`` output (JSON or JSON Lines, detected):
        ``load_audit(c.export_audit()) == c``. ``source`` is the document itself (bytes, or a
        ``str`` that starts with ``{`` or ``[``), a path (a ``str`` or ``pathlib.Path``; a
        missing file raises ``FileNotFoundError``) or a binary file. The mode, branch and
        system prompt are those the trail's last ``mode_change`` / ``branch_switch`` set, when it
        has any. Loading does not verify: call ``verify()``."""
        if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
            data = source.encode()
        elif isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as f:
                data = f.read()
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            data = source.read()
        header, entries = _audit.load_document(data, format)
        return cls._from_parts(header, entries, replay=True)

    @classmethod
    def restore(
        cls,
        header: AuditHeader,
        entries: list[Entry],
        *,
        origin: _audit.Origin | None = None,
        sink: EntrySink | EntryLedger | None = None,
        replay: bool = False,
        unvouched: Sequence[str] = (),
    ) -> Conversation:
        """A conversation from a header and its entries as a store keeps them, bound to
        ``sink``. The header's mode, branch and system prompt are taken as they are (``origin``:
        as it was made, when it has changed since), or with ``replay`` the header is as it was
        made and the entries' mode changes and branch switches are applied to it (as
        ``load_audit`` does). ``unvouched``: what of the header the trail does not vouch for,
        one sentence per column (``verify()`` fails on them; see ``unvouched``)."""
        conversation = cls._from_parts(header, entries, origin=origin, replay=replay)
        conversation._set_sink(sink)
        conversation._unvouched = tuple(unvouched)
        return conversation

    def header(self) -> AuditHeader:
        """The header as exported (id, created_at, system prompt, mode, modes, branch, parent,
        metadata, chain): a copy."""
        with self._lock:
            return self._header_copy()

    # --- internals --------------------------------------------------------------------------

    def _header_copy(self) -> AuditHeader:
        return msgspec.structs.replace(
            self._header,
            modes=dict(self._header.modes),
            metadata=copy.deepcopy(self._header.metadata),
            chain=list(self._header.chain),
        )

    @classmethod
    def _from_parts(
        cls, header: AuditHeader, entries: list[Entry], *, replay: bool = False, origin: _audit.Origin | None = None
    ) -> Conversation:
        """A conversation of these entries. ``replay``: the header is as it was made (an
        export's), and the mode, branch and system prompt are what the trail's changes leave, by
        ``audit.apply_change``. ``origin``: as the header was made (else as it is given)."""
        conversation = cls.__new__(cls)
        conversation._header = header
        conversation._origin = origin or _audit.Origin(
            mode=header.mode, system_prompt=header.system_prompt, branch=header.branch
        )
        conversation._set_sink(None)
        conversation._lock = threading.RLock()
        conversation._entries = entries
        conversation._submitted = []
        conversation._dirty = set()
        conversation._unvouched = ()
        conversation._head = _audit.chain_head(entries, header.chain)
        latest = conversation._latest = {}
        for e in entries:  # one pass: the latest state of each message, and the header's changes
            message = e.message
            if isinstance(message, UnknownMessage):
                latest[message_key(message) or e.id] = message
                continue
            latest[message.id or e.id] = message
            if replay and type(message) is SystemControlMessage:
                _audit.apply_change(header, e)
        return conversation

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Conversation):
            return NotImplemented
        if other is self:
            return True
        return self._snapshot() == other._snapshot()

    def _snapshot(self) -> tuple[AuditHeader, list[Entry]]:
        with self._lock:
            return self._header_copy(), list(self._entries)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Conversation(id={self.id!r}, entries={len(self._entries)}, mode={self.mode!r}, branch={self.branch!r})"


def _who(by: str | None, reason: str | None) -> dict[str, Any]:
    return {k: v for k, v in (("by", by), ("reason", reason)) if v is not None}


def _detach(entry: Entry) -> Entry:
    """A copy sharing nothing mutable with ``entry`` (a frozen message still holds lists and
    dicts); equal to it, with the same canonical bytes."""
    return msgspec.structs.replace(entry, message=_detach_message(entry.message), audit=copy.deepcopy(entry.audit))


def _detach_message(message: Message) -> Message:
    if isinstance(message, UnknownMessage):
        return message  # immutable
    if isinstance(message, SystemControlMessage):
        return msgspec.structs.replace(message, params=copy.deepcopy(message.params))
    if isinstance(message, ToolResultMessage):
        return msgspec.structs.replace(
            message, content=list(message.content), structured_content=copy.deepcopy(message.structured_content)
        )
    return msgspec.structs.replace(message, content=list(message.content))
