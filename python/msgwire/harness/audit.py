"""The audit trail: entries, their hash chain, export and load (JSON and JSON Lines), verify.

Each ``Entry`` is sealed when it is appended: its *canonical bytes* are the compact JSON object
``{"id", "seq", "timestamp", "message", "decision", "audit"}`` as msgwire writes it (the
``message`` part is byte for byte ``msgwire.dumps(message)``), and its ``hash`` is
``sha256(prev_hash + canonical bytes)`` in hex, ``prev_hash`` being the previous entry's hash
(``GENESIS`` for the first). Changing, removing or reordering an entry breaks the chain at that
entry, and ``verify`` names it.

The chain holds no secret: whoever can rewrite the whole tail can recompute its hashes. Keep the
last hash (``Conversation.head``) somewhere else (a store, a log, a signed receipt) and pass it
to ``verify(head=...)`` to detect that too, including entries cut off the end.

Export: ``{"version": 1, "conversation_id", "created_at", "system_prompt", "mode", "modes",
"branch", "parent", "metadata", "entries": [{"id", "seq", "timestamp", "message", "decision",
"audit", "hash"}, ...]}``; JSON Lines is the same header on the first line and one entry per
line after it, for append-only logs (an unknown message kept byte for byte whose whitespace
holds line breaks spans several lines; ``load_document`` reads it back). Both are written by
msgwire's codec (``msgwire.dumps``: one cached msgspec encoder; ``encode_lines`` through an
encoder with the same hook), so the bytes hashed are the bytes written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from msgwire import Message, UnknownBlock, UnknownMessage, dumps, loads
from msgwire.errors import DecodeError, from_msgspec

__all__ = [
    "AUDIT_VERSION",
    "GENESIS",
    "AuditDocument",
    "AuditHeader",
    "Committed",
    "Draft",
    "Entry",
    "Parent",
    "Sealed",
    "Verification",
    "decode_entries",
    "dump_document",
    "dump_lines",
    "entry_bytes",
    "load_document",
    "seal",
    "seal_draft",
    "verify",
]

AUDIT_VERSION = 1
GENESIS = "0" * 64
"""The ``prev_hash`` of a trail's first entry."""


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


class AuditHeader(msgspec.Struct, kw_only=True):
    """The conversation's header, as exported (the first line of JSON Lines). A document
    without ``conversation_id`` or ``created_at`` gets them on load (``load_document``)."""

    version: int = AUDIT_VERSION
    conversation_id: str = ""
    created_at: dt.datetime | None = None
    system_prompt: str | None = None
    mode: str | None = None
    modes: dict[str, str] = msgspec.field(default_factory=dict)
    branch: str = "main"
    parent: Parent | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class AuditDocument(AuditHeader, kw_only=True):
    """The whole export: the header, then every entry in seq order."""

    entries: list[Entry] = msgspec.field(default_factory=list)


class _RawEntry(msgspec.Struct, kw_only=True, gc=False):
    id: str
    seq: int = -1
    timestamp: dt.datetime
    message: msgspec.Raw
    decision: str
    audit: dict[str, Any] = msgspec.field(default_factory=dict)
    hash: str = ""


class _RawDocument(AuditHeader, kw_only=True):
    entries: list[_RawEntry] = msgspec.field(default_factory=list)


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """What ``verify`` found: true when the chain holds (``bool(result)``).

    Otherwise ``problem`` says what, at the first place it shows:

    - ``changed``: the entry at ``seq`` does not match its hash (it was edited, or an entry
      before it was removed and the rest renumbered);
    - ``removed``: entries are missing at ``seq`` (``entry_id`` is the entry found in their
      place, ``None`` when they were cut off the end, which only ``head`` reveals);
    - ``reordered``: the entry ``entry_id`` stands at position ``seq`` but carries another seq
      (moved, or copied).
    """

    ok: bool
    problem: Literal["changed", "removed", "reordered"] | None = None
    seq: int | None = None
    entry_id: str | None = None
    detail: str = ""
    checked: int = 0
    """How many entries were checked and found consistent before the problem (all, when ok)."""

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


