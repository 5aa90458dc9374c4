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

import copy
import datetime as dt
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, overload, runtime_checkable

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
from .audit import GENESIS, AuditHeader, Committed, Draft, Entry, Parent, Verification

if TYPE_CHECKING:
    from .replay import ReplayReport

__all__ = [
    "DECISIONS",
    "Conversation",
    "Entry",
    "EntryLedger",
    "EntrySink",
    "Parent",
    "Verification",
    "default_decision",
    "message_key",
    "state_before",
]

DECISIONS = (
    "user_input",
    "planning",
    "tool_call_requested",
    "tool_call_approved",
    "tool_call_denied",
    "tool_executed",
    "tool_failed",
    "permission_denied",
    "tool_interrupted",
    "mode_change",
    "branch_switch",
    "error",
)
"""The well-known values of ``Entry.decision`` (any other string is allowed)."""

_RESULT_DECISIONS = {
    "success": "tool_executed",
    "error": "tool_failed",
    "denied": "permission_denied",
    "interrupted": "tool_interrupted",
}


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


def default_decision(message: Message) -> str:
    """The decision ``add`` records when none is given, from the kind of message."""
    if isinstance(message, UserMessage):
        return "user_input"
    if isinstance(message, AssistantMessage):
        return "tool_call_requested" if message.tool_calls else "planning"
    if isinstance(message, ToolResultMessage):
        return _RESULT_DECISIONS.get(message.status, "tool_failed")
    if isinstance(message, SystemControlMessage):
        return message.control
    return "unknown"


