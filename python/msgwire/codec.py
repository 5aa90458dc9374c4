"""``dumps`` / ``loads``: the versioned JSON codec of canonical schema v1.

Fast path: one msgspec encode or decode call for the whole document. Only when that decode
fails (an unknown tag, a legacy shape, an older version, or genuinely bad data) does ``loads``
take the slow path, which splits the document into raw JSON pieces and decodes them one by
one: unknown messages and blocks are kept byte-for-byte, legacy shapes go through
``legacy.py``, and real errors come out with the full JSON path.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any, TypeVar, Union, get_args, overload

import msgspec

from . import _core, legacy
from ._ids import derived_id
from .errors import DecodeError, ValidationError, from_msgspec
from .types import (
    _DEFERRED,
    SCHEMA_VERSION,
    ContentBlock,
    Dialect,
    Message,
    Request,
    Session,
    UnknownBlock,
    UnknownMessage,
    _Above,
    _Raw,
)

__all__ = ["dumps", "loads"]

T = TypeVar("T")
_log = logging.getLogger("msgwire")
_warned_tags: set[tuple[str, str]] = set()

MESSAGE_CLASSES = {cls.__struct_config__.tag: cls for cls in get_args(Message)}
BLOCK_CLASSES = {cls.__struct_config__.tag: cls for cls in get_args(ContentBlock)}


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, _Raw):
        return msgspec.Raw(obj.raw)
    if type(obj) in _DEFERRED:
        return obj.value()
    raise NotImplementedError(f"msgwire cannot write objects of type {type(obj).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decoder(type: Any) -> msgspec.json.Decoder[Any]:  # noqa: A002
    dec = _decoders.get(type)
    if dec is None:
        dec = _decoders[type] = msgspec.json.Decoder(type)
    return dec


_message_decoder = _decoder(Message)
_block_decoder = _decoder(ContentBlock)
_raw_fields = msgspec.json.Decoder(dict[str, msgspec.Raw])
_raw_items = msgspec.json.Decoder(list[msgspec.Raw])
_raw_encoder = msgspec.json.Encoder()
_raw_top = msgspec.json.Decoder(Union[dict[str, msgspec.Raw], list[msgspec.Raw]])
# The types the slow path knows more shapes of (unknown tags, legacy forms).
_SLOW_TARGETS = {
    Session,
    Request,
    list[Message],
    Message,
    ContentBlock,
    *MESSAGE_CLASSES.values(),
    *BLOCK_CLASSES.values(),
}


def dumps(obj: Session | Message | list[Message] | Any) -> bytes:
    """Canonical JSON bytes of a Session (the versioned envelope), a message, a block, or a
    list of messages. Unknown messages and blocks are written back exactly as they were read.

    Plain dicts are refused (``TypeError``): role/content dicts are a provider's messages, read
    with ``loads`` (a stored list) or ``formats.from_request`` (a request body)."""
    if type(obj) is dict or (isinstance(obj, list) and obj and type(obj[0]) is dict):
        raise TypeError(
            "dumps writes msgwire objects (a Session, messages, blocks), not dicts: read role/content "
            "dicts with msgwire.loads (a stored list) or formats.from_request (a request body) first"
        )
    return _encoder.encode(obj)


@overload
def loads(data: bytes | str | memoryview) -> Session: ...
@overload
def loads(data: bytes | str | memoryview, type: type[T]) -> T: ...
@overload
def loads(data: bytes | str | memoryview, type: Any) -> Any: ...
def loads(data: bytes | str | memoryview, type: Any = Session) -> Any:  # noqa: A002
    """Read canonical JSON into msgspec Structs.

    ``type`` is ``Session`` (default), ``list[Message]``, ``Message``, a message class,
    ``ContentBlock`` or a block class. A Session is also read from the older and legacy
    shapes: an envelope with an older ``version``, a bare list of ``{"role", "content"}``
    entries, or a list of database rows ``{"kind", "content" | "data_json"}``.

    Raises ``DecodeError`` (a ``ValueError``) with the byte offset for malformed JSON and
    ``ValidationError`` with the JSON path for data of the wrong shape.
    """
    try:
        try:
            value = _decoder(type).decode(data)
        except msgspec.ValidationError as exc:
            if type not in _SLOW_TARGETS:  # no other shape to try: the error is the answer
                raise from_msgspec(exc) from None
            # an unknown tag, a legacy shape, or a real error: the slow path tells which
        except msgspec.DecodeError as exc:
            raise from_msgspec(exc, size=_byte_len(data)) from None
        else:
            # An empty session may be a single message whose fields the envelope ignored: the
            # slow path, cheap without messages, tells.
            if type is not Session or (value.version == SCHEMA_VERSION and value.messages):
                return value
        return _loads_slow(data, type)
    # msgspec lets these two through as they are; they are bad input all the same
    except UnicodeDecodeError:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        offset = _first_invalid_utf8(raw)
        raise DecodeError(f"JSON is malformed: invalid UTF-8 (byte {offset})", offset=offset) from None
    except RecursionError:
        raise DecodeError("JSON is malformed: nested too deeply") from None


def _byte_len(data: bytes | str | memoryview) -> int:
    return len(data.encode()) if isinstance(data, str) else memoryview(data).nbytes  # offsets count bytes


def _first_invalid_utf8(data: bytes) -> int | None:
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        return exc.start
    return None


# --- slow path ------------------------------------------------------------------------------


def _loads_slow(data: bytes | str | memoryview, target: Any) -> Any:
    if not isinstance(data, str):
        # Raw pieces (unknown objects) are kept unread, so check the encoding here; loads turns
        # a UnicodeDecodeError into a DecodeError at its offset.
        bytes(data).decode()
    try:
        top = _raw_top.decode(data)
    except msgspec.DecodeError as exc:
        raise from_msgspec(exc, size=_byte_len(data)) from None
    if target is Session:
        return _session_from_raw(top)
    if target is Request and isinstance(top, dict):
        return _request_from_raw(top, data)
    if target == list[Message]:
        if isinstance(top, dict):
            return _session_from_raw(top).messages
        return _session_from_raw(top).messages if _is_legacy_list(top) else _messages_from_raw(top, "$")
    if isinstance(top, list):
        raise ValidationError([("$", f"Expected `object`, got `array` for {_type_name(target)}")])
    raw = msgspec.Raw(data if not isinstance(data, str) else data.encode())
    if target is Message or target in MESSAGE_CLASSES.values():
        value: Any = message_from_raw(raw, "$")
    else:
        value = block_from_raw(raw, "$")
    if isinstance(value, legacy.SystemText):
        raise ValidationError([("$.role", "A legacy system entry is not a message: read it as a Session")])
    allowed = get_args(target) or (target,)
    if type(value) in (UnknownMessage, UnknownBlock) and (target is Message or target is ContentBlock):
        return value
    if not isinstance(value, allowed):
        raise ValidationError([("$.type", f"Expected {_type_name(target)}, got `{value.type}`")])
    return value


def _type_name(target: Any) -> str:
    return getattr(target, "__name__", None) or str(target)


def _is_legacy_list(items: list[msgspec.Raw]) -> bool:
    """A bare list of role/content entries or of database rows (checked on its first item)."""
    if not items:
        return False
    try:
        first = _raw_fields.decode(items[0])
    except msgspec.DecodeError:
        return False
    return "type" not in first and ("role" in first or "kind" in first)


def _session_from_raw(top: dict[str, msgspec.Raw] | list[msgspec.Raw]) -> Session:
    if isinstance(top, list):
        if top and "kind" in _object_fields(top[0], "$[0]"):
            return legacy.session_from_rows([msgspec.json.decode(r) for r in top], message_from_raw)
        entries = [msgspec.json.decode(r) for r in top]
        dialect = legacy.provider_shape(entries)
        if dialect is not None:  # a provider's messages: read as its request reader reads them
            # (a list its reader refuses is read the plain way, whose errors name JSON paths)
            with contextlib.suppress(DecodeError):
                body = read_request_body(legacy.request_body(entries, dialect), dialect)
                return _session_from_raw(_raw_fields.decode(body))
        return _build_session({}, top)
    if "messages" not in top and ("kind" in top or "role" in top or "type" in top):
        raise ValidationError([("$", "Expected a session envelope, got a single message; use type=Message")])
    version = _field(top, "version", int, "$.version", default=0)
    if version > SCHEMA_VERSION:
        raise ValidationError(
            [("$.version", f"Session version {version} was written by a newer msgwire (this one reads up to 1)")]
        )
    items = _field(top, "messages", list[msgspec.Raw], "$.messages", default=[])
    return _build_session(top, items)


@functools.cache
def _session_fields() -> tuple[msgspec.structs.FieldInfo, ...]:
    # msgspec resolves the annotations on every call (about 300 us): read them once
    return msgspec.structs.fields(Session)


def _build_session(top: dict[str, msgspec.Raw], items: list[msgspec.Raw]) -> Session:
    envelope: dict[str, Any] = {}
    for field in _session_fields():
        if field.name not in ("version", "messages") and field.name in top:
            envelope[field.name] = _field(top, field.name, field.type, f"$.{field.encode_name}")
    messages: list[Any] = []
    system_texts: list[str] = []
    for i, raw in enumerate(items):
        message = message_from_raw(raw, f"$.messages[{i}]" if top else f"$[{i}]")
        if isinstance(message, legacy.SystemText):
            system_texts.append(message.text)
        else:
            messages.append(message)
    if system_texts and envelope.get("system_prompt") is None:
        envelope["system_prompt"] = "\n\n".join(system_texts)
    return Session(messages=messages, **envelope)


def _field(fields: dict[str, msgspec.Raw], name: str, type: Any, path: str, default: Any = None) -> Any:  # noqa: A002
    if name not in fields:
        return default
    try:
        return msgspec.json.decode(fields[name], type=type)
    except msgspec.DecodeError as exc:
        raise from_msgspec(exc, path) from None


class _RequestRest(Request, kw_only=True, omit_defaults=True):
    """A request without its messages (read apart, with the unknown fallback)."""

    messages: list[msgspec.Raw] = msgspec.field(default_factory=list)  # type: ignore[assignment]


_request_rest = msgspec.json.Decoder(_RequestRest)


def _request_from_raw(top: dict[str, msgspec.Raw], data: bytes | str | memoryview) -> Request:
    try:
        rest = _request_rest.decode(data)
    except msgspec.ValidationError as exc:
        raise from_msgspec(exc) from None
    items = _field(top, "messages", list[msgspec.Raw], "$.messages", default=[])
    fields = {f: getattr(rest, f) for f in Request.__struct_fields__ if f != "messages"}
    return Request(messages=_messages_from_raw(items, "$.messages"), **fields)


def read_request_body(body: bytes, dialect: Dialect) -> bytes:
    """A request body of ``dialect`` read by the core, each message given an id derived from
    the dialect, its position and its bytes as read (see ``_ids``): reading twice gives the
    same ids."""
    read = _core.from_request_json(body, dialect)
    top = _raw_fields.decode(read)
    if "messages" not in top:
        return read
    items = _raw_items.decode(top["messages"])
    with_ids = [
        b'{"id":"%s",%s' % (derived_id(dialect, i, bytes(raw)).encode(), bytes(raw)[1:]) for i, raw in enumerate(items)
    ]
    top["messages"] = msgspec.Raw(b"[" + b",".join(with_ids) + b"]")
    return _raw_encoder.encode(top)


def _messages_from_raw(items: list[msgspec.Raw], path: str) -> list[Any]:
    return [message_from_raw(raw, f"{path}[{i}]") for i, raw in enumerate(items)]


# msgwire's own raw blocks and messages, not a newer version's types, so not worth a warning:
# a provider's part kept whole, written back to its dialect (see ``formats``), and a provider's
# item no message type holds (``msgwire.interop.responses_items``).
_OWN_RAW = {("block", "provider_part"), ("message", "provider_item")}


def _warn_unknown(kind: str, tag: str) -> None:
    if (kind, tag) in _OWN_RAW:
        return
    if (kind, tag) not in _warned_tags:
        _warned_tags.add((kind, tag))
        _log.warning("unknown %s type %r: kept as raw JSON and written back unchanged", kind, tag)


def message_from_raw(raw: msgspec.Raw, path: str) -> Any:
    """One message from its raw JSON: known tags decoded, unknown tags kept, legacy role
    entries migrated (a legacy system entry comes back as ``legacy.SystemText``)."""
    try:
        return _message_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        first_error: msgspec.ValidationError = exc
    fields = _object_fields(raw, path)
    if "type" not in fields:
        if "role" in fields:
            return legacy.message_from_role(msgspec.json.decode(raw), path, bytes(raw))
        raise from_msgspec(first_error, path) from None
    tag = _field(fields, "type", str, f"{path}.type")
    cls = MESSAGE_CLASSES.get(tag)
    if cls is None:
        _warn_unknown("message", tag)
        return UnknownMessage(bytes(raw), tag)
    if "content" not in fields:
        raise from_msgspec(first_error, path) from None
    try:
        items = _raw_items.decode(fields["content"])
    except msgspec.ValidationError as exc:
        raise from_msgspec(exc, f"{path}.content") from None
    blocks = [block_from_raw(item, f"{path}.content[{j}]") for j, item in enumerate(items)]
    fields["content"] = msgspec.Raw(b"[]")
    message = _decode_fields(fields, cls, path)
    return msgspec.structs.replace(message, content=blocks)


def block_from_raw(raw: msgspec.Raw, path: str) -> Any:
    """One content block from its raw JSON: unknown tags kept, object-valued tool-call
    ``arguments`` (a legacy form) turned into compact JSON text."""
    try:
        return _block_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        first_error: msgspec.ValidationError = exc
    fields = _object_fields(raw, path)
    if "type" not in fields:
        raise from_msgspec(first_error, path) from None
    tag = _field(fields, "type", str, f"{path}.type")
    cls = BLOCK_CLASSES.get(tag)
    if cls is None:
        _warn_unknown("block", tag)
        return UnknownBlock(bytes(raw), tag)
    arguments = fields.get("arguments")
    if tag == "tool_call" and arguments is not None and bytes(arguments).lstrip()[:1] in (b"{", b"["):
        compact = msgspec.json.encode(msgspec.json.decode(arguments))
        fields["arguments"] = msgspec.Raw(msgspec.json.encode(compact.decode()))
        return _decode_fields(fields, cls, path)
    raise from_msgspec(first_error, path) from None


def _object_fields(raw: msgspec.Raw, path: str) -> dict[str, msgspec.Raw]:
    try:
        return _raw_fields.decode(raw)
    except msgspec.DecodeError as exc:
        raise from_msgspec(exc, path) from None


def _decode_fields(fields: dict[str, msgspec.Raw], cls: Any, path: str) -> Any:
    """Decode an object re-assembled from its raw fields (after some were replaced)."""
    parts = [msgspec.json.encode(key) + b":" + bytes(value) for key, value in fields.items()]
    try:
        return _decoder(cls).decode(b"{" + b",".join(parts) + b"}")
    except msgspec.DecodeError as exc:
        raise from_msgspec(exc, path) from None


def session_to_rows(session: Session) -> list[dict[str, Any]]:
    """One row per message, ``{"kind", "id", "timestamp", "data_json"}`` (system prompt first
    as a ``system`` row), so a table of rows holds the whole session losslessly."""
    rows: list[dict[str, Any]] = []
    if session.system_prompt is not None:
        rows.append({"kind": "system", "content": session.system_prompt})
    rows.extend(
        {
            "kind": message.type,
            "id": getattr(message, "id", None),
            "timestamp": getattr(message, "timestamp", None),
            "data_json": dumps(message).decode(),
        }
        for message in session.messages
    )
    return rows


def session_from_rows(rows: Any, **envelope: Any) -> Session:
    session = legacy.session_from_rows(list(rows), message_from_raw)
    for name, value in envelope.items():
        setattr(session, name, value)
    return session


# Session.to_rows / from_rows delegate here (types.py cannot import this module: it stands on it)
_Above.session_to_rows = session_to_rows
_Above.session_from_rows = session_from_rows
