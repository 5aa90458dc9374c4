"""What openai-agents asks a ``Model`` for, as one msgwire ``Request``: the instructions, the
input items (read by msgwire's Responses reader, as ``StoreSession`` reads them), the function
tools and handoffs, the output schema and the model settings. ``MsgwireModel``
(``msgwire.interop.openai_agents_model``) sends it through a msgwire provider.

The items are openai-agents' own: what its models returned, as ``ModelResponse.to_input_items``
dumps them. Before the reader sees them, what openai-agents adds to the Responses shape is taken
off (``provider_data``, the placeholder id ``__fake_id__`` of items made from another API, an
output text's ``logprobs``, fields that are ``null``), and what it means is kept: a reasoning
item's ``provider_data.thinking_blocks`` (signed and redacted thinking, as ``MsgwireModel``
writes it for Anthropic and Gemini, and openai-agents' LiteLLM model for Anthropic) become
the thinking blocks of that provider, sent back as its own. Output messages without a real id
(made from Chat Completions) are read as the assistant's text.

What a provider cannot be sent is refused with ``agents.exceptions.UserError`` naming it: hosted
tools (web search, file search, computer, MCP servers...: openai-agents' Responses model sends
those), ``MCPToolChoice``, per-call ``extra_headers`` / ``extra_query`` (give headers to the
provider: ``OpenAI(headers=...)``), ``top_logprobs``, ``context_management``,
``preserve_raw_usage``, and the Responses-only settings on another dialect."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .. import formats
from ..types import (
    AssistantMessage,
    ContentBlock,
    Dialect,
    Extra,
    Message,
    NamedTool,
    Reasoning,
    Request,
    ResponseFormat,
    ThinkingBlock,
    Tool,
    ToolChoice,
)

try:
    from agents.agent_output import AgentOutputSchemaBase
    from agents.exceptions import UserError
    from agents.handoffs import Handoff
    from agents.model_settings import ModelSettings
    from agents.tool import FunctionTool
except ImportError as exc:  # pragma: no cover - the package's import says which extra
    from ..errors import MissingExtraError

    raise MissingExtraError("msgwire.interop.openai_agents (MsgwireModel)", "openai-agents", exc) from None

__all__ = ["FAKE_ID", "THINKING_PROVIDER", "request_of", "tools_of"]

FAKE_ID = "__fake_id__"
"""openai-agents' placeholder id of items made from another API than Responses."""
THINKING_PROVIDER = "provider"
"""The key of a reasoning item's ``provider_data`` naming whose ``thinking_blocks`` they are
(msgwire's provider name; openai-agents' LiteLLM items, which have none, are Anthropic's)."""
_MARK = "rs_msgwire_thinking_"  # the id of a stand-in reasoning item, replaced after reading

_encode = msgspec.json.Encoder().encode
_RESPONSES_ONLY = ("truncation", "response_include", "prompt_cache_options")


# --- the conversation -----------------------------------------------------------------------------


def _plain(item: Any, index: int) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)  # an SDK object given as an item
    if callable(dump):
        return dict(dump(exclude_unset=True))
    raise TypeError(f"input[{index}] is {type(item).__name__}, not a Responses input item (a dict)")


def _text_of(parts: Sequence[Any]) -> str:
    return "".join(
        str(p.get("text") or p.get("refusal") or "")
        for p in parts
        if isinstance(p, Mapping) and p.get("type") in ("output_text", "refusal")
    )


def _thinking_blocks(data: Sequence[Any]) -> list[ContentBlock]:
    """The ``thinking_blocks`` of a reasoning item's ``provider_data`` (LiteLLM's shape:
    ``{"type": "thinking", "thinking", "signature"}``, ``{"type": "redacted_thinking", "data"}``)."""
    blocks: list[ContentBlock] = []
    for block in data:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
            blocks.append(ThinkingBlock(redacted=block["data"]))
        elif block.get("type", "thinking") == "thinking":
            blocks.append(ThinkingBlock(thinking=str(block.get("thinking") or ""), signature=block.get("signature")))
    return blocks


