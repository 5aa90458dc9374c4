"""The floor of ``msgwire.loads`` / ``dumps``: schema v1 written by hand as plain msgspec Structs
(the one copy, used by ``msgwire bench`` and the benches/ suite; the pydantic-ai form is the
conversion msgwire ships, ``msgwire.interop.pydantic_ai.to_model_messages``).

What a skilled msgspec user would write for the same documents without msgwire: the same fields
as msgwire's types, in the same order, with the same types and defaults, so that the floor
parses and fills exactly what ``msgwire.loads`` does:

- every message kind (``user``, ``assistant``, ``tool_result``, ``system_control``) and every
  block kind msgwire's decoder knows (``text``, ``thinking``, ``image`` with ``url`` /
  ``base64`` / ``path`` sources, ``file_reference``, ``mcp_resource``, ``tool_call``,
  ``server_tool_call``, ``server_tool_result``), tagged unions on ``"type"``;
- every field, including those this session never sets (citations, item ids, cache control,
  the OCR fields of an image, ``structured_content``, ...), each absent one a default to fill
  (an empty list is ``[]``, which msgspec copies per object, as msgwire's ``default_factory=list``);
- the same types: ``Literal`` enums, ``datetime`` timestamps, ``msgspec.Raw`` for kept provider
  objects, and the integer bounds of the schema (``msgspec.Meta(ge=0)`` on token counts and
  citation indexes, the u32 / i64 ranges);
- the same options: ``frozen=True, kw_only=True, omit_defaults=True, gc=False`` on every
  message, block and value struct; the Session envelope a plain mutable Struct, as msgwire's.

Not in the floor, because they are msgwire's own: ``ToolCallBlock``'s decode hook (arguments
equal to ``"{}"`` made the default object, so that ``dumps`` leaves them out: a C call per tool
call decoded, about 1.6% of the instructions of a session's ``loads``), the ``type`` property
and the methods. So ``msgspec.json.encode(BASELINE_DECODER.decode(data)) == msgwire.dumps(...)``
byte for byte, and the ratio to this floor is the cost of msgwire's wrapper and hook alone.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal, Union

import msgspec

from .._ids import new_id, now
from ..codec import dumps
from ..types import Message, Session

__all__ = [
    "BASELINE_DECODER",
    "BASELINE_ENCODER",
    "BaselineMessage",
    "BaselineSession",
    "baseline_message",
    "to_baseline",
]

_U64 = Annotated[int, msgspec.Meta(ge=0)]
_U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
_I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_FileStatus = Literal["pending", "resolved", "error"]
_StopReason = Literal[
    "end_turn", "length", "tool_use", "content_filter", "refusal", "pause", "error", "aborted", "unknown"
]


class _BTagged(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False, tag_field="type"):
    pass


class _BPlain(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    pass


# --- blocks -------------------------------------------------------------------------------------


class BaselineCacheControl(_BPlain, frozen=True, kw_only=True):
    type: str = "ephemeral"
    ttl: str | None = None


class BaselineCitation(_BPlain, frozen=True, kw_only=True):
    kind: str
    url: str | None = None
    title: str | None = None
    cited_text: str | None = None
    start_index: _U64 | None = None
    end_index: _U64 | None = None
    raw: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class BaselineText(_BTagged, tag="text", frozen=True, kw_only=True):
    text: str
    citations: list[BaselineCitation] = []
    item_id: str | None = None
    cache_control: BaselineCacheControl | None = None


class BaselineThinking(_BTagged, tag="thinking", frozen=True, kw_only=True):
    thinking: str = ""
    signature: str | None = None
    redacted: str | None = None
    item_id: str | None = None


class BaselineUrlSource(_BTagged, tag="url", frozen=True, kw_only=True):
    url: str


class BaselineBase64Source(_BTagged, tag="base64", frozen=True, kw_only=True):
    media_type: str
    data: str


class BaselinePathSource(_BTagged, tag="path", frozen=True, kw_only=True):
    path: str
    media_type: str | None = None


class BaselineImage(_BTagged, tag="image", frozen=True, kw_only=True):
    source: Union[BaselineUrlSource, BaselineBase64Source, BaselinePathSource]
    recognition_mode: Literal["vision", "ocr", "auto"] = "auto"
    recognized_text: str | None = None
    vision_analysis: str | None = None
    confidence: float | None = None
    mode_used: Literal["vision", "ocr"] | None = None
    error: str | None = None
    status: _FileStatus = "pending"
    script: str | None = None
    language: str | None = None
    notice: str | None = None
    attempts: _U32 = 0
    detail: Literal["auto", "low", "high"] | None = None
    cache_control: BaselineCacheControl | None = None


class BaselineFileReference(_BTagged, tag="file_reference", frozen=True, kw_only=True):
    path: str
    start_line: _I64 | None = None
    end_line: _I64 | None = None
    resolved_content: str | None = None
    status: _FileStatus = "pending"
    error: str | None = None


class BaselineMCPResource(_BTagged, tag="mcp_resource", frozen=True, kw_only=True):
    server_name: str
    resource_uri: str
    content: str | None = None
    mime_type: str | None = None
    retrieved_at: dt.datetime | None = None
    blob: str | None = None
    status: _FileStatus = "pending"
    error: str | None = None


class BaselineToolCall(_BTagged, tag="tool_call", frozen=True, kw_only=True):
    id: str
    name: str
    arguments: str = "{}"
    approval: Literal["pending", "approved", "denied"] = "pending"
    malformed: bool = False
    item_id: str | None = None
    cache_control: BaselineCacheControl | None = None


class BaselineServerToolCall(_BTagged, tag="server_tool_call", frozen=True, kw_only=True):
    id: str
    name: str
    arguments: str
    kind: str
    dialect: str
    raw: msgspec.Raw


class BaselineServerToolResult(_BTagged, tag="server_tool_result", frozen=True, kw_only=True):
    tool_call_id: str
    kind: str
    is_error: bool = False
    dialect: str
    raw: msgspec.Raw


BaselineBlock = Union[
    BaselineText,
    BaselineThinking,
    BaselineImage,
    BaselineFileReference,
    BaselineMCPResource,
    BaselineToolCall,
    BaselineServerToolCall,
    BaselineServerToolResult,
]


# --- messages -----------------------------------------------------------------------------------


class BaselineUsage(_BPlain, frozen=True, kw_only=True):
    input_tokens: _U64 = 0
    output_tokens: _U64 = 0
    cache_read_tokens: _U64 = 0
    cache_write_tokens: _U64 = 0
    reasoning_tokens: _U64 = 0


class BaselineToolError(_BPlain, frozen=True, kw_only=True):
    message: str
    traceback: str | None = None
    recoverable: bool = True


class BaselineUser(_BTagged, tag="user", frozen=True, kw_only=True):
    id: str = msgspec.field(default_factory=new_id)
    timestamp: dt.datetime = msgspec.field(default_factory=now)
    content: list[BaselineBlock] = []
    source: Literal["direct", "broadcast", "synthetic", "context"] = "direct"
    name: str | None = None


class BaselineAssistant(_BTagged, tag="assistant", frozen=True, kw_only=True):
    id: str = msgspec.field(default_factory=new_id)
    timestamp: dt.datetime = msgspec.field(default_factory=now)
    content: list[BaselineBlock] = []
    stop_reason: _StopReason | None = None
    raw_stop_reason: str | None = None
    usage: BaselineUsage | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None
    name: str | None = None


class BaselineToolResult(_BTagged, tag="tool_result", frozen=True, kw_only=True):
    id: str = msgspec.field(default_factory=new_id)
    timestamp: dt.datetime = msgspec.field(default_factory=now)
    tool_call_id: str
    tool_name: str | None = None
    content: list[BaselineBlock] = []
    is_error: bool = False
    status: Literal["success", "error", "denied", "interrupted"] = "success"
    error: BaselineToolError | None = None
    started_at: dt.datetime | None = None
    duration_ms: float | None = None
    structured_content: Any = None
    cache_control: BaselineCacheControl | None = None


class BaselineSystemControl(_BTagged, tag="system_control", frozen=True, kw_only=True):
    id: str = msgspec.field(default_factory=new_id)
    timestamp: dt.datetime = msgspec.field(default_factory=now)
    control: str
    params: dict[str, Any] = {}


BaselineMessage = Union[BaselineUser, BaselineAssistant, BaselineToolResult, BaselineSystemControl]


class BaselineSession(msgspec.Struct, kw_only=True):
    version: int = 1
    id: str = msgspec.field(default_factory=new_id)
    system_prompt: str | None = None
    created_at: dt.datetime = msgspec.field(default_factory=now)
    updated_at: dt.datetime = msgspec.field(default_factory=now)
    metadata: dict[str, Any] = {}
    messages: list[BaselineMessage] = []


BASELINE_ENCODER = msgspec.json.Encoder()
BASELINE_DECODER = msgspec.json.Decoder(BaselineSession)
_MESSAGE_DECODER: msgspec.json.Decoder[BaselineMessage] = msgspec.json.Decoder(BaselineMessage)


# --- the baseline form --------------------------------------------------------------------------


def to_baseline(session: Session) -> BaselineSession:
    """The session in the floor's types: its canonical JSON decoded by the floor (the same
    bytes, so the same values; its objects made by one decode, like ``msgwire.loads``'s)."""
    return BASELINE_DECODER.decode(dumps(session))


def baseline_message(message: Message) -> BaselineMessage:
    return _MESSAGE_DECODER.decode(dumps(message))
