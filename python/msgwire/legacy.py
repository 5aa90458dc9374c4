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

A list of a provider's own messages (OpenAI ``image_url`` parts, ``tool_calls`` and ``tool``
messages; Anthropic ``tool_use`` / ``tool_result`` / ``thinking`` blocks; Gemini ``parts``) is
read by that provider's request reader, as ``formats.from_request`` reads a body: nothing of it
becomes an unknown block. Messages read without an id get one derived from their position and
bytes (see ``_ids``), so importing the same log twice gives the same ids.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Callable
from typing import Any

import msgspec

from ._ids import derived_id
from .errors import ValidationError
from .types import (
    AssistantMessage,
    ContentBlock,
    Dialect,
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


def _ids(entry: dict[str, Any], derived: str | None = None) -> dict[str, Any]:
    """Keep a legacy entry's own id and timestamp when it has them (``derived``: the id of an
    entry without one)."""
    found: dict[str, Any] = {}
    if isinstance(entry.get("id"), str) and entry["id"]:
        found["id"] = entry["id"]
    elif derived is not None:
        found["id"] = derived
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


def message_from_role(entry: dict[str, Any], path: str, raw: bytes = b"") -> Any:
    """A canonical message (or ``SystemText``) from one ``{"role", "content"}`` entry; ``raw``:
    its bytes, from which (with ``path``) an entry without an id gets one."""
    derived = derived_id("legacy", path, raw) if raw else None
    role = entry.get("role")
    blocks = _text_blocks(entry.get("content"), f"{path}.content")
    if role in ("system", "developer"):
        return SystemText("".join(b.text for b in blocks if isinstance(b, TextBlock)))
    if role == "user":
        return UserMessage(content=blocks, **_ids(entry, derived))
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
        return AssistantMessage(content=blocks, **_ids(entry, derived))
    if role == "tool":
        return ToolResultMessage(
            tool_call_id=str(entry.get("tool_call_id") or ""),
            tool_name=entry.get("name"),
            content=blocks,
            **_ids(entry, derived),
        )
    raise _fail(f"{path}.role", f"Unknown legacy role {role!r}")


# --- a provider's own messages ------------------------------------------------------------------

_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
_OPENAI_PARTS = {"image_url", "input_audio", "file", "refusal"}


def provider_shape(entries: list[Any]) -> Dialect | None:
    """The dialect whose messages ``entries`` are, when they hold what only that dialect writes
    and the plain reader would keep as unknown blocks (``None``: role/content entries, OpenAI
    ``tool_calls`` and ``tool`` messages included, which the plain reader reads)."""
    openai = False
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        if "parts" in entry and "content" not in entry:
            return "gemini"
        content = entry.get("content")
        parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
        kinds = {p.get("type") for p in parts}
        if kinds & _ANTHROPIC_BLOCKS or any(p.get("type") == "image" and "source" in p for p in parts):
            return "anthropic"
        openai = openai or bool(kinds & _OPENAI_PARTS)
    return "openai" if openai else None


def request_body(entries: list[Any], dialect: Dialect) -> bytes:
    """The request body of ``dialect`` that holds ``entries`` (system entries as its system
    prompt where the dialect keeps it apart)."""
    if dialect == "openai":
        return msgspec.json.encode({"messages": entries})
    system = [e for e in entries if e.get("role") in ("system", "developer")]
    rest = [e for e in entries if e.get("role") not in ("system", "developer")]
    texts = [t.text for e in system for t in _text_blocks(e.get("content"), "$") if isinstance(t, TextBlock)]
    if dialect == "anthropic":
        body: dict[str, Any] = {"messages": rest}
        if texts:
            body["system"] = "\n\n".join(texts)
        return msgspec.json.encode(body)
    body = {"contents": rest}
    if texts:
        body["systemInstruction"] = {"parts": [{"text": t} for t in texts]}
    return msgspec.json.encode(body)


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