class _Items:
    """The items as the Responses reader reads them, and the thinking taken out of them."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.thinking: dict[str, tuple[str, list[ContentBlock]]] = {}  # stand-in id -> provider, blocks

    def add(self, item: dict[str, Any]) -> None:
        data = item.pop("provider_data", None)
        if item.get("id") == FAKE_ID:
            del item["id"]
        for key in [k for k, v in item.items() if v is None]:
            del item[key]
        kind = item.get("type")
        if kind == "reasoning":
            self._reasoning(item, data if isinstance(data, Mapping) else {})
        elif kind == "message" or (kind is None and item.get("role") == "assistant"):
            self._message(item)
        else:
            self.items.append(item)

    def _reasoning(self, item: dict[str, Any], data: Mapping[str, Any]) -> None:
        blocks = data.get("thinking_blocks")
        if isinstance(blocks, list) and blocks:
            mark = f"{_MARK}{len(self.thinking)}"
            provider = data.get(THINKING_PROVIDER)
            self.thinking[mark] = (provider if isinstance(provider, str) else "anthropic", _thinking_blocks(blocks))
            self.items.append({"type": "reasoning", "id": mark, "summary": [{"type": "summary_text", "text": "."}]})
            return
        content = item.pop("content", None)  # raw reasoning text (Chat Completions' `reasoning`)
        if not item.get("summary") and isinstance(content, list):
            text = "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
            item["summary"] = [{"type": "summary_text", "text": text}] if text else []
        if item.get("summary") or item.get("encrypted_content") or "id" in item:
            self.items.append(item)

    def _message(self, item: dict[str, Any]) -> None:
        content = item.get("content")
        if item.get("role") != "assistant" or not isinstance(content, list):
            self.items.append(item)
            return
        if "id" not in item:  # made from Chat Completions: the reader takes text without an item id
            self.items.append({"role": "assistant", "content": _text_of(content)})
            return
        parts: list[dict[str, Any]] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "refusal":
                parts.append({"type": "output_text", "text": part.get("refusal") or "", "annotations": []})
            elif isinstance(part, Mapping):
                parts.append({k: v for k, v in part.items() if k != "logprobs" and v is not None})
        self.items.append({**item, "content": parts})

    def messages(self) -> tuple[str | None, list[Message]]:
        session = formats.from_request(_encode({"input": self.items}), "openai-responses")
        messages = session.messages
        if self.thinking:
            messages = [self._restored(m) if isinstance(m, AssistantMessage) else m for m in messages]
        return session.system_prompt, messages

    def _restored(self, message: AssistantMessage) -> AssistantMessage:
        content: list[ContentBlock] = []
        provider = message.provider
        for block in message.content:
            mark = block.item_id if isinstance(block, ThinkingBlock) else None
            if mark is not None and mark in self.thinking:
                provider, blocks = self.thinking[mark]
                content += blocks
            else:
                content.append(block)
        if len(content) == len(message.content) and provider == message.provider:
            return message
        return msgspec.structs.replace(message, content=content, provider=provider)


def _conversation(system_instructions: str | None, given: str | list[Any]) -> tuple[str | None, list[Message]]:
    if isinstance(given, str):
        return system_instructions, formats.from_request(
            _encode({"input": [{"role": "user", "content": given}]}), "openai-responses"
        ).messages
    items = _Items()
    for index, item in enumerate(given):
        items.add(_plain(item, index))
    system, messages = items.messages()
    prompts = [p for p in (system_instructions, system) if p]
    return ("\n\n".join(prompts) if prompts else None), messages


# --- tools, output, settings -----------------------------------------------------------------------


def tools_of(tools: Sequence[Any], handoffs: Sequence[Handoff[Any, Any]]) -> list[Tool]:
    """Function tools and handoffs as msgwire tools; a hosted tool is refused."""
    out: list[Tool] = []
    for tool in tools:
        if not isinstance(tool, FunctionTool):
            raise UserError(
                f"MsgwireModel sends function tools only; {type(tool).__name__} is a hosted tool of "
                "OpenAI's Responses API: run it with openai-agents' OpenAIResponsesModel"
            )
        features = [f for f in ("defer_loading", "namespace") if getattr(tool, f, None)]
        if features:
            raise UserError(
                f"tool {tool.name!r}: {', '.join(features)} is a Responses-only feature MsgwireModel does not send"
            )
        out.append(
            Tool(
                name=tool.name,
                description=tool.description or "",
                parameters=tool.params_json_schema,
                strict=tool.strict_json_schema,
            )
        )
    out += [
        Tool(
            name=handoff.tool_name,
            description=handoff.tool_description or "",
            parameters=handoff.input_json_schema,
            strict=handoff.strict_json_schema,
        )
        for handoff in handoffs
    ]
    return out


def _tool_choice(choice: Any) -> ToolChoice | None:
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice in ("auto", "required", "none"):
            return choice  # type: ignore[return-value]  # one of ToolChoice's words
        if choice == "programmatic_tool_calling":
            raise UserError(
                "tool_choice='programmatic_tool_calling' is a Responses-only feature MsgwireModel does not send"
            )
        return NamedTool(name=choice)
    raise UserError(f"MsgwireModel does not send tool_choice {type(choice).__name__} (MCP tools are Responses-only)")


def _response_format(schema: AgentOutputSchemaBase | None) -> ResponseFormat | None:
    if schema is None or schema.is_plain_text():
        return None
    return ResponseFormat(
        type="json_schema", name="final_output", schema=schema.json_schema(), strict=schema.is_strict_json_schema()
    )


def _reasoning(settings: ModelSettings) -> Reasoning | None:
    given = settings.reasoning
    if given is None:
        return None
    effort = getattr(given, "effort", None)
    summary = getattr(given, "summary", None) or getattr(given, "generate_summary", None)
    if effort is None and summary is None:
        return None
    return Reasoning(effort=effort, summary=summary)


def _extra(settings: ModelSettings, dialect: Dialect) -> Extra | None:
    refused = [
        name
        for name in ("extra_headers", "extra_query", "top_logprobs", "context_management", "preserve_raw_usage")
        if getattr(settings, name, None)
    ]
    if refused:
        raise UserError(
            f"MsgwireModel does not send {', '.join(refused)}: msgwire's provider has no per-call "
            "headers or query (give headers to the provider: OpenAI(headers=...)), and its message "
            "keeps no logprobs or raw usage"
        )
    fields: dict[str, Any] = {}
    chat = {"frequency_penalty", "presence_penalty", "verbosity", "store", "prompt_cache_retention"}
    for name in (
        "frequency_penalty",
        "presence_penalty",
        "verbosity",
        "store",
        "prompt_cache_retention",
        *_RESPONSES_ONLY,
    ):
        value = getattr(settings, name, None)
        if value is None:
            continue
        if dialect == "openai-responses":
            key = {"response_include": "include", "verbosity": "text"}.get(name, name)
            fields[key] = {"verbosity": value} if name == "verbosity" else value
            if name in ("frequency_penalty", "presence_penalty"):
                raise UserError(f"{name} is a Chat Completions setting the Responses API does not take")
        elif dialect == "openai" and name in chat:
            fields[name] = value
        else:
            raise UserError(f"MsgwireModel does not send {name} to a {dialect} provider (it has no such setting)")
    if isinstance(settings.extra_body, Mapping):
        fields.update(settings.extra_body)
    elif settings.extra_body is not None:
        raise UserError(f"extra_body must be a JSON object for MsgwireModel, got {type(settings.extra_body).__name__}")
    fields.update(settings.extra_args or {})
    return Extra(dialect=dialect, fields=fields) if fields else None


def request_of(
    system_instructions: str | None,
    items: str | list[Any],
    settings: ModelSettings,
    tools: Sequence[Any],
    output_schema: AgentOutputSchemaBase | None,
    handoffs: Sequence[Handoff[Any, Any]],
    *,
    model: str | None,
    dialect: Dialect,
) -> Request:
    """openai-agents' arguments of one model call as a msgwire ``Request`` for ``dialect``."""
    system_prompt, messages = _conversation(system_instructions, items)
    sent_tools = tools_of(tools, handoffs)
    return Request(
        model=model,
        messages=messages,
        system_prompt=system_prompt,
        tools=sent_tools,
        tool_choice=_tool_choice(settings.tool_choice),
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_tokens=settings.max_tokens,
        response_format=_response_format(output_schema),
        parallel_tool_calls=settings.parallel_tool_calls if sent_tools else None,
        reasoning=_reasoning(settings),
        metadata=dict(settings.metadata) if settings.metadata else None,
        extra=_extra(settings, dialect),
    )
