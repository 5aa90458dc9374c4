"""The audit trail: entries, their hash chain, export and load (JSON and JSON Lines), verify.

Each ``Entry`` is sealed when it is appended: its *canonical bytes* are the compact JSON object
``{"id", "seq", "timestamp", "message", "decision", "audit"}`` as msgwire writes it (the
``message`` part is byte for byte ``msgwire.dumps(message)``), and its ``hash`` is
``sha256(prev_hash + canonical bytes)`` in hex, ``prev_hash`` being the previous entry's hash
(``GENESIS`` for the first). Changing, removing or reordering an entry breaks the chain at that
entry, and ``verify`` names it.

The header is chained too, where it begins: a new conversation's header (its id, creation time,
system prompt, mode, modes, branch, parent and metadata as they were when it was made) is hashed
into the chain before its first entry, ``link = sha256(GENESIS + header bytes)``, and the first
entry chains to that link; a fork keeps its parent's entries and hashes and links its own header
after them, ``sha256(last kept hash + header bytes)``. The export lists these links (``chain``:
``{"at": entries before it, "hash"}``, a fork's ancestors first) and the header as it was made
(its mode, branch and system prompt before any entry changed them: loading replays the
changes); ``verify`` recomputes the conversation's own link from that header, so a rewritten
system prompt, mode table, metadata, id, creation time or parent is named (``problem="header"``).
A trail exported before headers were chained (``version`` 1, no ``chain``, the header's mode and
prompt as they were at the export) still reads and verifies entry by entry;
``Verification.header`` then says ``"unchained"``. A store keeps the header's fields in columns
too; ``msgwire.harness.store.header`` checks each against the trail when a conversation is read.

The rules the trail follows are written here once, for memory and every store alike:
``default_decision`` (the decision of a message added without one; ``RESULT_DECISIONS`` for tool
results), ``admission`` (``add`` / ``update`` / ``record`` of a message id, new or known),
``apply_change`` (how a ``mode_change`` or ``branch_switch`` entry changes the header: the system
prompt its audit recorded, else the mode table's) and ``state_before`` (the same, backwards).

The chain holds no secret: whoever can rewrite the whole tail can recompute its hashes. Keep the
last hash (``Conversation.head``) somewhere else (a store, a log, a signed receipt) and pass it
to ``verify(head=...)`` to detect that too, including entries cut off the end.

Export: ``{"version": 2, "conversation_id", "created_at", "system_prompt", "mode", "modes",
"branch", "parent", "metadata", "chain", "entries": [{"id", "seq", "timestamp", "message",
"decision", "audit", "hash"}, ...]}`` (the header as it was made: the entries' mode changes and
branch switches say what became of it); JSON Lines is the same header on the first line and one entry per
line after it, for append-only logs (an unknown message kept byte for byte whose whitespace
holds line breaks spans several lines; ``load_document`` reads it back). Both are written by
msgwire's codec (``msgwire.dumps``: one cached msgspec encoder; ``encode_lines`` through an
encoder with the same hook), so the bytes hashed are the bytes written.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import msgspec

from msgwire import (
    AssistantMessage,
    Message,
    SystemControlMessage,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
    dumps,
    loads,
)
from msgwire.errors import DecodeError, from_msgspec

__all__ = [
    "AUDIT_VERSION",
    "DECISIONS",
    "GENESIS",
    "RESULT_DECISIONS",
    "AuditDocument",
    "AuditHeader",
    "Committed",
    "Draft",
    "Entry",
    "HeaderState",
    "Link",
    "Origin",
    "Parent",
    "Sealed",
    "Verification",
    "admission",
    "apply_change",
    "chain_hash",
    "chain_head",
    "decode_entries",
    "default_decision",
    "dump_document",
    "dump_lines",
    "entry_bytes",
    "fork_header",
    "header_link",
    "load_document",
    "made_header",
    "message_key",
    "seal",
    "seal_draft",
    "state_before",
    "updates_stored",
    "verify",
]

AUDIT_VERSION = 2
"""The version of the export this msgwire writes (1: before headers were chained; both read)."""
GENESIS = "0" * 64
"""What a new conversation's header is chained to (and, in a trail of version 1, its first entry)."""

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

