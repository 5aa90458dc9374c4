"""Code as a user writes it: it must type-check under mypy --strict with no error (run by
tests/test_typing.py). Each narrowing below is what the README shows."""

from __future__ import annotations

import msgwire
from msgwire import formats


def read(body: bytes) -> str:
    out = []
    with msgwire.stream(body, "openai", partial_args=True) as events:
        for event in events:
            if event.type == "text_delta":
                out.append(event.text)
            elif event.type == "tool_call_end":
                out.append(event.block.name + event.block.arguments)
            elif event.type == "tool_call_delta":
                out.append(event.fragment)
            elif event.type == "message_end":
                out.append(event.stop_reason or "")
        message: msgwire.AssistantMessage = events.message()
    return "".join(out) + message.text


def blocks(message: msgwire.AssistantMessage) -> list[str]:
    names = []
    for block in message.content:
        if isinstance(block, msgwire.ToolCallBlock):
            names.append(block.name)
        elif isinstance(block, msgwire.TextBlock):
            names.append(block.text)
    return names


def failure(body: bytes) -> str:
    try:
        return msgwire.assemble(body, "anthropic").text
    except msgwire.StreamError as error:
        partial = error.partial_message
        return partial.text if partial is not None else ""


def requests(session: msgwire.Session) -> int:
    request = msgwire.Request(model="m", messages=session.messages, tool_choice="required")
    body = msgwire.to_request(request, "anthropic")
    converted = formats.convert_request(session, "gemini")
    losses = [loss.kind for loss in converted.report.entries if loss.message is None]
    again = msgwire.read_request(body, "anthropic")
    return len(losses) + len(again.messages) + len(converted.dict())


def dialects() -> list[msgwire.Dialect]:
    return list(formats.DIALECTS)
