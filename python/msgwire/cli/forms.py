"""The bench session in the forms its peers read and write.

- The plain msgspec baseline: tagged Structs a skilled msgspec user would write for this
  conversation without msgwire (``frozen``, ``kw_only``, ``omit_defaults``, ``gc=False``), with
  msgwire's field names, order and types, so it writes byte for byte what ``msgwire.dumps``
  writes: both sides of that ratio parse and write the same document.
- pydantic-ai: the same conversation as ``ModelRequest`` / ``ModelResponse`` for
  ``ModelMessagesTypeAdapter`` (imported only when pydantic-ai is installed). It has no place
  for the session envelope or the message ids; everything else maps one to one.
"""

from __future__ import annotations

import datetime as dt
from types import ModuleType
from typing import Any, Literal, Union

import msgspec

from ..types import AssistantMessage, Session, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultMessage, UserMessage


class _Tagged(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False, tag_field="type"):
    pass


class BaselineText(_Tagged, tag="text", frozen=True, kw_only=True):
    text: str


class BaselineThinking(_Tagged, tag="thinking", frozen=True, kw_only=True):
    thinking: str = ""
    signature: str | None = None


class BaselineToolCall(_Tagged, tag="tool_call", frozen=True, kw_only=True):
    id: str
    name: str
    arguments: str = "{}"
    approval: Literal["pending", "approved", "denied"] = "pending"


BaselineBlock = Union[BaselineText, BaselineThinking, BaselineToolCall]


class BaselineUsage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0


class BaselineUser(_Tagged, tag="user", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]


class BaselineAssistant(_Tagged, tag="assistant", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]
    stop_reason: Literal["end_turn", "length", "tool_use"] | None = None
    usage: BaselineUsage | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None


class BaselineToolResult(_Tagged, tag="tool_result", frozen=True, kw_only=True):
    id: str
    timestamp: dt.datetime
    tool_call_id: str
    tool_name: str | None = None
    content: list[BaselineBlock]


class BaselineSession(msgspec.Struct, kw_only=True):
    version: int = 1
    id: str
    system_prompt: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    metadata: dict[str, Any] = {}
    messages: list[Union[BaselineUser, BaselineAssistant, BaselineToolResult]] = []


BASELINE_ENCODER = msgspec.json.Encoder()
BASELINE_DECODER = msgspec.json.Decoder(BaselineSession)


def _baseline_block(block: Any) -> BaselineBlock:
    if type(block) is TextBlock:
        return BaselineText(text=block.text)
    if type(block) is ThinkingBlock:
        return BaselineThinking(thinking=block.thinking, signature=block.signature)
    if type(block) is ToolCallBlock:
        return BaselineToolCall(id=block.id, name=block.name, arguments=block.arguments, approval=block.approval)
    raise TypeError(f"no baseline form for {type(block).__name__}")


def to_baseline(session: Session) -> BaselineSession:
    messages: list[Any] = []
    for m in session.messages:
        content = [_baseline_block(b) for b in getattr(m, "content", ())]
        if type(m) is UserMessage:
            messages.append(BaselineUser(id=m.id, timestamp=m.timestamp, content=content))
        elif type(m) is AssistantMessage:
            usage = None
            if m.usage is not None:
                usage = BaselineUsage(input_tokens=m.usage.input_tokens, output_tokens=m.usage.output_tokens)
            messages.append(
                BaselineAssistant(
                    id=m.id,
                    timestamp=m.timestamp,
                    content=content,
                    stop_reason=m.stop_reason,  # type: ignore[arg-type]  # the bench session's are these three
                    usage=usage,
                    model=m.model,
                    provider=m.provider,
                    response_id=m.response_id,
                )
            )
        elif type(m) is ToolResultMessage:
            messages.append(
                BaselineToolResult(
                    id=m.id, timestamp=m.timestamp, tool_call_id=m.tool_call_id, tool_name=m.tool_name, content=content
                )
            )
        else:
            raise TypeError(f"no baseline form for {type(m).__name__}")
    return BaselineSession(
        version=session.version,
        id=session.id,
        system_prompt=session.system_prompt,
        created_at=session.created_at,
        updated_at=session.updated_at,
        metadata=dict(session.metadata),
        messages=messages,
    )


_FINISH = {"end_turn": "stop", "tool_use": "tool_call", "length": "length"}


def to_pydantic_ai(session: Session, pa: ModuleType) -> list[Any]:
    """The conversation as pydantic-ai messages; ``pa`` is ``pydantic_ai.messages``. Consecutive
    tool results are the parts of one ``ModelRequest``, as pydantic-ai makes them."""
    out: list[Any] = []
    pending: list[Any] = []
    if session.system_prompt is not None:
        pending.append(pa.SystemPromptPart(content=session.system_prompt, timestamp=session.created_at))
    for m in session.messages:
        if type(m) is UserMessage:
            pending.append(pa.UserPromptPart(content=m.text, timestamp=m.timestamp))
        elif type(m) is ToolResultMessage:
            part = pa.ToolReturnPart(tool_name=m.tool_name or "", content=m.text, tool_call_id=m.tool_call_id)
            pending.append(part)
        elif type(m) is AssistantMessage:
            if pending:
                out.append(pa.ModelRequest(parts=pending))
                pending = []
            out.append(_pydantic_ai_response(m, pa))
    if pending:
        out.append(pa.ModelRequest(parts=pending))
    return out


def _pydantic_ai_response(m: AssistantMessage, pa: ModuleType) -> Any:
    parts: list[Any] = []
    for b in m.content:
        if type(b) is ThinkingBlock:
            parts.append(pa.ThinkingPart(content=b.thinking, signature=b.signature, provider_name=m.provider))
        elif type(b) is TextBlock:
            parts.append(pa.TextPart(content=b.text))
        elif type(b) is ToolCallBlock:
            parts.append(pa.ToolCallPart(tool_name=b.name, args=b.arguments, tool_call_id=b.id))
    usage = m.usage
    return pa.ModelResponse(
        parts=parts,
        usage=pa.RequestUsage(
            input_tokens=usage.input_tokens if usage else 0, output_tokens=usage.output_tokens if usage else 0
        ),
        model_name=m.model,
        timestamp=m.timestamp,
        provider_name=m.provider,
        provider_response_id=m.response_id,
        finish_reason=_FINISH.get(m.stop_reason or "end_turn"),
    )
