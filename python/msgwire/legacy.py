"""Migrations from the shapes that came before schema v1.

Two legacy shapes exist in the wild, and both load transparently as a v1 ``Session``:

- a bare list of ``{"role", "content"}`` entries (roles system / developer / user /
  assistant / tool; ``content`` a string or a list of ``{"type": "text", "text"}`` parts; an
  assistant entry may carry OpenAI-style ``tool_calls``);
- database rows ``{"kind", "content" | "data_json"}`` with kinds system / user / assistant /
  tool_call / tool_result. A ``tool_call`` row's ``data_json`` holds ``tool_call_id``, ``name``
  and ``arguments``; a ``tool_result`` row's holds ``tool_call_id``, ``output`` and
  ``success`` (``is_error = not success``). Rows written by ``Session.to_rows`` carry a whole
  canonical message in ``data_json`` instead.

A legacy ``system`` entry becomes the session's ``system_prompt``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Callable
from typing import Any

import msgspec

from .errors import ValidationError
from .types import (
    AssistantMessage,
    ContentBlock,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UserMessage,
)

RawMessageReader = Callable[[msgspec.Raw, str], Any]


class SystemText(msgspec.Struct, frozen=True):
    """A legacy system entry on its way to ``Session.system_prompt``."""

    text: str


def _fail(path: str, message: str) -> ValidationError:
    return ValidationError([(path, message)])


def _ids(entry: dict[str, Any]) -> dict[str, Any]:
    """Keep a legacy entry's own id and timestamp when it has them."""
    found: dict[str, Any] = {}
    if isinstance(entry.get("id"), str) and entry["id"]:
        found["id"] = entry["id"]
    stamp = entry.get("timestamp", entry.get("created_at"))
    if stamp is not None:
        # an unreadable legacy timestamp is dropped; the message gets a fresh one
        with contextlib.suppress(msgspec.ValidationError):
            found["timestamp"] = msgspec.convert(stamp, _dt.datetime)
    return found


def _text_blocks(content: Any, path: str) -> list[ContentBlock]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextBlock(text=content)]
    if not isinstance(content, list):
        raise _fail(path, f"Expected `str` or `array` content, got `{type(content).__name__}`")
    blocks: list[ContentBlock] = []
    for part in content:
        if isinstance(part, str):
            blocks.append(TextBlock(text=part))
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
        else:
            tag = part.get("type", "?") if isinstance(part, dict) else type(part).__name__
            blocks.append(UnknownBlock(msgspec.json.encode(part), str(tag)))
    return blocks


def _arguments_text(arguments: Any) -> str:
    """Tool arguments as JSON text: kept verbatim when already text, compact JSON otherwise."""
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else msgspec.json.encode(arguments).decode()


def message_from_role(entry: dict[str, Any], path: str) -> Any:
    """A canonical message (or ``SystemText``) from one ``{"role", "content"}`` entry."""
    role = entry.get("role")
    blocks = _text_blocks(entry.get("content"), f"{path}.content")
    if role in ("system", "developer"):
        return SystemText("".join(b.text for b in blocks if isinstance(b, TextBlock)))
    if role == "user":
        return UserMessage(content=blocks, **_ids(entry))
    if role == "assistant":
        calls = entry.get("tool_calls") or []
        if not isinstance(calls, list):
            raise _fail(f"{path}.tool_calls", f"Expected `array`, got `{type(calls).__name__}`")
        for k, call in enumerate(calls):
            function = (call.get("function") or {}) if isinstance(call, dict) else None
            if not isinstance(function, dict):
                raise _fail(f"{path}.tool_calls[{k}]", "Expected a tool call object (with a `function` object)")
            blocks.append(
                ToolCallBlock(
                    id=str(call.get("id") or ""),
                    name=str(function.get("name") or call.get("name") or ""),
                    arguments=_arguments_text(function.get("arguments", call.get("arguments"))),
                )
            )
        return AssistantMessage(content=blocks, **_ids(entry))
    if role == "tool":
        return ToolResultMessage(
            tool_call_id=str(entry.get("tool_call_id") or ""),
            tool_name=entry.get("name"),
            content=blocks,
            **_ids(entry),
        )
    raise _fail(f"{path}.role", f"Unknown legacy role {role!r}")


