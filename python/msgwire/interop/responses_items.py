"""Responses input items one at a time, as msgwire messages and back, exactly.

A list of Responses input items (what ``client.responses.create(input=...)`` takes, and what
openai-agents keeps in a session) is history item by item; msgwire's Responses reader
(``formats.from_request``) reads a whole request, merging an assistant's items into one message.
Here each item becomes one message of its own, read by that reader, and goes back to the item
through msgwire's Responses writer (``formats.to_request``), so that one item is one message:

- ``read_item(item)`` reads it (a fresh message id: two equal items are two messages) and writes
  it back at once. When the writer gives the item back, the message carries it. When it gives it
  in the other message form the API takes (``content`` a string or one text part, with or
  without ``"type": "message"``), the ``form`` says which. Otherwise the item is ``kept`` as
  given, beside the message, and the loss names the fields the message does not carry (a
  function call's ``status``, for one).
- An item msgwire has no message for (a system or developer message: msgwire keeps one system
  prompt per conversation, not such messages; an item the reader refuses) is an
  ``UnknownMessage`` ``{"type": "provider_item", "id", "dialect": "openai-responses", "item"}``,
  kept whole; a part of one the reader keeps whole is a ``provider_part`` block of its message,
  written back unchanged. Both are reported (``kind="item"`` / ``"provider_part"``, action
  ``fallback``): the item comes back exactly, but msgwire sees it only as raw JSON.
- ``items_json(message, kept=..., form=...)`` is the items again, as JSON (``items_of``:
  decoded): the kept item, or what the writer gives for the message alone (reshaped by
  ``form``). A message of another origin (an assistant message of several blocks) gives
  several items; a ``system_control`` none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from .. import formats
from ..errors import DecodeError
from ..types import (
    AssistantMessage,
    Dialect,
    Loss,
    Message,
    SystemControlMessage,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    new_id,
)

__all__ = ["DIALECT", "FORMS", "PROVIDER_ITEM", "ReadItem", "items_json", "items_of", "read_item"]

DIALECT: Dialect = "openai-responses"
PROVIDER_ITEM = "provider_item"
"""The type of the ``UnknownMessage`` that keeps an item msgwire has no message for."""

Item = dict[str, Any]

_item_decoder = msgspec.json.Decoder(dict[str, Any])
_sorted = msgspec.json.Encoder(order="sorted")


def _same(a: Item, b: Item) -> bool:
    """Equal as JSON: the same keys and values, ``1``, ``1.0`` and ``true`` told apart."""
    return _sorted.encode(a) == _sorted.encode(b)


class ReadItem(msgspec.Struct, frozen=True, kw_only=True):
    """One item read: its ``message``; ``json``, the item's JSON (what ``items_json`` gives
    back for it); ``kept``, the item as given when the message does not write it back
    (``None``: it does); ``form``, the steps that shape the written item into the given one
    (``FORMS``); ``losses``, what msgwire's message does not carry."""

    message: Message
    json: bytes
    kept: Item | None = None
    form: list[str] | None = None
    losses: list[Loss] = msgspec.field(default_factory=list)


class _Input(msgspec.Struct):
    input: list[msgspec.Raw]


class _Type(msgspec.Struct):
    type: str | None = None


_input_decoder = msgspec.json.Decoder(_Input)
_type_decoder = msgspec.json.Decoder(_Type)


def read_item(
    item: Mapping[str, Any], *, index: int = 0, tool_name: Callable[[str], str | None] | None = None
) -> ReadItem:
    """``item`` as a message (see the module docs). ``index`` is the item's place in its list
    (for errors and ``Loss.message``); ``tool_name(call_id)`` names the tool of a
    ``function_call_output`` whose call is not in the item. Raises ``TypeError`` for an item that
    is not a JSON object."""
    if not isinstance(item, Mapping):
        raise TypeError(f"items[{index}] is {type(item).__name__}, not a Responses input item (a dict)")
    try:
        data = msgspec.json.encode(item)
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(f"items[{index}] is not JSON: {exc}") from None
    given = _item_decoder.decode(data)  # as it reads back (tuples are lists, keys strings)
    try:
        messages = formats.from_request(b'{"input":[' + data + b"]}", DIALECT).messages
        refused = None
    except DecodeError as exc:
        messages, refused = [], f"the Responses reader refuses it ({exc})"
    if len(messages) != 1 or isinstance(messages[0], UnknownMessage):
        return _unknown(given, data, index, refused or _why_no_message(given, len(messages)))
    message: Message = msgspec.structs.replace(messages[0], id=new_id())
    if isinstance(message, ToolResultMessage) and message.tool_name is None and tool_name is not None:
        message = msgspec.structs.replace(message, tool_name=tool_name(message.tool_call_id))
    losses = [
        Loss(
            message=index,
            block=j,
            kind="provider_part",
            action="fallback",
            reason=f"{_kind(given)} item: msgwire's Responses reader has no block for it and keeps it whole",
        )
        for j, block in enumerate(getattr(message, "content", ()))
        if isinstance(block, UnknownBlock)
    ]
    written = items_of(message)
    if len(written) == 1 and _same(written[0], given):
        return ReadItem(message=message, json=data, losses=losses)
    form = _form_of(written, given)
    if form is not None:
        return ReadItem(message=message, json=data, form=form, losses=losses)
    if len(written) == 1:
        paths = ", ".join(_differences(given, written[0]))
        what = f"{paths} not carried by msgwire's {message.type} message (the Responses writer gives it otherwise)"
    else:
        what = f"the Responses writer gives {len(written)} items for msgwire's {message.type} message"
    reason = f"{_kind(given)} item: {what}; the item is kept as given"
    losses.append(Loss(message=index, block=None, kind="item", action="fallback", reason=reason))
    return ReadItem(message=message, json=data, kept=given, losses=losses)


