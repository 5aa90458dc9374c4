"""What ``MsgwireModel`` sends: pydantic-ai's messages, request parameters and settings as one
``msgwire.Request`` (the provider writes it in its dialect).

- System prompt parts and the instructions (pydantic-ai's, the prompted output's included) are
  the request's system prompt, joined by a blank line.
- A user prompt's text and images (``ImageUrl``, ``BinaryContent`` of an image) are user blocks;
  a tool return is a tool result with the text pydantic-ai would send (``model_response_str``);
  a retry prompt is a tool result marked as an error, or a user message when it names no tool.
- A response of this model's own provider goes back as it came: text, tool calls (the
  arguments' JSON text), thinking with its signature (Anthropic's redacted thinking as redacted,
  a Responses reasoning item with its id and encrypted content). Thinking of another provider is
  marked foreign, and the provider's ``Policy`` decides (dropped by default).
- Function tools and output tools are the request's tools; a run that must end in a tool call
  (no text output allowed) sets ``tool_choice="required"``; native output is a JSON schema
  ``response_format``, prompted output a JSON object one where the profile says the model takes it.

What cannot be carried is refused with pydantic-ai's ``UserError`` naming it: native (built-in)
tools, image output, files that are not images (audio, video, documents) in a prompt.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgwire.errors import MissingExtraError

try:
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.messages import (
        BinaryContent,
        ImageUrl,
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as exc:
    raise MissingExtraError("msgwire.interop.pydantic_ai", "pydantic-ai", exc) from None

from ..types import (
    AssistantMessage,
    Base64Source,
    ContentBlock,
    Dialect,
    Extra,
    ImageBlock,
    Message,
    Reasoning,
    Request,
    ResponseFormat,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolCallBlock,
    ToolChoice,
    ToolResultMessage,
    UrlSource,
    UserMessage,
)

__all__ = ["EXTRA_SETTINGS", "REDACTED_ID", "build_request", "msgwire_provider", "retry_message", "user_blocks"]

REDACTED_ID = "redacted_thinking"
"""The ``ThinkingPart.id`` pydantic-ai's Anthropic model gives redacted thinking (its data in
``signature``)."""

_MSGWIRE_PROVIDER: dict[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}
EXTRA_SETTINGS: dict[str, frozenset[str]] = {
    "seed": frozenset({"openai", "ollama"}),
    "presence_penalty": frozenset({"openai"}),
    "frequency_penalty": frozenset({"openai"}),
    "logit_bias": frozenset({"openai"}),
    "top_k": frozenset({"anthropic", "ollama"}),
}
"""Settings written as body fields of the dialects named (msgwire has no field of its own for
them); ``MsgwireModel`` declares them unsupported on the other dialects."""
ANTHROPIC_MAX_TOKENS = 4096
"""Anthropic needs ``max_tokens``: pydantic-ai's ``AnthropicModel`` sends 4096 when none is set."""


def msgwire_provider(dialect: Dialect) -> str:
    """The ``provider`` msgwire's streams of ``dialect`` write on their messages."""
    return _MSGWIRE_PROVIDER[dialect]


def build_request(
    messages: Sequence[ModelMessage],
    settings: Mapping[str, Any] | None,
    params: Any,
    *,
    dialect: Dialect,
    system: str,
    instructions: str | None,
    json_object_output: bool,
) -> Request:
    """The ``msgwire.Request`` of one model call (``params``: pydantic-ai's
    ``ModelRequestParameters``, already prepared; ``system``: the model's provider name, which marks
    the responses it made; ``instructions``: the joined instructions for this request)."""
    settings = settings or {}
    _refuse_what_cannot_be_sent(params)
    system_parts: list[str] = []
    history: list[Message] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            history.append(_assistant(message, dialect, system))
            continue
        if not isinstance(message, ModelRequest):
            raise UserError(f"MsgwireModel cannot send a {type(message).__name__}")
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                system_parts.append(part.content)
            elif isinstance(part, UserPromptPart):
                blocks = user_blocks(part.content, _text_content_or_refused)
                history.append(UserMessage(content=blocks, timestamp=part.timestamp))
            elif isinstance(part, ToolReturnPart):
                history.append(
                    ToolResultMessage(
                        tool_call_id=part.tool_call_id,
                        tool_name=part.tool_name,
                        content=[TextBlock(text=part.model_response_str())],
                        timestamp=part.timestamp,
                    )
                )
            elif isinstance(part, RetryPromptPart):
                history.append(retry_message(part))
            else:
                raise UserError(f"MsgwireModel cannot send a {type(part).__name__} (no msgwire message carries it)")
    if instructions:
        system_parts.append(instructions)
    tools = [_tool(t) for t in [*_function_tools(params), *params.output_tools]]
    tool_choice: ToolChoice | None = None
    if tools:
        tool_choice = "auto" if params.allow_text_output else "required"
    max_tokens = settings.get("max_tokens")
    if max_tokens is None and dialect == "anthropic":
        max_tokens = ANTHROPIC_MAX_TOKENS
    return Request(
        messages=history,
        system_prompt="\n\n".join(system_parts) if system_parts else None,
        tools=tools,
        tool_choice=tool_choice,
        temperature=settings.get("temperature"),
        top_p=settings.get("top_p"),
        max_tokens=max_tokens,
        stop=list(settings["stop_sequences"]) if settings.get("stop_sequences") else None,
        parallel_tool_calls=settings.get("parallel_tool_calls") if tools else None,
        response_format=_response_format(params, json_object_output),
        reasoning=_reasoning(getattr(params, "thinking", None)),
        extra=_extra(settings, dialect),
    )


