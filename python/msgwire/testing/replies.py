"""Scripted replies: what a ``ScriptedServer`` answers, one per request, and how it delivers
them (in pieces, slowly, cut, reset, held open with keep-alives, an HTTP error in the dialect's
shape, or an error inside a 200 stream in the dialect's own frame)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from msgwire.formats import to_response_json
from msgwire.sse import SSEParser
from msgwire.transcode import Transcoder, transcode
from msgwire.types import AssistantMessage, ContentBlock, Dialect, Policy, TextBlock, ToolCallBlock, Usage

__all__ = [
    "KEEP",
    "Reply",
    "drop",
    "error",
    "error_body",
    "failed_body",
    "failed_stream",
    "recorded",
    "reply",
    "stream_bytes",
    "stream_error",
    "tool_call",
]

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
# The type of an error inside a stream when none is given: each API's word for its own failure.
_STREAM_ERROR_TYPES = {"openai": "server_error", "openai-responses": "server_error", "anthropic": "api_error"}


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """One answer of the script (build it with ``reply``, ``recorded``, ``error``,
    ``stream_error``, ``drop``).

    Delivery: the body goes out in pieces, one per stream event (or ``chunk_size`` bytes),
    ``delay`` seconds apart. Cut after that many body bytes: ``reset_after`` (a TCP reset: the
    client may lose what it had not read yet, as over a real network), ``close_after`` (the
    connection closed mid-body: the client reads every byte sent, then fails), ``hold_after``
    (then wait for the client to close). ``keepalive``: while a stream waits between two
    events (``delay``, ``hold_after``), a keep-alive every that many seconds (an SSE comment
    ``: keep-alive``; an empty line in Ollama's NDJSON), as servers do to keep proxies from
    closing a quiet stream; a ``hold_after`` inside an event then holds after the last whole
    event before it (a comment never splits an event).
    """

    message: AssistantMessage | None = None
    recorded: bytes | None = None
    recorded_dialect: Dialect | None = None
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    error_code: str | int | None = None
    """The error object's ``code`` (OpenAI's and compatible servers'; Gemini's number)."""
    in_stream: bool = False
    """The error goes inside a 200 stream, after ``message``'s content (``stream_error``)."""
    sse: bool = False
    """The HTTP error body is framed as server-sent events (``data: {"error": ...}``)."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    chunk_size: int | None = None
    delay: float = 0.0
    reset_after: int | None = None
    close_after: int | None = None
    hold_after: int | None = None
    keepalive: float | None = None
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
        blocks = _blocks(content)
        calls = any(type(b) is ToolCallBlock for b in blocks)
        message = AssistantMessage(
            content=blocks,
            stop_reason="tool_use" if calls else "end_turn",
            usage=usage or Usage(input_tokens=10, output_tokens=5),
        )
    return Reply(message=message, **delivery)


def _blocks(content: str | ContentBlock | Sequence[ContentBlock]) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)]
    if isinstance(content, Sequence):
        return list(cast("Sequence[ContentBlock]", content))  # not a str: mypy cannot tell
    return [content]


def recorded(data: bytes, dialect: Dialect, **delivery: Any) -> Reply:
    """A recorded stream of ``dialect``, served as it is to a client of that dialect (else
    transcoded to the client's, or assembled for a non-streamed request)."""
    return Reply(recorded=data, recorded_dialect=dialect, **delivery)


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,  # noqa: A002 - the provider's word
    code: str | int | None = None,
    retry_after: float | str | None = None,
    headers: dict[str, str] | None = None,
    sse: bool = False,
) -> Reply:
    """An HTTP error response in the shape of the request's dialect (``{"error": {...}}``);
    ``sse``: its body framed as server-sent events (``data: {"error": ...}``, as LiteLLM's
    ``/v1/responses`` sends it)."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = str(retry_after)
    return Reply(status=status, error_type=type, error_message=message, error_code=code, headers=extra, sse=sse)


def stream_error(
    message: str,
    *,
    type: str | None = None,  # noqa: A002 - the provider's word
    code: str | int | None = None,
    partial: str | ContentBlock | Sequence[ContentBlock] = "",
    **delivery: Any,
) -> Reply:
    """A 200 stream that fails inside: ``partial`` (text or blocks) streamed, then the
    provider's error in the dialect's own frame (``failed_stream``): ``type`` (the API's word for a
    server failure when not given: ``server_error``, Anthropic's ``api_error``, Gemini's
    ``INTERNAL``), ``message`` and ``code``. A request not streamed gets the error object in a
    200 body."""
    return Reply(
        message=AssistantMessage(content=_blocks(partial) if partial else []),
        error_type=type,
        error_message=message,
        error_code=code,
        in_stream=True,
        **delivery,
    )


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


def error_body(dialect: str, status: int, error_type: str | None, message: str, code: str | int | None = None) -> bytes:
    """An HTTP error body in the shape ``dialect``'s API returns."""
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    if dialect == "anthropic":
        return msgspec.json.encode({"type": "error", "error": {"type": kind, "message": message}})
    if dialect == "gemini":
        kind = error_type or _GEMINI_STATUS.get(status, "INTERNAL")
        number = code if isinstance(code, int) else status
        return msgspec.json.encode({"error": {"code": number, "message": message, "status": kind}})
    if dialect == "ollama":
        return msgspec.json.encode({"error": message})
    return msgspec.json.encode({"error": {"message": message, "type": kind, "param": None, "code": code}})


