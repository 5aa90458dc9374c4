"""Scripted replies: what a ``ScriptedServer`` answers, one per request, and how it delivers
them (in pieces, slowly, cut, reset, held open, or an HTTP error in the dialect's shape)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from msgwire.formats import to_response_json
from msgwire.transcode import transcode
from msgwire.types import AssistantMessage, ContentBlock, Dialect, Policy, TextBlock, ToolCallBlock, Usage

__all__ = ["KEEP", "Reply", "drop", "error", "error_body", "recorded", "reply", "stream_bytes", "tool_call"]

KEEP = Policy(thinking="keep", redacted_thinking="keep", unknown="keep")
"""Replies carry every block of their message (thinking of another provider included)."""
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """One answer of the script (build it with ``reply``, ``recorded``, ``error``, ``drop``).

    Delivery: the body goes out in pieces, one per stream event (or ``chunk_size`` bytes),
    ``delay`` seconds apart. Cut after that many body bytes: ``reset_after`` (a TCP reset: the
    client may lose what it had not read yet, as over a real network), ``close_after`` (the
    connection closed mid-body: the client reads every byte sent, then fails), ``hold_after``
    (then wait for the client to close).
    """

    message: AssistantMessage | None = None
    recorded: bytes | None = None
    recorded_dialect: Dialect | None = None
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    chunk_size: int | None = None
    delay: float = 0.0
    reset_after: int | None = None
    close_after: int | None = None
    hold_after: int | None = None
    drop: bool = False
    gate: threading.Event | None = None
    """The body waits for this event after the headers went out (the first byte on demand)."""


_call_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> ToolCallBlock:  # noqa: A002
    """A tool call block for a scripted reply (``id`` made up when not given)."""
    text = arguments if isinstance(arguments, str) else msgspec.json.encode(arguments or {}).decode()
    return ToolCallBlock(id=id or f"call_{next(_call_ids):04d}", name=name, arguments=text)


def reply(
    content: str | ContentBlock | Sequence[ContentBlock] | AssistantMessage,
    *,
    usage: Usage | None = None,
    **delivery: Any,
) -> Reply:
    """A reply holding ``content`` (text, blocks, or a whole message). Its stop reason is
    ``tool_use`` when it calls tools, else ``end_turn``; its model is the request's."""
    if isinstance(content, AssistantMessage):
        message = content
    else:
        blocks: list[ContentBlock]
        if isinstance(content, str):
            blocks = [TextBlock(text=content)]
        elif isinstance(content, Sequence):
            blocks = list(cast("Sequence[ContentBlock]", content))  # not a str: mypy cannot tell
        else:
            blocks = [content]
        calls = any(type(b) is ToolCallBlock for b in blocks)
        message = AssistantMessage(
            content=blocks,
            stop_reason="tool_use" if calls else "end_turn",
            usage=usage or Usage(input_tokens=10, output_tokens=5),
        )
    return Reply(message=message, **delivery)


def recorded(data: bytes, dialect: Dialect, **delivery: Any) -> Reply:
    """A recorded stream of ``dialect``, served as it is to a client of that dialect (else
    transcoded to the client's, or assembled for a non-streamed request)."""
    return Reply(recorded=data, recorded_dialect=dialect, **delivery)


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,  # noqa: A002 - the provider's word
    retry_after: float | str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error response in the shape of the request's dialect (``{"error": {...}}``)."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = str(retry_after)
    return Reply(status=status, error_type=type, error_message=message, headers=extra)


def drop() -> Reply:
    """Close the connection without any response (a network failure before the first byte)."""
    return Reply(drop=True)


def stream_bytes(message: AssistantMessage, dialect: Dialect) -> bytes:
    """``message`` as a complete stream of ``dialect``, written by msgwire: one Gemini event
    (``to_response_json``: a Gemini response is one event of its stream), transcoded."""
    if dialect == "ollama":
        return to_response_json(message, "ollama", policy=KEEP) + b"\n"
    event = b"data: " + to_response_json(message, "gemini", policy=KEEP) + b"\r\n\r\n"
    if dialect == "gemini":
        return event
    return b"".join(transcode([event], "gemini", dialect))


def error_body(dialect: str, status: int, error_type: str | None, message: str) -> bytes:
    """An HTTP error body in the shape ``dialect``'s API returns."""
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    if dialect == "anthropic":
        return msgspec.json.encode({"type": "error", "error": {"type": kind, "message": message}})
    if dialect == "gemini":
        kind = error_type or _GEMINI_STATUS.get(status, "INTERNAL")
        return msgspec.json.encode({"error": {"code": status, "message": message, "status": kind}})
    if dialect == "ollama":
        return msgspec.json.encode({"error": message})
    return msgspec.json.encode({"error": {"message": message, "type": kind, "param": None, "code": None}})