def verify(entries: Sequence[Entry], *, head: str | None = None) -> Verification:
    """Check the chain from the first entry; name the first entry changed, removed or reordered.

    ``head``: the last hash as recorded elsewhere; when given, entries cut off the end (or a
    rewritten tail) are found too.
    """
    prev = GENESIS
    present: set[int] | None = None
    for position, entry in enumerate(entries):
        if entry.seq != position:
            if present is None:
                present = {e.seq for e in entries}
            if entry.seq > position and position not in present:
                missing = f"{position}" if entry.seq == position + 1 else f"{position} to {entry.seq - 1}"
                return Verification(
                    ok=False,
                    problem="removed",
                    seq=position,
                    entry_id=entry.id,
                    detail=f"the entries with seq {missing} are missing, before entry {entry.id!r}",
                    checked=position,
                )
            return Verification(
                ok=False,
                problem="reordered",
                seq=position,
                entry_id=entry.id,
                detail=f"entry {entry.id!r} carries seq {entry.seq} but stands at position {position}",
                checked=position,
            )
        if _chain(prev, entry_bytes(entry)) != entry.hash:
            return Verification(
                ok=False,
                problem="changed",
                seq=position,
                entry_id=entry.id,
                detail=(
                    f"entry {entry.id!r} (seq {position}) does not match its hash: it was changed "
                    "(or an entry before it was removed and the rest renumbered)"
                ),
                checked=position,
            )
        prev = entry.hash
    if head is not None and head != prev:
        return Verification(
            ok=False,
            problem="removed",
            seq=len(entries),
            detail=f"the trail ends at seq {len(entries) - 1} with another hash than the head given: "
            "entries were cut off the end, or the tail was rewritten",
            checked=len(entries),
        )
    return Verification(ok=True, checked=len(entries))


# --- export ---------------------------------------------------------------------------------


def dump_document(header: AuditHeader, entries: list[Entry]) -> bytes:
    """The JSON export: the header's fields, then ``entries``."""
    fields = {f: getattr(header, f) for f in header.__struct_fields__}
    return _encode(AuditDocument(**fields, entries=entries))


def dump_lines(header: AuditHeader, entries: list[Entry]) -> bytes:
    """JSON Lines: the header on the first line, then one entry per line."""
    return _encode(header) + b"\n" + _lines_encoder.encode_lines(entries)


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
        raise DecodeError(f"audit version {header.version} was written by a newer msgwire (this one reads 1)")
    if not header.conversation_id:  # an import: an id derived from the bytes, so re-importing is idempotent
        header.conversation_id = "imported-" + hashlib.sha256(data).hexdigest()[:32]
    if header.created_at is None:
        header.created_at = entries[0].timestamp if entries else dt.datetime.fromtimestamp(0, dt.UTC)
    return header, _fill_chain(entries)


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
        entries = [_entry_from_raw(e, f"$.entries[{i}].message") for i, e in enumerate(raw.entries)]
        return _header_of(raw), entries
    return _header_of(document), document.entries


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
    return Entry(
        id=raw.id,
        seq=raw.seq,
        timestamp=raw.timestamp,
        message=message,
        decision=raw.decision,
        audit=raw.audit,
        hash=raw.hash,
    )


def _fill_chain(entries: list[Entry]) -> list[Entry]:
    """Positions for a document without seq, a chain for a document without hashes; a
    document with either is kept exactly as read (``verify`` judges it)."""
    no_seq = all(e.seq == -1 for e in entries)
    no_hash = all(not e.hash for e in entries)
    if not (no_seq or no_hash):
        return entries
    filled: list[Entry] = []
    prev = GENESIS
    for position, e in enumerate(entries):
        seq = position if no_seq else e.seq
        if no_hash:
            e = seal(
                id=e.id,
                seq=seq,
                timestamp=e.timestamp,
                message=e.message,
                decision=e.decision,
                audit=e.audit,
                prev=prev,
            )
        else:
            e = msgspec.structs.replace(e, seq=seq)
        filled.append(e)
        prev = e.hash
    return filled