def failed_stream(
    message: AssistantMessage, dialect: Dialect, error_type: str | None, text: str, code: str | int | None = None
) -> bytes:
    """``message``'s content as a stream of ``dialect`` that fails inside: the provider's error
    in the frame its API sends: OpenAI's (and compatible servers') ``data: {"error": {...}}``,
    Anthropic's ``event: error``, a Responses ``response.failed`` (of the response the stream
    created; its error's ``code`` is ``error_type``), Gemini's ``data: {"error": {...}}``,
    Ollama's ``{"error": "..."}`` line."""
    kind = error_type or _STREAM_ERROR_TYPES.get(dialect)
    content = unfinished_stream(message, dialect)
    if dialect == "openai-responses":
        return content + _response_failed(content, {"code": kind, "message": text})
    body = error_body(dialect, 500, kind, text, code)
    if dialect == "anthropic":
        return content + b"event: error\ndata: " + body + b"\n\n"
    if dialect == "ollama":
        return content + body + b"\n"
    return content + b"data: " + body + (b"\r\n\r\n" if dialect == "gemini" else b"\n\n")


def failed_body(dialect: Dialect, error_type: str | None, text: str, code: str | int | None = None) -> bytes:
    """The 200 body of a request not streamed whose reply failed: the error object alone."""
    return error_body(dialect, 500, error_type or _STREAM_ERROR_TYPES.get(dialect), text, code)


def _response_failed(content: bytes, error: dict[str, Any]) -> bytes:
    """A Responses ``response.failed`` event: the response the stream created (the SDK checks
    it is the same one), failed with ``error``."""
    response: dict[str, Any] = {"id": "resp_scripted", "object": "response", "output": []}
    for event in SSEParser().feed(content):
        data = msgspec.json.decode(event.data)
        if data.get("type") == "response.created":
            response = data["response"]
            break
    failed = {"type": "response.failed", "response": {**response, "status": "failed", "error": error}}
    return b"event: response.failed\ndata: " + msgspec.json.encode(failed) + b"\n\n"


def unfinished_stream(message: AssistantMessage, dialect: Dialect) -> bytes:
    """``message``'s content as a stream of ``dialect`` that has not ended (no stop reason, no
    end marker): what came before an error in the stream."""
    event = msgspec.json.decode(to_response_json(message, "gemini", policy=KEEP))
    for candidate in event.get("candidates", []):
        candidate.pop("finishReason", None)
    data = b"data: " + msgspec.json.encode(event) + b"\r\n\r\n"
    return data if dialect == "gemini" else Transcoder("gemini", dialect).feed(data)