class Conversation:
    """An audited conversation: header (id, system prompt, modes, branch, parent, metadata) and
    an append-only, hash-chained list of entries.

    ``modes`` maps a mode name to its system prompt; ``switch_mode`` records the change and
    updates the system prompt from it. ``metadata`` is free (not part of the chain).
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
        self._modes = dict(modes or {})
        if system_prompt is None and mode is not None:
            system_prompt = self._modes.get(mode)
        self._id = id or new_id()
        self._created_at = created_at or now()
        self._system_prompt = system_prompt
        self._mode = mode
        self._branch = branch
        self._parent: Parent | None = None
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._sink = sink
        self._lock = threading.RLock()
        self._entries: list[Entry] = []
        self._latest: dict[str, Message] = {}  # message key -> latest state
        self._dirty: set[str] = set()

    # --- header -----------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._id

    @property
    def created_at(self) -> dt.datetime:
        return self._created_at

    @property
    def system_prompt(self) -> str | None:
        return self._system_prompt

    @property
    def mode(self) -> str | None:
        return self._mode

    @property
    def modes(self) -> dict[str, str]:
        """A copy of the mode table (mode -> system prompt)."""
        return dict(self._modes)

    @property
    def branch(self) -> str:
        return self._branch

    @property
    def parent(self) -> Parent | None:
        """The conversation and entry this one was forked from."""
        return self._parent

    def bind(self, sink: EntrySink | EntryLedger | None) -> None:
        """Send every entry appended from now on to ``sink`` (``None`` unbinds): an
        ``EntrySink`` receives the sealed entries, an ``EntryLedger`` (a store) seals them."""
        with self._lock:
            self._sink = sink

    @property
    def bound(self) -> EntrySink | EntryLedger | None:
        """The sink or store this conversation appends through (``None``: memory only)."""
        return self._sink

    def sync(self) -> list[Entry]:
        """Take the entries other writers appended to the bound store since this
        conversation's last one (none without an ``EntryLedger``); returns them."""
        with self._lock:
            sink = self._sink
            if not isinstance(sink, EntryLedger):
                return []
            fresh = sink.since(self._id, len(self._entries) - 1)
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
        """The last entry's hash (``GENESIS`` when empty): keep it elsewhere to detect a
        rewritten or truncated tail with ``verify(head=...)``."""
        with self._lock:
            return self._entries[-1].hash if self._entries else GENESIS

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
        if decision is None:
            decision = default_decision(message)
        entry_id = new_id()
        audit_dict = dict(audit) if audit else {}
        with self._lock:
            key = message_key(message) or entry_id
            old = self._latest.get(key)
            if old is not None and how == "new":
                raise ValueError(f"message id {key!r} is already in conversation {self._id!r}: use update()")
            if old is None and how == "update":
                raise KeyError(f"no message with id {key!r} in conversation {self._id!r}")
            if old is not None and type(old) is not type(message):
                raise TypeError(f"message {key!r} is a {type(old).__name__}, not a {type(message).__name__}")
            if isinstance(self._sink, EntryLedger):
                draft = Draft(
                    id=entry_id, timestamp=now(), message=message, decision=decision, audit=audit_dict, how=how
                )
                committed = self._sink.commit(self._id, [draft], len(self._entries) - 1)
                for fresh in committed.entries:
                    self._take(fresh)
                return committed.results[0]
            prev = self._entries[-1].hash if self._entries else GENESIS
            entry = _audit.seal(
                id=entry_id,
                seq=len(self._entries),
                timestamp=now(),
                message=message,
                decision=decision,
                audit=audit_dict,
                prev=prev,
            )
            if self._sink is not None:
                self._sink.append(self, [entry])  # raising refuses the entry: nothing changed yet
            self._entries.append(entry)
            self._latest[key] = message
            if old is not None:
                self._dirty.add(key)
            change = _header_change(message)
            if change is not None:
                self._apply(*change)
            return entry

    def _take(self, entry: Entry) -> None:
        """Join an entry a store sealed (in seq order): the trail, the latest state, the
        dirty set, the header."""
        message = entry.message
        key = message_key(message) or entry.id
        if key in self._latest:
            self._dirty.add(key)
        self._entries.append(entry)
        self._latest[key] = message
        change = _header_change(message)
        if change is not None:
            self._apply(*change)

    def _apply(self, control: str, new: str) -> None:
        """A mode change or branch switch the trail records, applied to the header (the same
        rule ``load_audit`` replays, so memory and a loaded export always agree)."""
        if control == "mode_change":
            self._mode = new
            self._system_prompt = self._modes.get(new, self._system_prompt)
        else:
            self._branch = new

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
            updated = self._entries[-1].timestamp if self._entries else self._created_at
            return Session(
                id=self._id,
                system_prompt=self._system_prompt,
                created_at=self._created_at,
                updated_at=updated,
                metadata=dict(self.metadata),
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

    def switch_mode(self, new: str, *, by: str | None = None, reason: str | None = None) -> Entry:
        """Record a ``mode_change`` {old, new} and take the system prompt from the mode table
        (kept as it is for a mode the table does not have; ``ValueError`` for a mode outside a
        non-empty table). The audit keeps both system prompts."""
        with self._lock:
            if self._modes and new not in self._modes:
                raise ValueError(f"unknown mode {new!r} (modes: {', '.join(self._modes)})")
            old, old_prompt = self._mode, self._system_prompt
            prompt = self._modes.get(new, old_prompt)
            audit = _who(by, reason) | {"system_prompt": {"old": old_prompt, "new": prompt}}
            return self._append(system_control("mode_change", old=old, new=new), "mode_change", audit, "new")

    def switch_branch(self, name: str, *, by: str | None = None, reason: str | None = None) -> Entry:
        """Record a ``branch_switch`` {old, new}, marking the transition in the trail."""
        with self._lock:
            message = system_control("branch_switch", old=self._branch, new=name)
            return self._append(message, "branch_switch", _who(by, reason), "new")

    def fork(self, at: str | None = None, *, id: str | None = None) -> Conversation:  # noqa: A002
        """An independent copy up to and including entry ``at`` (all of it for ``None``): a new
        id, the same entries (ids, seq, hashes: the fork proves its common past), the mode,
        branch and system prompt as they stood at ``at``, and ``parent`` recorded. Nothing
        mutable is shared; the sink is not carried over."""
        with self._lock:
            if at is None:
                kept = list(self._entries)
            else:
                index = next((i for i, e in enumerate(self._entries) if e.id == at), None)
                if index is None:
                    raise KeyError(f"no entry {at!r} in conversation {self._id!r}")
                kept = self._entries[: index + 1]
            later = self._entries[len(kept) :]
            header = self._header()
            header.mode, header.system_prompt, header.branch = state_before(later, header)
            header.conversation_id = id or new_id()
            header.created_at = now()
            header.parent = Parent(
                conversation_id=self._id,
                entry_id=kept[-1].id if kept else None,
                hash=kept[-1].hash if kept else None,
            )
        return Conversation._from_parts(copy.deepcopy(header), [_detach(e) for e in kept])

    # --- replay -----------------------------------------------------------------------------

    def replay(self, provider: Any, **options: Any) -> tuple[Conversation, ReplayReport]:
        """Re-run this conversation's recorded model turns against ``provider`` (another model,
        another dialect): the new conversation and a ``ReplayReport`` of what changed and what
        the target could not take. A thin call of ``msgwire.harness.replay.replay`` (which
        lives with the agent: it runs a provider); ``options`` are its own (``model``,
        ``tools``, ``execute_tools``, ...)."""
        from .replay import replay

        return replay(self, provider, **options)

    # --- audit ------------------------------------------------------------------------------

    def verify(self, *, head: str | None = None) -> Verification:
        """Check the hash chain; the result is true when it holds, or names the first entry
        changed, removed or reordered (see ``msgwire.harness.audit.Verification``)."""
        return _audit.verify(self.entries, head=head)

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
        """The trail with its header as JSON (``{"version": 1, "conversation_id", ...,
        "entries": [...]}``) or JSON Lines (the header, then one entry per line): the bytes,
        or written to ``dest`` (a path or a binary file)."""
        with self._lock:
            header, entries = self._header(), list(self._entries)
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
        ``load_audit(c.export_audit()) == c``. ``source`` is the document itself (bytes or
        str), a path (``pathlib.Path``) or a binary file. The mode, branch and system prompt
        are those the trail's last ``mode_change`` / ``branch_switch`` set, when it has any.
        Loading does not verify: call ``verify()``."""
        if isinstance(source, os.PathLike):
            with open(source, "rb") as f:
                data = f.read()
        elif isinstance(source, str):
            data = source.encode()
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            data = source.read()
        header, entries = _audit.load_document(data, format)
        return cls._from_parts(header, entries, replay=True)

    @classmethod
    def restore(
        cls, header: AuditHeader, entries: list[Entry], *, sink: EntrySink | EntryLedger | None = None
    ) -> Conversation:
        """A conversation from a header and its entries as a store keeps them (the header's
        mode, branch and system prompt are taken as they are), bound to ``sink``."""
        conversation = cls._from_parts(header, entries)
        conversation._sink = sink
        return conversation

    def header(self) -> AuditHeader:
        """The header as exported (id, created_at, system prompt, mode, modes, branch, parent,
        metadata): a copy."""
        with self._lock:
            return self._header()

    # --- internals --------------------------------------------------------------------------

    def _header(self) -> AuditHeader:
        return AuditHeader(
            conversation_id=self._id,
            created_at=self._created_at,
            system_prompt=self._system_prompt,
            mode=self._mode,
            modes=dict(self._modes),
            branch=self._branch,
            parent=self._parent,
            metadata=dict(self.metadata),
        )

    @classmethod
    def _from_parts(cls, header: AuditHeader, entries: list[Entry], *, replay: bool = False) -> Conversation:
        """A conversation of these entries. ``replay``: the mode, branch and system prompt are
        what the trail's changes leave (the chained trail wins over the header; a log's header
        may predate them), by the rule ``_apply`` follows."""
        conversation = cls(
            id=header.conversation_id,
            system_prompt=header.system_prompt,
            mode=header.mode,
            modes=header.modes,
            branch=header.branch,
            metadata=header.metadata,
            created_at=header.created_at,  # always set by load_document
        )
        conversation._parent = header.parent
        conversation._entries = entries
        latest = conversation._latest
        for e in entries:  # one pass: the latest state of each message, and the header's changes
            message = e.message
            if isinstance(message, UnknownMessage):
                latest[message_key(message) or e.id] = message
                continue
            latest[message.id or e.id] = message
            if replay and type(message) is SystemControlMessage:
                change = _header_change(message)
                if change is not None:
                    conversation._apply(*change)
        return conversation

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Conversation):
            return NotImplemented
        if other is self:
            return True
        return self._snapshot() == other._snapshot()

    def _snapshot(self) -> tuple[AuditHeader, list[Entry]]:
        with self._lock:
            return self._header(), list(self._entries)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"Conversation(id={self._id!r}, entries={len(self._entries)}, mode={self._mode!r}, branch={self._branch!r})"
        )


def message_key(message: Message) -> str | None:
    """The id a message is known by; an unknown message's own ``id`` field when it has one."""
    if isinstance(message, UnknownMessage):
        data = message.data()
        value = data.get("id") if isinstance(data, dict) else None
        return value if isinstance(value, str) and value else None
    return message.id or None


