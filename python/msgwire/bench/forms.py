"""The bench session as a skilled msgspec user would write it without msgwire (the one copy,
used by ``msgwire bench`` and the benches/ suite; the pydantic-ai form is the conversion msgwire
ships, ``msgwire.interop.pydantic_ai.to_model_messages``).

Tagged Structs for this conversation (tagged unions, ``frozen``, ``kw_only``, ``omit_defaults``,
``gc=False`` on every message, block and value struct; the Session envelope a plain mutable
Struct, like msgwire's), with msgwire's field names, order and types (Literal enums, datetime
timestamps, str ids, a nested usage Struct), only the fields the workload uses. So
``msgspec.json.encode(to_baseline(session))`` is byte for byte ``msgwire.dumps(session)``: both
sides of that ratio parse and write the same document.
"""

from __future__ import annotations

import datetime as dt
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
