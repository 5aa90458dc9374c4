"""pydantic-ai's message history, both ways: ``to_model_messages`` (a msgwire conversation as
``list[ModelMessage]`` for ``agent.run(..., message_history=...)``) and ``from_model_messages``
(``result.all_messages()`` as a ``msgwire.Session``).

What maps one to one: user text and images (URL ``ImageUrl`` with the ``detail`` as vendor
metadata, base64 ``BinaryContent``: its ``detail`` read, not written back, as pydantic-ai's Gemini
model would send it as video metadata), assistant text, thinking with its signature and provider,
tool calls (the arguments' JSON text exactly as sent), tool results (``outcome`` from the
result's ``status``: ``error`` is pydantic-ai's ``failed``), usage (reasoning tokens as
``output_reasoning_tokens``), model, provider, response id and finish reason. A file reference,
an MCP resource or an image known only by its recognized text goes as the marked text the
request writers send for it (rendered by the Rust core); ``system_control`` messages are left
out, as for every model. Reading back, a part msgwire has no block for is kept whole as an
``UnknownBlock`` of its pydantic-ai JSON, and goes back to pydantic-ai as the part it was; any
other unknown block (another provider's part) is left out, as the request writers leave it out
of a dialect that is not its own.

pydantic-ai is imported here only (``pip install 'msgwire[pydantic-ai]'``). The openai and
anthropic SDKs' own message params need no interop module: they are dicts of the providers'
request formats, which ``msgwire.from_request`` and ``to_request`` read and write.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import msgspec

from ..errors import MissingExtraError
from ..formats import to_request
from ..types import (
    AssistantMessage,
    Base64Source,
    ContentBlock,
    ImageBlock,
    Message,
    Session,
    StopReason,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UrlSource,
    Usage,
    UserMessage,
)

try:
    from pydantic_ai.messages import (
        BinaryContent,
        ImageUrl,
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ModelResponsePart,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserContent,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage
except ImportError as exc:
    raise MissingExtraError("msgwire.interop.pydantic_ai", "pydantic-ai", exc) from None

from .pydantic_ai_model import MsgwireModel
from .pydantic_ai_request import retry_message, user_blocks
from .pydantic_ai_response import FINISH_REASONS

__all__ = ["MsgwireModel", "from_model_messages", "to_model_messages"]

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "length",
    "tool_call": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}
# pydantic-ai's usage counts reasoning tokens in the versions that have this field (msgwire takes
# pydantic-ai-slim>=1): carried both ways where it exists
_REASONING = "output_reasoning_tokens" in {f.name for f in dataclasses.fields(RequestUsage)}
# the kinds ``_kept`` gives a pydantic-ai user content item and a response part
_CONTENT, _PART = "pydantic_ai_content", "pydantic_ai_part"
_OUTCOME = {"success": "success", "error": "failed", "denied": "denied", "interrupted": "interrupted"}
_STATUS = {
    "success": "success",
    "failed": "error",
    "denied": "denied",
    "interrupted": "interrupted",
    "retried": "error",
}


# --- msgwire -> pydantic-ai --------------------------------------------------------------------


def to_model_messages(source: Session | Sequence[Message], *, system_prompt: str | None = None) -> list[ModelMessage]:
    """The conversation as pydantic-ai's message history: each user message and each run of tool
    results is one ``ModelRequest`` (the system prompt opens the first), each assistant message a
    ``ModelResponse``."""
    messages = list(source.messages if isinstance(source, Session) else source)
    if system_prompt is None and isinstance(source, Session):
        system_prompt = source.system_prompt
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = [SystemPromptPart(content=system_prompt)] if system_prompt else []

    def flush() -> None:
        if pending:
            out.append(ModelRequest(parts=list(pending)))
            pending.clear()

    for message in messages:
        if isinstance(message, (SystemControlMessage, UnknownMessage)):
            continue
        if isinstance(message, AssistantMessage):
            flush()
            out.append(_response(message))
        elif isinstance(message, ToolResultMessage):
            pending.append(_tool_return(message))
        elif isinstance(message, UserMessage):
            pending.append(UserPromptPart(content=_user_content(message.content), timestamp=message.timestamp))
    flush()
    return out


def _marked_text(block: ContentBlock) -> str:
    """A block no pydantic-ai part holds, as the text the request writers send for it."""
    body = to_request([UserMessage(content=[block])], "openai")
    content = body["messages"][0]["content"] if body["messages"] else ""
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _user_content(blocks: list[ContentBlock]) -> str | list[UserContent]:
    parts: list[UserContent] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ImageBlock) and isinstance(block.source, UrlSource) and block.mode_used != "ocr":
            metadata = {"detail": block.detail} if block.detail else None
            parts.append(ImageUrl(url=block.source.url, vendor_metadata=metadata))
        elif isinstance(block, ImageBlock) and isinstance(block.source, Base64Source) and block.mode_used != "ocr":
            # no `detail` written: pydantic-ai's Gemini model sends a BinaryContent's metadata it does
            # not know as the part's `video_metadata` (an ImageUrl's it leaves out)
            parts.append(BinaryContent(data=base64.b64decode(block.source.data), media_type=block.source.media_type))
        elif isinstance(block, UnknownBlock):
            if block.type == _CONTENT:
                parts.append(_restored(block))
        else:
            parts.append(_marked_text(block))
    if all(isinstance(p, str) for p in parts) and len(parts) == 1:
        return parts[0]  # type: ignore[return-value]
    return parts


def _response(message: AssistantMessage) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(TextPart(content=block.text))
        elif isinstance(block, ThinkingBlock):
            parts.append(
                ThinkingPart(content=block.thinking, signature=block.signature, provider_name=message.provider)
            )
        elif isinstance(block, ToolCallBlock):
            parts.append(ToolCallPart(tool_name=block.name, args=block.arguments, tool_call_id=block.id))
        elif isinstance(block, UnknownBlock):
            if block.type == _PART:
                parts.append(_restored(block))
        else:
            parts.append(TextPart(content=_marked_text(block)))
    usage = message.usage or Usage()
    reasoning: dict[str, Any] = {"output_reasoning_tokens": usage.reasoning_tokens} if _REASONING else {}
    return ModelResponse(
        parts=parts,
        usage=RequestUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            **reasoning,
        ),
        model_name=message.model,
        timestamp=message.timestamp,
        provider_name=message.provider,
        provider_response_id=message.response_id,
        finish_reason=FINISH_REASONS.get(message.stop_reason) if message.stop_reason else None,  # type: ignore[arg-type]
    )


def _restored(block: UnknownBlock) -> Any:
    """A pydantic-ai part or content item that ``from_model_messages`` kept whole, as it was."""
    return _adapter(block.type).validate_python(msgspec.json.decode(block.raw)["part"])


@functools.cache
def _adapter(kind: str) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(UserContent if kind == _CONTENT else ModelResponsePart)


def _tool_return(message: ToolResultMessage) -> ToolReturnPart:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    content: Any = message.structured_content if message.structured_content is not None else text
    return ToolReturnPart(
        tool_name=message.tool_name or "",
        content=content,
        tool_call_id=message.tool_call_id,
        timestamp=message.timestamp,
        outcome=_OUTCOME[message.status],  # type: ignore[arg-type]
    )


# --- pydantic-ai -> msgwire --------------------------------------------------------------------


def from_model_messages(messages: Sequence[ModelMessage]) -> Session:
    """pydantic-ai's message history as a ``Session`` (its system prompt parts joined as the
    session's system prompt)."""
    session = Session()
    system: list[str] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            session.messages.append(_assistant(message))
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                system.append(part.content)
            elif isinstance(part, UserPromptPart):
                blocks = user_blocks(part.content, _kept_content)
                session.messages.append(UserMessage(content=blocks, timestamp=part.timestamp))
            elif isinstance(part, ToolReturnPart):
                session.messages.append(_result(part))
            elif isinstance(part, RetryPromptPart):
                session.messages.append(retry_message(part))
    if system:
        session.system_prompt = "\n\n".join(system)
    return session