def session_from_rows(rows: list[Any], read_raw: RawMessageReader) -> Session:
    """A Session from database rows, legacy or written by ``Session.to_rows``."""
    session = Session()
    tool_names: dict[str, str] = {}
    for i, row in enumerate(rows):
        path = f"$[{i}]"
        if not isinstance(row, dict) or not isinstance(row.get("kind"), str):
            raise _fail(path, "Expected a row object with a `kind` string")
        kind, data = row["kind"], row.get("data_json")
        text = data.encode() if isinstance(data, str) else data
        if isinstance(text, bytes):
            try:
                data = msgspec.json.decode(text)
            except msgspec.DecodeError as exc:
                raise _fail(f"{path}.data_json", f"data_json is not JSON: {exc}") from None
        if isinstance(data, dict) and data.get("type") == kind:  # a whole canonical message (to_rows)
            # read from its own text, so that an unknown message keeps its exact bytes
            raw = text.strip() if isinstance(text, bytes) else msgspec.json.encode(data)
            message = read_raw(msgspec.Raw(raw), f"{path}.data_json")
            session.messages.append(message)
            for block in getattr(message, "content", []):
                if type(block) is ToolCallBlock:
                    tool_names[block.id] = block.name
            continue
        where = path if data is None else f"{path}.data_json"
        fields = row if data is None else _row_data(data, path)
        if kind == "system":
            blocks = _text_blocks(fields.get("content"), f"{where}.content")
            text = "".join(b.text for b in blocks if type(b) is TextBlock)
            session.system_prompt = text if session.system_prompt is None else f"{session.system_prompt}\n\n{text}"
        elif kind in ("user", "assistant"):
            blocks = _text_blocks(fields.get("content"), f"{where}.content")
            cls = UserMessage if kind == "user" else AssistantMessage
            session.messages.append(cls(content=blocks, **_ids(row)))
        elif kind == "tool_call":
            session.messages.append(_with_tool_call(session, _row_data(data, path), path, tool_names))
        elif kind == "tool_result":
            session.messages.append(_tool_result_row(_row_data(data, path), row, path, tool_names))
        else:
            raise _fail(f"{path}.kind", f"Unknown row kind {kind!r}")
    return session


def _row_data(data: Any, path: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _fail(f"{path}.data_json", "Expected a JSON object in data_json")
    return data


def _with_tool_call(session: Session, data: dict[str, Any], path: str, tool_names: dict[str, str]) -> Any:
    """A legacy tool_call row joins the assistant message right before it (or starts one)."""
    call_id = data.get("tool_call_id", data.get("id"))
    name = data.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise _fail(f"{path}.data_json", "A tool_call row needs `tool_call_id` and `name` strings")
    block = ToolCallBlock(id=call_id, name=name, arguments=_arguments_text(data.get("arguments")))
    tool_names[call_id] = name
    last = session.messages[-1] if session.messages else None
    if isinstance(last, AssistantMessage):
        session.messages.pop()
        return msgspec.structs.replace(last, content=[*last.content, block])
    return AssistantMessage(content=[block])


def _tool_result_row(data: dict[str, Any], row: dict[str, Any], path: str, tool_names: dict[str, str]) -> Any:
    call_id = data.get("tool_call_id")
    if not isinstance(call_id, str):
        raise _fail(f"{path}.data_json.tool_call_id", "A tool_result row needs a `tool_call_id` string")
    output = data.get("output", "")
    text = output if isinstance(output, str) else msgspec.json.encode(output).decode()
    success = bool(data.get("success", True))
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=data.get("tool_name", tool_names.get(call_id)),
        content=[TextBlock(text=text)] if text else [],
        is_error=not success,
        status="success" if success else "error",
        **_ids(row),
    )
