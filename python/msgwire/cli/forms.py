"""The bench session in the forms its peers read and write (the one copy, used by
``msgwire bench`` and the benches/ suite).

- The plain msgspec baseline: tagged Structs a skilled msgspec user would write for this
  conversation without msgwire (tagged unions, ``frozen``, ``kw_only``, ``omit_defaults``,
  ``gc=False`` on every message, block and value struct; the Session envelope a plain mutable
  Struct, like msgwire's), with msgwire's field names, order and types (Literal enums, datetime
  timestamps, str ids, a nested usage Struct), only the fields the workload uses. So
  ``msgspec.json.encode(to_baseline(session))`` is byte for byte ``msgwire.dumps(session)``:
  both sides of that ratio parse and write the same document.
- pydantic-ai: the same conversation as ``ModelRequest`` / ``ModelResponse`` for
  ``ModelMessagesTypeAdapter`` (the caller passes ``pydantic_ai.messages``: pydantic-ai is
  optional). What it has no place for is left out: the ``system_control`` messages, the session
  envelope (id, created/updated, metadata), the per-message ids, the tool results'
  ``started_at`` / ``duration_ms`` and structured ``error`` (the error text stays in the
  content, with ``outcome="failed"``). Everything else maps one to one.
"""

from __future__ import annotations

import datetime as dt
from types import ModuleType
from typing import Any, Literal, Union

import msgspec

from ..types import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UrlSource,
    Usage,
    UserMessage,
)

# --- the plain msgspec baseline -------------------------------------------------------------


class _BTagged(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False, tag_field="type"):
    pass


