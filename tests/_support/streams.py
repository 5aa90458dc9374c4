"""Provider streams built by hand for the stream tests: an SSE body from (event, payload) pairs,
an OpenAI chunk, a Responses event, one tool call whose arguments arrive in given fragments
(every dialect), and the JSON values its arguments are drawn from."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st


def sse(*events: tuple[str | None, Any]) -> bytes:
    """An SSE body from (event type or None, JSON payload or raw text) pairs."""
    out = []
    for event, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        out.append((f"event: {event}\n" if event else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def chat_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> tuple[None, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return None, {"id": "chatcmpl-1", "model": "gpt-4o", "choices": [choice], **extra}


def responses_event(kind: str, **fields: Any) -> tuple[str, Any]:
    return kind, {"type": kind, **fields}


def tool_args_stream(dialect: str, fragments: list[str]) -> bytes:
    """A stream of one tool call whose arguments arrive in ``fragments``."""
    if dialect == "openai":
        first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
        calls = [chat_chunk({"role": "assistant", "tool_calls": [first]})]
        calls += [chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments]
        return sse(*calls, chat_chunk({}, "tool_calls"), (None, "[DONE]"))
    if dialect == "anthropic":
        start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {}}}
        block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
        events = [("message_start", start)]
        events.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}))
        for fragment in fragments:
            delta = {"type": "input_json_delta", "partial_json": fragment}
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}))
        events.append(("message_stop", {"type": "message_stop"}))
        return sse(*events)
    if dialect == "openai-responses":
        item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
        events = [
            responses_event("response.created", response={"id": "resp_1", "model": "gpt-5"}),
            responses_event("response.output_item.added", output_index=0, item=item),
        ]
        events += [
            responses_event("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta=f)
            for f in fragments
        ]
        done = {**item, "arguments": "".join(fragments)}
        events.append(responses_event("response.output_item.done", output_index=0, item=done))
        events.append(responses_event("response.completed", response={"id": "resp_1", "status": "completed"}))
        return sse(*events)
    arguments = "".join(fragments)
    if dialect == "gemini":
        call = '{"functionCall": {"name": "f", "args": ' + arguments + "}}"
        return sse((None, '{"candidates": [{"content": {"parts": [' + call + ']}, "finishReason": "STOP"}]}'))
    assert dialect == "ollama"
    call = '{"function": {"name": "f", "arguments": ' + arguments + "}}"
    line = (
        '{"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [' + call + ']}, "done": false}'
    )
    return line.encode() + b'\n{"model":"m","done":true,"done_reason":"stop"}\n'


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(-1e6, 1e6).map(lambda x: round(x, 3))
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)