def _kept(part: Any, kind: str) -> UnknownBlock:
    """A pydantic-ai part msgwire has no block for, kept whole as its JSON."""
    return UnknownBlock(msgspec.json.encode({"type": kind, "part": _dump(part)}), kind)


def _kept_content(item: Any) -> UnknownBlock:
    return _kept(item, _CONTENT)


def _dump(value: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(type(value)).dump_python(value, mode="json")


def _assistant(response: ModelResponse) -> AssistantMessage:
    content: list[ContentBlock] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            content.append(TextBlock(text=part.content))
        elif isinstance(part, ThinkingPart):
            content.append(ThinkingBlock(thinking=part.content, signature=part.signature))
        elif isinstance(part, ToolCallPart):
            args = part.args if isinstance(part.args, str) else msgspec.json.encode(part.args or {}).decode()
            content.append(ToolCallBlock(id=part.tool_call_id, name=part.tool_name, arguments=args))
        else:
            content.append(_kept(part, _PART))
    u = response.usage
    usage = Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        reasoning_tokens=getattr(u, "output_reasoning_tokens", 0),
    )
    return AssistantMessage(
        content=content,
        usage=usage,
        model=response.model_name,
        provider=response.provider_name,
        response_id=response.provider_response_id,
        stop_reason=_STOP.get(response.finish_reason) if response.finish_reason else None,
        raw_stop_reason=response.finish_reason,
        timestamp=response.timestamp,
    )


def _result(part: ToolReturnPart) -> ToolResultMessage:
    content = part.content
    structured = None
    if isinstance(content, str):
        text = content
    else:
        structured = _dump(content) if not isinstance(content, (dict, list, int, float, bool)) else content
        text = msgspec.json.encode(structured).decode()
    status = _STATUS.get(part.outcome, "success")
    return ToolResultMessage(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        content=[TextBlock(text=text)] if text else [],
        is_error=status != "success",
        status=status,  # type: ignore[arg-type]
        structured_content=structured,
        timestamp=part.timestamp,
    )