class _BPlain(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    pass


class BaselineText(_BTagged, tag="text", frozen=True, kw_only=True):
    text: str


class BaselineThinking(_BTagged, tag="thinking", frozen=True, kw_only=True):
    thinking: str = ""
    signature: str | None = None


class BaselineUrlSource(_BTagged, tag="url", frozen=True, kw_only=True):
    url: str


class BaselineImage(_BTagged, tag="image", frozen=True, kw_only=True):
    source: BaselineUrlSource


class BaselineFileReference(_BTagged, tag="file_reference", frozen=True, kw_only=True):
    path: str
    start_line: int | None = None
    end_line: int | None = None
    resolved_content: str | None = None
    status: Literal["pending", "resolved", "error"] = "pending"


class BaselineToolCall(_BTagged, tag="tool_call", frozen=True, kw_only=True):
    id: str
    name: str
    arguments: str = "{}"
    approval: Literal["pending", "approved", "denied"] = "pending"


BaselineBlock = Union[BaselineText, BaselineThinking, BaselineImage, BaselineFileReference, BaselineToolCall]


class BaselineUsage(_BPlain, frozen=True, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class BaselineToolError(_BPlain, frozen=True, kw_only=True):
    message: str
    recoverable: bool = True


class BaselineUser(_BTagged, tag="user", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]


class BaselineAssistant(_BTagged, tag="assistant", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]
    stop_reason: Literal["end_turn", "length", "tool_use"] | None = None
    usage: BaselineUsage | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None


class BaselineToolResult(_BTagged, tag="tool_result", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    tool_call_id: str
    tool_name: str | None = None
    content: list[BaselineBlock]
    is_error: bool = False
    status: Literal["success", "error", "denied", "interrupted"] = "success"
    error: BaselineToolError | None = None
    started_at: dt.datetime | None = None
    duration_ms: float | None = None


class BaselineSystemControl(_BTagged, tag="system_control", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    control: str
    params: dict[str, Any] = {}


BaselineMessage = Union[BaselineUser, BaselineAssistant, BaselineToolResult, BaselineSystemControl]


class BaselineSession(msgspec.Struct, kw_only=True):
    version: int = 1
    id: str
    system_prompt: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    metadata: dict[str, Any] = {}
    messages: list[BaselineMessage] = []


BASELINE_ENCODER = msgspec.json.Encoder()
BASELINE_DECODER = msgspec.json.Decoder(BaselineSession)


# --- the baseline form --------------------------------------------------------------------------


def baseline_block(b: Any) -> Any:
    if type(b) is TextBlock:
        return BaselineText(text=b.text)
    if type(b) is ThinkingBlock:
        return BaselineThinking(thinking=b.thinking, signature=b.signature)
    if type(b) is ImageBlock and type(b.source) is UrlSource:  # the workload's images are URLs
        return BaselineImage(source=BaselineUrlSource(url=b.source.url))
    if type(b) is FileReferenceBlock:
        return BaselineFileReference(
            path=b.path,
            start_line=b.start_line,
            end_line=b.end_line,
            resolved_content=b.resolved_content,
            status=b.status,
        )
    if type(b) is ToolCallBlock:
        return BaselineToolCall(id=b.id, name=b.name, arguments=b.arguments, approval=b.approval)
    raise TypeError(type(b))


def baseline_message(m: Any) -> Any:
    common = {"id": m.id, "timestamp": m.timestamp}
    if type(m) is UserMessage:
        return BaselineUser(**common, content=[baseline_block(b) for b in m.content])
    if type(m) is AssistantMessage:
        u = m.usage
        return BaselineAssistant(
            **common,
            content=[baseline_block(b) for b in m.content],
            stop_reason=m.stop_reason,  # type: ignore[arg-type]
            usage=None if u is None else BaselineUsage(**msgspec.structs.asdict(u)),
            model=m.model,
            provider=m.provider,
            response_id=m.response_id,
        )
    if type(m) is ToolResultMessage:
        return BaselineToolResult(
            **common,
            tool_call_id=m.tool_call_id,
            tool_name=m.tool_name,
            content=[baseline_block(b) for b in m.content],
            is_error=m.is_error,
            status=m.status,
            error=None if m.error is None else BaselineToolError(message=m.error.message),
            started_at=m.started_at,
            duration_ms=m.duration_ms,
        )
    if type(m) is SystemControlMessage:
        return BaselineSystemControl(**common, control=m.control, params=dict(m.params))
    raise TypeError(type(m))


def to_baseline(session: Session) -> BaselineSession:
    return BaselineSession(
        version=session.version,
        id=session.id,
        system_prompt=session.system_prompt,
        created_at=session.created_at,
        updated_at=session.updated_at,
        metadata=dict(session.metadata),
        messages=[baseline_message(m) for m in session.messages],
    )


# --- the pydantic-ai form ---------------------------------------------------------------------

_FINISH = {"end_turn": "stop", "tool_use": "tool_call", "length": "length"}


def _pa_user_content(message: UserMessage, pa: ModuleType) -> Any:
    blocks = message.content
    if len(blocks) == 1 and type(blocks[0]) is TextBlock:
        return blocks[0].text
    parts: list[Any] = []
    for b in blocks:
        if type(b) is TextBlock:
            parts.append(b.text)
        elif type(b) is ImageBlock:
            parts.append(pa.ImageUrl(url=b.source.url))  # type: ignore[union-attr]
        elif type(b) is FileReferenceBlock:
            meta = {"path": b.path, "start_line": b.start_line, "end_line": b.end_line}
            parts.append(pa.TextContent(content=b.resolved_content or "", metadata=meta))
        else:
            raise TypeError(type(b))
    return parts


def _pa_response(m: AssistantMessage, pa: ModuleType) -> Any:
    parts: list[Any] = []
    for b in m.content:
        if type(b) is ThinkingBlock:
            parts.append(pa.ThinkingPart(content=b.thinking, signature=b.signature, provider_name=m.provider))
        elif type(b) is TextBlock:
            parts.append(pa.TextPart(content=b.text))
        elif type(b) is ToolCallBlock:
            parts.append(pa.ToolCallPart(tool_name=b.name, args=b.arguments, tool_call_id=b.id))
        else:
            raise TypeError(type(b))
    u = m.usage or Usage()
    return pa.ModelResponse(
        parts=parts,
        usage=pa.RequestUsage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens,
            output_reasoning_tokens=u.reasoning_tokens,
        ),
        model_name=m.model,
        timestamp=m.timestamp,
        provider_name=m.provider,
        provider_response_id=m.response_id,
        finish_reason=_FINISH[m.stop_reason or "end_turn"],
    )


def to_pydantic_ai(session: Session, pa: ModuleType) -> list[Any]:
    """The conversation as pydantic-ai messages; ``pa`` is ``pydantic_ai.messages`` (imported by
    the caller: pydantic-ai is optional). Consecutive tool results become the parts of one
    ``ModelRequest``, as pydantic-ai makes them; ``system_control`` messages are left out."""
    out: list[Any] = []
    pending: list[Any] = []  # parts of the request being built
    if session.system_prompt is not None:
        pending.append(pa.SystemPromptPart(content=session.system_prompt, timestamp=session.created_at))

    def flush() -> None:
        if pending:
            out.append(pa.ModelRequest(parts=list(pending), timestamp=pending[-1].timestamp))
            pending.clear()

    for m in session.messages:
        if type(m) is UserMessage:
            if any(type(p) is pa.ToolReturnPart for p in pending):
                flush()
            pending.append(pa.UserPromptPart(content=_pa_user_content(m, pa), timestamp=m.timestamp))
        elif type(m) is ToolResultMessage:
            pending.append(
                pa.ToolReturnPart(
                    tool_name=m.tool_name or "",
                    content="".join(b.text for b in m.content if type(b) is TextBlock),
                    tool_call_id=m.tool_call_id,
                    timestamp=m.timestamp,
                    outcome="failed" if m.is_error else "success",
                )
            )
        elif type(m) is AssistantMessage:
            flush()
            out.append(_pa_response(m, pa))
        # system_control: no pydantic-ai equivalent, left out
    flush()
    return out