def _who(by: str | None, reason: str | None) -> dict[str, Any]:
    return {k: v for k, v in (("by", by), ("reason", reason)) if v is not None}


def _header_change(message: Message) -> tuple[str, str] | None:
    """``(control, new)`` for a ``mode_change`` / ``branch_switch`` that names its new state."""
    if type(message) is SystemControlMessage and message.control in ("mode_change", "branch_switch"):
        new = message.params.get("new")
        if isinstance(new, str):
            return message.control, new
    return None


def state_before(later: Sequence[Entry], header: AuditHeader) -> tuple[str | None, str | None, str]:
    """Mode, system prompt and branch before the ``later`` entries: what the first change
    among them says was ``old`` (the prompt from its audit, else the mode table), else the
    current values."""
    mode, prompt, branch = header.mode, header.system_prompt, header.branch
    mode_found = branch_found = False
    for e in later:
        change = _header_change(e.message)
        if change is None:
            continue
        params = e.message.params  # type: ignore[union-attr]
        old = params.get("old")
        if change[0] == "mode_change" and not mode_found:
            mode_found = True
            mode = old if isinstance(old, str) else None
            recorded = e.audit.get("system_prompt")
            if isinstance(recorded, dict) and (recorded.get("old") is None or isinstance(recorded.get("old"), str)):
                prompt = recorded.get("old")
            elif mode in header.modes:
                prompt = header.modes[mode]
        elif change[0] == "branch_switch" and not branch_found:
            branch_found = True
            branch = old if isinstance(old, str) else branch
        if mode_found and branch_found:
            break
    return mode, prompt, branch


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