RESULT_DECISIONS = {
    "success": "tool_executed",
    "error": "tool_failed",
    "denied": "permission_denied",
    "interrupted": "tool_interrupted",
}
"""The decision of a tool result's entry, by its status."""


class Entry(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One record of the trail: a message as it stood at that moment and the decision it records.

    - ``id``: the entry's own id (a message appears in several entries when it changes state,
      e.g. an assistant message whose tool calls get approved);
    - ``seq``: the position in the trail, from 0;
    - ``timestamp``: when the entry was appended (UTC);
    - ``decision``: an open string (see ``msgwire.harness.conversation`` for the well-known values);
    - ``audit``: structured metadata (who decided, why, fingerprints, durations, sizes);
    - ``hash``: ``sha256(previous hash + the entry's canonical bytes)``, hex.

    Entries are made by ``Conversation``; ``seq = -1`` and ``hash = ""`` only appear on an entry
    read from a document that has none (they are filled on load, see ``load_document``).
    """

    id: str
    seq: int = -1
    timestamp: dt.datetime
    message: Message
    decision: str
    audit: dict[str, Any] = msgspec.field(default_factory=dict)
    hash: str = ""


class Draft(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An entry not sealed yet: what a conversation bound to a store hands it, so that the
    store gives the ``seq`` and chains it to the previous hash inside its own transaction.

    ``how``: ``"new"`` (a new message id; a message already stored makes the append a no-op
    that returns the stored entry: a retried append never duplicates), ``"update"`` (a new
    state of a stored message) or ``"either"``."""

    id: str
    timestamp: dt.datetime
    message: Message
    decision: str
    audit: dict[str, Any] = msgspec.field(default_factory=dict)
    how: Literal["new", "update", "either"] = "new"


class Committed(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a store's ``commit`` did: ``entries``, every entry appended to the conversation
    after the ``after`` seq it was given, in seq order (other writers' too, so a conversation
    in memory catches up), and ``results``, the entry of each draft, in draft order (the one
    already stored for a draft that was a no-op)."""

    entries: list[Entry]
    results: list[Entry]


class Sealed(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A sealed entry with the bytes a store keeps: ``body``, the canonical bytes the hash
    covers, and where the message's own bytes (``msgwire.dumps(message)``) lie in it."""

    entry: Entry
    body: bytes
    message_at: int
    message_len: int


class _Body(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What is hashed: an Entry without its hash (same fields, same order)."""

    id: str
    seq: int
    timestamp: dt.datetime
    message: Any
    decision: str
    audit: dict[str, Any]


class Parent(msgspec.Struct, frozen=True, kw_only=True):
    """Where a fork came from: the parent conversation, the last entry the fork kept and its
    hash (the fork's entries up to there are the parent's, hashes included)."""

    conversation_id: str
    entry_id: str | None = None
    hash: str | None = None


class Link(msgspec.Struct, frozen=True, kw_only=True):
    """A header chained into the trail: before entry ``at`` (the entries before it are its
    parent's), the chain goes on from ``hash``, ``sha256(previous hash + header bytes)``."""

    at: int
    hash: str


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """What a conversation's entries may change of its header (mode, system prompt, branch), as
    it was when the conversation was made: part of what its header link hashes."""

    mode: str | None = None
    system_prompt: str | None = None
    branch: str = "main"


class AuditHeader(msgspec.Struct, kw_only=True):
    """The conversation's header: ``chain`` the header links (empty in a trail written before
    headers were chained). ``Conversation.header()`` gives ``mode``, ``branch`` and
    ``system_prompt`` as they are now; an export (the first line of JSON Lines) as they were
    when the conversation was made (``made_header``), and its entries' changes say what
    became of them (in a version 1 export: as they were at the export). A document without
    ``conversation_id`` or ``created_at`` gets them on load (``load_document``)."""

    version: int = AUDIT_VERSION
    conversation_id: str = ""
    created_at: dt.datetime | None = None
    system_prompt: str | None = None
    mode: str | None = None
    modes: dict[str, str] = msgspec.field(default_factory=dict)
    branch: str = "main"
    parent: Parent | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    chain: list[Link] = msgspec.field(default_factory=list)


class AuditDocument(AuditHeader, kw_only=True):
    """The whole export: the header, then every entry in seq order."""

    entries: list[Entry] | msgspec.UnsetType = msgspec.UNSET


class _HeaderBody(msgspec.Struct, frozen=True, kw_only=True):
    """What a header link hashes: the header as it was when the conversation was made."""

    conversation_id: str
    created_at: dt.datetime | None
    system_prompt: str | None
    mode: str | None
    modes: dict[str, str]
    branch: str
    parent: Parent | None
    metadata: dict[str, Any]


class _RawEntry(msgspec.Struct, kw_only=True, gc=False):
    id: str
    seq: int = -1
    timestamp: dt.datetime
    message: msgspec.Raw
    decision: str
    audit: dict[str, Any] = msgspec.field(default_factory=dict)
    hash: str = ""


class _RawDocument(AuditHeader, kw_only=True):
    entries: list[_RawEntry] | msgspec.UnsetType = msgspec.UNSET


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """What ``verify`` found: true when the chain holds (``bool(result)``).

    Otherwise ``problem`` says what, at the first place it shows:

    - ``changed``: the entry at ``seq`` does not match its hash (it was edited, or an entry
      before it was removed and the rest renumbered);
    - ``removed``: entries are missing at ``seq`` (``entry_id`` is the entry found in their
      place, ``None`` when they were cut off the end, which only ``head`` reveals);
    - ``reordered``: the entry ``entry_id`` stands at position ``seq`` but carries another seq
      (moved, or copied);
    - ``header``: the header does not match its link in the chain (``seq`` is where the link
      stands: its system prompt, modes, metadata, id, creation time or parent was rewritten).

    ``header`` says whether the header was checked: ``"chained"``, or ``"unchained"`` for a
    trail written before headers were chained (its entries are checked all the same).
    """

    ok: bool
    problem: Literal["changed", "removed", "reordered", "header"] | None = None
    seq: int | None = None
    entry_id: str | None = None
    detail: str = ""
    checked: int = 0
    """How many entries were checked and found consistent before the problem (all, when ok)."""
    header: Literal["chained", "unchained"] = "chained"

    def __bool__(self) -> bool:
        return self.ok


# --- canonical bytes and the chain ----------------------------------------------------------


def _encode(obj: Any) -> bytes:
    """msgwire's own bytes (``msgwire.dumps``, the codec's cached encoder): the canonical form
    the chain hashes. ``TypeError`` for what JSON cannot carry."""
    try:
        return dumps(obj)
    except NotImplementedError as exc:  # the codec's word for an object it cannot write
        raise TypeError(str(exc)) from None


def _lines_hook(obj: Any) -> Any:
    # msgwire.codec's hook (unknown messages and blocks written back as they were read), for
    # encode_lines, which msgwire.dumps has no form of; test_audit checks the lines are dumps'.
    if isinstance(obj, (UnknownMessage, UnknownBlock)):
        return msgspec.Raw(obj.raw)
    raise TypeError(f"cannot write objects of type {type(obj).__name__} in an audit trail")


_lines_encoder = msgspec.json.Encoder(enc_hook=_lines_hook)


def entry_bytes(entry: Entry) -> bytes:
    """The canonical bytes the chain hashes: the entry's JSON without its ``hash``."""
    body = _Body(
        id=entry.id,
        seq=entry.seq,
        timestamp=entry.timestamp,
        message=entry.message,
        decision=entry.decision,
        audit=entry.audit,
    )
    return _encode(body)


def _chain(prev: str, body: bytes) -> str:
    return hashlib.sha256(prev.encode("ascii") + body).hexdigest()


def chain_hash(prev: str, body: bytes) -> str:
    """The hash of an entry whose canonical bytes (a store's ``body``) follow ``prev``."""
    return _chain(prev, body)


class HeaderState(Protocol):
    """What a mode change or branch switch changes: an ``AuditHeader``, or a store's row of it."""

    mode: str | None
    system_prompt: str | None
    branch: str
    modes: dict[str, str]


# --- the trail's rules ----------------------------------------------------------------------


def default_decision(message: Message) -> str:
    """The decision of a message added without one, from the kind of message."""
    if isinstance(message, UserMessage):
        return "user_input"
    if isinstance(message, AssistantMessage):
        for block in message.content:  # not message.tool_calls: no list to build
            if type(block) is ToolCallBlock:
                return "tool_call_requested"
        return "planning"
    if isinstance(message, ToolResultMessage):
        return RESULT_DECISIONS.get(message.status, "tool_failed")
    if isinstance(message, SystemControlMessage):
        return message.control
    return "unknown"


def message_key(message: Message) -> str | None:
    """The id a message is known by; an unknown message's own ``id`` field when it has one."""
    if isinstance(message, UnknownMessage):
        data = message.data()
        value = data.get("id") if isinstance(data, dict) else None
        return value if isinstance(value, str) and value else None
    return message.id or None


def updates_stored(draft: Draft) -> bool:
    """Whether ``draft`` records a later state of a message its conversation already holds
    (``how="update"``: an approval, a tool's result on its call), as ``admission`` reads it."""
    return draft.how == "update"


def admission(
    how: Literal["new", "update", "either"], key: str, kind: str, known: str | None, conversation_id: str
) -> Literal["append", "duplicate"]:
    """Whether a message may join a conversation: ``kind`` is its type tag, ``known`` the type
    tag of the message stored under the same id (``None``: none). ``"new"`` of a known id is a
    ``"duplicate"`` (a conversation in memory refuses it; a store takes it for a retried append
    and returns the stored entry); ``"update"`` of an unknown id raises ``KeyError``; a new
    state of another type raises ``TypeError``; everything else is appended."""
    if known is None:
        if how == "update":
            raise KeyError(f"no message with id {key!r} in conversation {conversation_id!r}")
        return "append"
    if how == "new":
        return "duplicate"
    if known != kind:
        raise TypeError(f"message {key!r} is of type {known!r}, not {kind!r}: a new state keeps the type")
    return "append"


def _change(message: Message) -> tuple[str, str, dict[str, Any]] | None:
    """``(control, new, params)`` of a ``mode_change`` / ``branch_switch`` that names its new state."""
    if type(message) is SystemControlMessage and message.control in ("mode_change", "branch_switch"):
        new = message.params.get("new")
        if isinstance(new, str):
            return message.control, new, message.params
    return None


def _recorded_prompt(audit: dict[str, Any], side: str) -> tuple[bool, str | None]:
    """The system prompt a mode change's audit recorded on ``side`` (``old`` / ``new``), if any."""
    recorded = audit.get("system_prompt")
    if isinstance(recorded, dict) and side in recorded:
        value = recorded[side]
        if value is None or isinstance(value, str):
            return True, value
    return False, None


def apply_change(state: HeaderState, entry: Entry) -> bool:
    """Apply a ``mode_change`` / ``branch_switch`` entry to the header; whether it was one. The
    mode becomes the new one and the system prompt the one the entry's audit recorded
    (``switch_mode`` records it: the chain protects it), else the mode table's, else it stays."""
    change = _change(entry.message)
    if change is None:
        return False
    control, new, _ = change
    if control == "branch_switch":
        state.branch = new
        return True
    state.mode = new
    found, prompt = _recorded_prompt(entry.audit, "new")
    state.system_prompt = prompt if found else state.modes.get(new, state.system_prompt)
    return True


def state_before(later: Sequence[Entry], header: HeaderState) -> tuple[str | None, str | None, str]:
    """Mode, system prompt and branch before the ``later`` entries (``apply_change`` backwards):
    what the first change among them says was ``old`` (the prompt from its audit, else the mode
    table), else the header's current values."""
    mode, prompt, branch = header.mode, header.system_prompt, header.branch
    mode_found = branch_found = False
    for e in later:
        change = _change(e.message)
        if change is None:
            continue
        control, _, params = change
        old = params.get("old")
        if control == "mode_change" and not mode_found:
            mode_found = True
            mode = old if isinstance(old, str) else None
            found, recorded = _recorded_prompt(e.audit, "old")
            if found:
                prompt = recorded
            elif mode in header.modes:
                prompt = header.modes[mode]
        elif control == "branch_switch" and not branch_found:
            branch_found = True
            branch = old if isinstance(old, str) else branch
        if mode_found and branch_found:
            break
    return mode, prompt, branch


def header_link(header: AuditHeader, prev: str) -> str:
    """The hash that chains ``header`` into the trail after ``prev``: over the header as the
    conversation was made (``made_header`` of a conversation whose header has changed since)."""
    body = _HeaderBody(**{name: getattr(header, name) for name in _HeaderBody.__struct_fields__})
    return _chain(prev, b"msgwire-audit-header:" + _encode(body))


def made_header(header: AuditHeader, origin: Origin) -> AuditHeader:
    """``header`` with the mode, system prompt and branch it was made with: what its link
    hashes and an export holds."""
    return msgspec.structs.replace(header, mode=origin.mode, system_prompt=origin.system_prompt, branch=origin.branch)


def fork_header(header: AuditHeader, kept: int, last: Entry | None, later: Sequence[Entry], new_id: str) -> AuditHeader:
    """The header of a fork that keeps the first ``kept`` entries (``last`` the last of them,
    ``later`` those after it, or at least every mode change and branch switch among them): a
    new id and creation time, the mode, branch and system prompt as they stood there,
    ``parent`` recorded, and the chain's links up to there with the fork's own after them."""
    mode, prompt, branch = state_before(later, header)
    fork = AuditHeader(
        conversation_id=new_id,
        created_at=dt.datetime.now(dt.UTC),
        system_prompt=prompt,
        mode=mode,
        modes=dict(header.modes),
        branch=branch,
        parent=Parent(
            conversation_id=header.conversation_id,
            entry_id=last.id if last is not None else None,
            hash=last.hash if last is not None else None,
        ),
        metadata=copy.deepcopy(header.metadata),
    )
    links = [link for link in header.chain if link.at < kept]
    prev = last.hash if last is not None else GENESIS
    fork.chain = [*links, Link(at=kept, hash=header_link(fork, prev))]
    return fork


def chain_head(entries: Sequence[Entry], chain: Sequence[Link]) -> str:
    """The last hash of the trail: the last entry's, or the last header link's when it stands
    after every entry (``GENESIS`` for an empty trail without links)."""
    if chain and chain[-1].at >= len(entries):
        return chain[-1].hash
    if entries:
        return entries[-1].hash
    return GENESIS


def seal(
    *,
    id: str,  # noqa: A002 - the entry id, as Entry.id
    seq: int,
    timestamp: dt.datetime,
    message: Message,
    decision: str,
    audit: dict[str, Any],
    prev: str,
) -> Entry:
    """A new entry chained to ``prev`` (raises ``TypeError`` when the message or the audit
    holds something JSON cannot carry, before anything is appended)."""
    body = _encode(_Body(id=id, seq=seq, timestamp=timestamp, message=message, decision=decision, audit=audit))
    return Entry(
        id=id,
        seq=seq,
        timestamp=timestamp,
        message=message,
        decision=decision,
        audit=audit,
        hash=_chain(prev, body),
    )


def seal_draft(draft: Draft, *, seq: int, prev: str) -> Sealed:
    """Seal a draft at ``seq`` after ``prev`` (a store's append, inside its transaction):
    the same hash ``seal`` gives, with the body and the message's place in it."""
    message_bytes = _encode(draft.message)
    body = _encode(
        _Body(
            id=draft.id,
            seq=seq,
            timestamp=draft.timestamp,
            message=msgspec.Raw(message_bytes),
            decision=draft.decision,
            audit=draft.audit,
        )
    )
    # The first ',"message":' is the field itself: the id before it is a JSON string (its
    # quotes escaped), then an integer and a timestamp.
    at = body.index(b',"message":') + 11
    entry = Entry(
        id=draft.id,
        seq=seq,
        timestamp=draft.timestamp,
        message=draft.message,
        decision=draft.decision,
        audit=draft.audit,
        hash=_chain(prev, body),
    )
    return Sealed(entry=entry, body=body, message_at=at, message_len=len(message_bytes))


def decode_entries(rows: Sequence[tuple[bytes, str]], *, where: Sequence[str] | None = None) -> list[Entry]:
    """Entries from the ``(body, hash)`` a store kept, in one decode when every message is of
    a type this version knows (unknown ones through ``msgwire.loads``, kept byte for byte).
    Raises ``msgwire.DecodeError``; ``where`` names each row in the message."""
    if not rows:
        return []
    joined = b"[" + b",".join(body[:-1] + b',"hash":"' + h.encode("ascii") + b'"}' for body, h in rows) + b"]"
    try:
        return _entries_decoder.decode(joined)
    except msgspec.DecodeError:
        pass  # an unknown message type somewhere, or a bad row: one by one, to say which
    entries: list[Entry] = []
    for i, (body, h) in enumerate(rows):
        name = where[i] if where is not None else f"row {i}"
        try:
            raw = _raw_entry_decoder.decode(body)
        except msgspec.DecodeError as exc:
            raise DecodeError(f"{name}: {from_msgspec(exc, size=len(body))}") from None
        entry = _entry_from_raw(raw, f"{name}.message")
        entries.append(msgspec.structs.replace(entry, hash=h))
    return entries


def verify(entries: Sequence[Entry], *, head: str | None = None, header: AuditHeader | None = None) -> Verification:
    """Check the chain from the first entry; name the first entry changed, removed or reordered,
    or a header that does not match its link.

    ``header``: the trail's header as the conversation was made (``made_header``; what an
    export holds), with its ``chain`` of links (``None``, or no links: the entries alone,
    chained from ``GENESIS``). ``head``: the last hash as recorded elsewhere; when given,
    entries cut off the end (or a rewritten tail) are found too.
    """
    links = list(header.chain) if header is not None else []
    own = len(links) - 1  # the conversation's own link: recomputed; its ancestors' are taken as given
    chained: Literal["chained", "unchained"] = "chained" if links else "unchained"

    def problem(kind: Any, at: int, detail: str, entry: Entry | None = None) -> Verification:
        entry_id = entry.id if entry is not None else None
        return Verification(
            ok=False, problem=kind, seq=at, entry_id=entry_id, detail=detail, checked=at, header=chained
        )

    prev = GENESIS
    present: set[int] | None = None
    next_link = 0
    for position in range(len(entries) + 1):
        while next_link < len(links) and links[next_link].at == position:
            link = links[next_link]
            if next_link == own and header is not None and header_link(header, prev) != link.hash:
                return problem("header", position, _HEADER_CHANGED)
            prev = link.hash
            next_link += 1
        if position == len(entries):
            break
        entry = entries[position]
        if entry.seq != position:
            if present is None:
                present = {e.seq for e in entries}
            if entry.seq > position and position not in present:
                missing = f"{position}" if entry.seq == position + 1 else f"{position} to {entry.seq - 1}"
                return problem(
                    "removed", position, f"the entries with seq {missing} are missing, before entry {entry.id!r}", entry
                )
            return problem(
                "reordered",
                position,
                f"entry {entry.id!r} carries seq {entry.seq} but stands at position {position}",
                entry,
            )
        if _chain(prev, entry_bytes(entry)) != entry.hash:
            detail = (
                f"entry {entry.id!r} (seq {position}) does not match its hash: it was changed "
                "(or an entry before it was removed and the rest renumbered)"
            )
            return problem("changed", position, detail, entry)
        prev = entry.hash
    last = len(entries) - 1
    if next_link < len(links):  # a link past the last entry: entries were cut off before it
        return problem(
            "removed",
            len(entries),
            f"the header links name entries up to seq {links[-1].at - 1}, the trail ends at seq {last}",
        )
    if head is not None and head != prev:
        detail = (
            f"the trail ends at seq {last} with another hash than the head given: entries were cut off the end, "
            "or the tail was rewritten"
        )
        return problem("removed", len(entries), detail)
    return Verification(ok=True, checked=len(entries), header=chained)


_HEADER_CHANGED = (
    "the header does not match its hash: its system prompt, modes, metadata, id, creation time or parent was rewritten"
)


# --- export ---------------------------------------------------------------------------------


def dump_document(header: AuditHeader, entries: list[Entry]) -> bytes:
    """The JSON export: the header's fields, then ``entries``."""
    fields = {f: getattr(header, f) for f in header.__struct_fields__}
    fields["version"] = _version(header)
    return _encode(AuditDocument(**fields, entries=entries))


def dump_lines(header: AuditHeader, entries: list[Entry]) -> bytes:
    """JSON Lines: the header on the first line, then one entry per line."""
    return (
        _encode(msgspec.structs.replace(header, version=_version(header)))
        + b"\n"
        + _lines_encoder.encode_lines(entries)
    )


def _version(header: AuditHeader) -> int:
    """2 for a trail whose header is chained; 1 (what it was read as) for one that is not."""
    return AUDIT_VERSION if header.chain else 1


# --- load -----------------------------------------------------------------------------------

_document_decoder = msgspec.json.Decoder(AuditDocument)
_raw_document_decoder = msgspec.json.Decoder(_RawDocument)
_header_decoder = msgspec.json.Decoder(AuditHeader)
_entries_decoder = msgspec.json.Decoder(list[Entry])
_raw_entries_decoder = msgspec.json.Decoder(list[_RawEntry])
_raw_entry_decoder = msgspec.json.Decoder(_RawEntry)
_first_line_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])


def load_document(data: bytes, format: Literal["json", "jsonl"] | None = None) -> tuple[AuditHeader, list[Entry]]:  # noqa: A002
    """Read an export back: the header and the entries.

    ``format`` is detected when not given: JSON Lines when the first line is a complete JSON
    object without ``entries``. Messages of a type this version does not know, or in an
    older shape, go through ``msgwire.loads`` (kept byte for byte). A document without ``seq``
    or ``hash`` (as in the seed system's example) gets them here: positions, and a chain over
    the entries as read (``verify`` then vouches for the trail from this load on).
    Raises ``msgwire.DecodeError`` (a ``ValueError``) with the path or the byte offset.
    """
    if format is None:
        format = "jsonl" if _looks_like_lines(data) else "json"  # noqa: A001
    try:
        if format == "json":
            header, entries = _load_json(data)
        else:
            header, entries = _load_lines(data)
    except msgspec.DecodeError as exc:
        raise from_msgspec(exc, size=len(data)) from None
    if header.version > AUDIT_VERSION:
        raise DecodeError(
            f"audit version {header.version} was written by a newer msgwire (this one reads 1 to {AUDIT_VERSION})"
        )
    if not header.conversation_id:  # an import: an id derived from the bytes, so re-importing is idempotent
        header.conversation_id = "imported-" + hashlib.sha256(data).hexdigest()[:32]
    if header.created_at is None:
        header.created_at = entries[0].timestamp if entries else dt.datetime.fromtimestamp(0, dt.UTC)
    return header, _fill_chain(header, entries)


def _looks_like_lines(data: bytes) -> bool:
    """A first line that is a whole JSON object without ``entries``, and an object after it
    (no copy of the data: it may be large)."""
    start = len(data) - len(data.lstrip()) if data[:1].isspace() else 0
    newline = data.find(b"\n", start)
    if newline == -1 or data.find(b"{", newline) == -1:
        return False
    try:
        return "entries" not in _first_line_decoder.decode(data[start:newline])
    except msgspec.DecodeError:
        return False


def _load_json(data: bytes) -> tuple[AuditHeader, list[Entry]]:
    try:
        document = _document_decoder.decode(data)
    except msgspec.ValidationError:
        # an unknown or older message shape somewhere (or a real error: the slow path says which)
        raw = _raw_document_decoder.decode(data)
        _refuse_unless_a_trail(raw, raw.entries)
        listed = raw.entries if raw.entries is not msgspec.UNSET else []
        entries = [_entry_from_raw(e, f"$.entries[{i}].message") for i, e in enumerate(listed)]
        return _header_of(raw), entries
    _refuse_unless_a_trail(document, document.entries)
    return _header_of(document), document.entries if document.entries is not msgspec.UNSET else []


def _refuse_unless_a_trail(header: AuditHeader, entries: object) -> None:
    """A JSON object with neither entries nor a conversation id is no audit trail (``{}``)."""
    if entries is msgspec.UNSET and not header.conversation_id:
        raise DecodeError("not an audit trail: no entries and no conversation_id", offset=0)


def _load_lines(data: bytes) -> tuple[AuditHeader, list[Entry]]:
    if data[:1].isspace():
        data = data.lstrip()
    header_end = data.find(b"\n")
    if header_end == -1:
        header_end = len(data)
    if not data[:header_end].strip():
        raise DecodeError("an audit log in JSON Lines needs a header line", offset=0)
    header = _header_decoder.decode(data[:header_end])
    # Every entry line as one JSON array, for one decode: each line break becomes a comma (a
    # blank line, or an entry spanning lines, makes this fail: the careful path handles those).
    commas = data.replace(b"\n", b",")
    end = len(commas)
    while end > header_end and commas[end - 1 : end] in (b",", b" ", b"\r", b"\t"):
        end -= 1
    array = bytearray(b"[")
    array += memoryview(commas)[header_end + 1 : end]
    array += b"]"
    try:
        return header, _entries_decoder.decode(array)
    except msgspec.ValidationError:
        pass  # an unknown or older message shape (or a real error): the messages one by one
    except msgspec.DecodeError:
        array = bytearray(_rejoined(data[header_end + 1 :]))
    try:
        raw = _raw_entries_decoder.decode(array)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError:
        raw = _raw_entries_decoder.decode(_rejoined(data[header_end + 1 :]))
    return header, [_entry_from_raw(e, f"$[{i}].message") for i, e in enumerate(raw)]


def _rejoined(body: bytes) -> bytes:
    """The entry lines as one JSON array, each entry whole: blank lines skipped, and an
    unknown message kept byte for byte may hold line breaks in its whitespace, so its entry
    spans lines."""
    return b"[" + b",".join(_whole_objects(body.split(b"\n"))) + b"]"


def _whole_objects(lines: list[bytes]) -> list[bytes]:
    objects: list[bytes] = []
    pending = b""
    for line in lines:
        if not pending and (not line or line.isspace()):
            continue  # a blank line between entries
        pending = pending + b"\n" + line if pending else line
        try:
            _first_line_decoder.decode(pending)
        except msgspec.DecodeError:
            continue
        objects.append(pending)
        pending = b""
    if pending:
        objects.append(pending)  # malformed: the decode that follows says where
    return objects


def _header_of(document: AuditHeader) -> AuditHeader:
    return AuditHeader(**{f: getattr(document, f) for f in AuditHeader.__struct_fields__})


def _entry_from_raw(raw: _RawEntry, path: str) -> Entry:
    try:
        message = loads(bytes(raw.message), type=Message)
    except DecodeError as exc:
        raise DecodeError(f"{exc} (in {path})", path=path) from None
    return Entry(**(msgspec.structs.asdict(raw) | {"message": message}))


def _fill_chain(header: AuditHeader, entries: list[Entry]) -> list[Entry]:
    """Positions for a document without seq; for a document without hashes, a chain from a
    header link made here (from this load on, ``verify`` vouches for both); a document with
    seq and hashes is kept exactly as read (``verify`` judges it)."""
    no_seq = all(e.seq == -1 for e in entries)
    no_hash = all(not e.hash for e in entries)
    if not (no_seq or no_hash):
        return entries
    filled: list[Entry] = []
    prev = GENESIS
    if no_hash and entries and not header.chain:
        prev = header_link(header, GENESIS)
        header.chain, header.version = [Link(at=0, hash=prev)], AUDIT_VERSION
    for position, e in enumerate(entries):
        e = msgspec.structs.replace(e, seq=position if no_seq else e.seq)
        if no_hash:
            e = msgspec.structs.replace(e, hash=_chain(prev, entry_bytes(e)))
        filled.append(e)
        prev = e.hash
    return filled