def items_json(message: Message, *, kept: Item | None = None, form: list[str] | None = None) -> list[bytes]:
    """The items of ``message`` as JSON: ``kept`` when there is one, else what msgwire's
    Responses writer gives for the message alone, shaped by ``form``."""
    if kept is not None:
        return [msgspec.json.encode(kept)]
    if isinstance(message, UnknownMessage):
        data = message.data()
        if isinstance(data, dict) and data.get("type") == PROVIDER_ITEM and data.get("dialect") == DIALECT:
            return [msgspec.json.encode(data["item"])]
        return []
    if isinstance(message, SystemControlMessage):
        return []
    written = _written(message)
    if form and len(written) == 1:
        written = [msgspec.json.encode(_reform(_item_decoder.decode(written[0]), form))]
    return written


def items_of(message: Message, *, kept: Item | None = None, form: list[str] | None = None) -> list[Item]:
    """``items_json`` decoded."""
    return [_item_decoder.decode(item) for item in items_json(message, kept=kept, form=form)]


def _written(message: Message) -> list[bytes]:
    if isinstance(message, ToolResultMessage):
        # a result is written after its call (the writer drops one that answers none): a stand-in
        # call with its id goes first, and only the result's item is kept
        call = AssistantMessage(content=[ToolCallBlock(id=message.tool_call_id, name=message.tool_name or "tool")])
        return [
            bytes(raw) for raw in _input_decoder.decode(formats.to_request_json([call, message], DIALECT)).input[1:]
        ]
    items = [bytes(raw) for raw in _input_decoder.decode(formats.to_request_json([message], DIALECT)).input]
    if isinstance(message, AssistantMessage):  # the placeholder results of its own calls
        return [i for i in items if _type_decoder.decode(i).type != "function_call_output"]
    return items


def _unknown(given: Item, data: bytes, index: int, why: str) -> ReadItem:
    raw = msgspec.json.encode({"type": PROVIDER_ITEM, "id": new_id(), "dialect": DIALECT, "item": given})
    loss = Loss(message=index, block=None, kind="item", action="fallback", reason=f"{_kind(given)} item: {why}")
    return ReadItem(message=UnknownMessage(raw, PROVIDER_ITEM), json=data, losses=[loss])


def _why_no_message(given: Item, count: int) -> str:
    if given.get("role") in ("system", "developer"):
        return (
            "msgwire keeps one system prompt per conversation, not system or developer messages; "
            "kept whole as a provider_item message"
        )
    return f"the Responses reader reads it as {count} messages; kept whole as a provider_item message"


def _kind(item: Item) -> str:
    kind = item.get("type")
    if isinstance(kind, str):
        return f"a {kind!r}"
    role = item.get("role")
    return f"a {role!r} message" if isinstance(role, str) else "an"


# --- the message forms: the same message, written the other way the API takes it ----------------


def _as_text(item: Item) -> Item | None:
    content = item.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        part = content[0]
        if set(part) == {"type", "text"} and part["type"] in ("input_text", "output_text"):
            return {**item, "content": part["text"]}
    return None


def _untyped(item: Item) -> Item | None:
    if item.get("type") != "message":
        return None
    return {k: v for k, v in item.items() if k != "type"}


def _typed(item: Item) -> Item | None:
    return {"type": "message", **item} if "type" not in item and "role" in item else None


FORMS: dict[str, Callable[[Item], Item | None]] = {"text": _as_text, "untyped": _untyped, "typed": _typed}
"""The steps between a message item as msgwire's writer gives it and the other forms the API
takes: ``text`` (the content a string, not one text part), ``untyped`` (no ``"type":
"message"``), ``typed`` (with it)."""
_CANDIDATES = (["text"], ["untyped"], ["typed"], ["text", "untyped"], ["text", "typed"])


def _reform(item: Item, form: list[str]) -> Item:
    for step in form:
        reshaped = FORMS[step](item)
        if reshaped is None:
            raise ValueError(f"the message form {form!r} does not apply to the item {item!r}")
        item = reshaped
    return item


def _form_of(written: list[Item], given: Item) -> list[str] | None:
    if len(written) != 1 or "role" not in given:
        return None
    for form in _CANDIDATES:
        try:
            if _same(_reform(written[0], form), given):
                return form
        except ValueError:
            continue
    return None


def _differences(given: Any, written: Any, path: str = "$") -> list[str]:
    """The JSON paths at which ``written`` differs from ``given``."""
    if isinstance(given, dict) and isinstance(written, dict):
        found: list[str] = []
        for key in list(given) + [k for k in written if k not in given]:
            at = f"{path}.{key}"
            if key not in given or key not in written:
                found.append(at)
            else:
                found += _differences(given[key], written[key], at)
        return found
    if isinstance(given, list) and isinstance(written, list) and len(given) == len(written):
        return [
            p for i, (a, b) in enumerate(zip(given, written, strict=True)) for p in _differences(a, b, f"{path}[{i}]")
        ]
    return [] if given == written and type(given) is type(written) else [path]