def _refuse_what_cannot_be_sent(params: Any) -> None:
    native = getattr(params, "native_tools", None) or getattr(params, "builtin_tools", None)
    if native:
        names = ", ".join(sorted({type(t).__name__ for t in native}))
        raise UserError(
            f"MsgwireModel sends function tools only, not a provider's native tools ({names}): "
            "use the provider's own pydantic-ai model for web search, code execution or MCP servers"
        )
    if getattr(params, "allow_image_output", False):
        raise UserError("MsgwireModel reads text, thinking and tool calls: image output is not supported")


def _function_tools(params: Any) -> list[Any]:
    declared = getattr(params, "declared_function_tools", None)  # the tools this request declares (2.x)
    return list(declared if declared is not None else params.function_tools)


def _tool(definition: Any) -> Tool:
    return Tool(
        name=definition.name,
        description=definition.description or "",
        parameters=definition.parameters_json_schema,
        strict=definition.strict,
    )


def _response_format(params: Any, json_object_output: bool) -> ResponseFormat | None:
    if params.output_mode == "native" and params.output_object is not None:
        output = params.output_object
        return ResponseFormat(
            type="json_schema",
            name=output.name or "final_result",
            description=output.description,
            schema=output.json_schema,
            strict=output.strict,
        )
    if params.output_mode == "prompted" and json_object_output:
        return ResponseFormat(type="json_object")
    return None


def _reasoning(thinking: object) -> Reasoning | None:
    """pydantic-ai's unified ``thinking`` setting: ``True``, ``False`` or an effort."""
    if thinking is None:
        return None
    if thinking is False:
        return Reasoning(enabled=False)
    if thinking is True:
        return Reasoning(enabled=True, effort="medium")
    return Reasoning(enabled=True, effort=str(thinking))


def _extra(settings: Mapping[str, Any], dialect: Dialect) -> Extra | None:
    fields: dict[str, Any] = {}
    for name, dialects in EXTRA_SETTINGS.items():
        if name in settings and dialect in dialects:
            fields[name] = settings[name]
    body = settings.get("extra_body")
    if isinstance(body, Mapping):
        fields.update(body)
    return Extra(dialect=dialect, fields=fields) if fields else None


def user_blocks(content: str | Sequence[Any], other: Callable[[Any], ContentBlock]) -> list[ContentBlock]:
    """A user prompt's text and images as msgwire blocks, for a request and for the history
    conversion alike (an image's ``detail`` from its ``vendor_metadata``); ``other`` makes the
    block of any other item (or refuses it)."""
    if isinstance(content, str):
        return [TextBlock(text=content)]
    blocks: list[ContentBlock] = []
    for item in content:
        if isinstance(item, str):
            blocks.append(TextBlock(text=item))
        elif isinstance(item, ImageUrl):
            detail = (getattr(item, "vendor_metadata", None) or {}).get("detail")
            blocks.append(ImageBlock(source=UrlSource(url=item.url), detail=detail))
        elif isinstance(item, BinaryContent) and item.is_image:
            data = base64.b64encode(item.data).decode()
            detail = (getattr(item, "vendor_metadata", None) or {}).get("detail")
            blocks.append(ImageBlock(source=Base64Source(media_type=item.media_type, data=data), detail=detail))
        else:
            blocks.append(other(item))
    return blocks


def _text_content_or_refused(item: Any) -> ContentBlock:
    if hasattr(item, "content") and isinstance(item.content, str) and type(item).__name__ == "TextContent":
        return TextBlock(text=item.content)
    raise UserError(
        f"MsgwireModel sends text and images in a prompt, not {type(item).__name__}"
        + (f" ({item.media_type})" if isinstance(getattr(item, "media_type", None), str) else "")
    )


def retry_message(part: RetryPromptPart) -> Message:
    """A retry prompt: a tool result marked as an error, or a user message when it names no tool."""
    text = part.model_response()
    if part.tool_name is None:
        return UserMessage(content=[TextBlock(text=text)], timestamp=part.timestamp)
    return ToolResultMessage(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        content=[TextBlock(text=text)],
        is_error=True,
        status="error",
        timestamp=part.timestamp,
    )


def _assistant(response: ModelResponse, dialect: Dialect, system: str) -> AssistantMessage:
    """A response in the history. One of this provider's keeps its signatures and item ids; one of
    another provider is marked with that provider's name, so that the request writer treats its
    thinking as foreign (``Policy.thinking``)."""
    own = response.provider_name in (None, system)
    responses_api = dialect == "openai-responses"
    content: list[ContentBlock] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            item_id = part.id if own and responses_api and getattr(part, "id", None) else None
            content.append(TextBlock(text=part.content, item_id=item_id))
        elif isinstance(part, ThinkingPart):
            content.append(_thinking(part, own and part.provider_name in (None, system), responses_api))
        elif isinstance(part, ToolCallPart):
            item_id = getattr(part, "id", None) if own and responses_api else None
            content.append(
                ToolCallBlock(
                    id=part.tool_call_id, name=part.tool_name, arguments=part.args_as_json_str(), item_id=item_id
                )
            )
        else:
            raise UserError(f"MsgwireModel cannot send a {type(part).__name__} back (no msgwire block carries it)")
    return AssistantMessage(
        content=content,
        provider=msgwire_provider(dialect) if own else response.provider_name,
        model=response.model_name,
        response_id=response.provider_response_id,
        timestamp=response.timestamp,
    )


def _thinking(part: ThinkingPart, own: bool, responses_api: bool) -> ThinkingBlock:
    if not own:
        return ThinkingBlock(thinking=part.content)
    if part.id == REDACTED_ID:
        return ThinkingBlock(redacted=part.signature)
    item_id = part.id if responses_api else None
    return ThinkingBlock(thinking=part.content, signature=part.signature, item_id=item_id)
