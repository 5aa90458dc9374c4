"""The request and response workloads of ``test_formats.py`` and ``wire_interleaved.py`` and their
peers, written once: the hand-written OpenAI conversion of a session (``by_hand``), one large
reply (~1 MB as a body, as hostile as a real one: 300 KB of signed thinking, 300 KB of text, 200
tool calls of 2-20 KB of code, ``large_reply``) and the official SDK's type for each dialect's body (``sdk_type``).
"""

from __future__ import annotations

import json
import random
from typing import Any

import msgwire
from msgwire.bench.workloads import edit_arguments, hostile_text

RESPONSE_DIALECTS = ("openai", "anthropic", "openai-responses")


def by_hand(session: msgwire.Session) -> bytes:
    """A careful hand-written OpenAI conversion: system first, text joined, tool calls with
    their raw arguments, one tool message per result (results already follow their calls)."""
    messages: list[dict[str, Any]] = []
    if session.system_prompt:
        messages.append({"role": "system", "content": session.system_prompt})
    for message in session.messages:
        if isinstance(message, msgwire.UserMessage):
            parts: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, msgwire.TextBlock):
                    parts.append({"type": "text", "text": block.text})
                elif isinstance(block, msgwire.ImageBlock) and isinstance(block.source, msgwire.UrlSource):
                    parts.append({"type": "image_url", "image_url": {"url": block.source.url}})
                elif isinstance(block, msgwire.FileReferenceBlock) and block.resolved_content is not None:
                    lines = f' lines="{block.start_line}-{block.end_line}"' if block.start_line else ""
                    text = f'<file path="{block.path}"{lines}>{block.resolved_content}</file>'
                    parts.append({"type": "text", "text": text})
            content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
            messages.append({"role": "user", "content": content})
        elif isinstance(message, msgwire.AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, msgwire.TextBlock))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [
                {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": b.arguments}}
                for b in message.content
                if isinstance(b, msgwire.ToolCallBlock)
            ]
            if calls:
                entry["tool_calls"] = calls
            messages.append(entry)
        elif isinstance(message, msgwire.ToolResultMessage):
            text = "".join(b.text for b in message.content if isinstance(b, msgwire.TextBlock))
            messages.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": text})
    return json.dumps({"messages": messages}, ensure_ascii=False).encode()


def large_reply(dialect: str) -> msgwire.AssistantMessage:
    """~1 MB as hostile as a real reply (``workloads.hostile_text``: escapes, non-ASCII, code):
    300 KB of signed thinking, 300 KB of text, 195 calls of ~2 KB and 5 of ~20 KB of code."""
    rng = random.Random(20261128)
    calls = [
        msgwire.ToolCallBlock(
            id=f"call_{i:024d}", name="edit_file", arguments=edit_arguments(rng, 20_000 if i % 40 == 0 else 2_000)
        )
        for i in range(200)
    ]
    thinking = msgwire.ThinkingBlock(thinking=hostile_text(rng, 300_000), signature="EqQBCkYIBxgCKkA" + "x" * 400)
    return msgwire.AssistantMessage(
        content=[thinking, msgwire.TextBlock(text=hostile_text(rng, 300_000)), *calls],
        stop_reason="tool_use",
        raw_stop_reason={"openai": "tool_calls", "anthropic": "tool_use"}.get(dialect, "completed"),
        usage=msgwire.Usage(input_tokens=12000, output_tokens=90000, cache_read_tokens=8000, reasoning_tokens=30000),
        model="big-model-2026",
        provider="anthropic" if dialect == "anthropic" else "openai",
        response_id={"openai": "chatcmpl-big", "anthropic": "msg_big"}.get(dialect, "resp_big"),
    )


def sdk_type(dialect: str) -> Any:
    if dialect == "openai":
        from openai.types.chat import ChatCompletion

        return ChatCompletion
    if dialect == "anthropic":
        from anthropic.types import Message

        return Message
    from openai.types.responses import Response

    return Response
