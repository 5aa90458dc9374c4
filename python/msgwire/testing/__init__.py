"""Test doubles for code built on msgwire: a scripted model server on 127.0.0.1.

``ScriptedServer`` is a real HTTP server in a thread that answers every provider dialect with
replies given in advance, so that tests, benchmarks and demos run msgwire's providers (or the
openai and anthropic SDKs) over real sockets, never the internet. It needs nothing but the
standard library and msgwire's wire layer (as openai-agents' ``agents.testing`` and httpx's
``MockTransport`` do for theirs; this one goes through a real transport)::

    from msgwire.testing import ScriptedServer, reply, tool_call

    with ScriptedServer([reply([tool_call("read_file", {"path": "a.txt"})]), reply("Done.")]) as server:
        provider = OpenAI(base_url=server.url, api_key="test", model="gpt-4o")
        ...                                  # two model calls get the two replies, in turn
        server.requests[1].json()            # what the second call sent

- The dialect of a request is read from its path (``/chat/completions``, ``/responses``,
  ``/v1/messages``, ``:streamGenerateContent``, ``:generateContent``, ``/api/chat``), so one
  server's ``url`` is the ``base_url`` of every provider class and of the OpenAI and Anthropic
  SDKs; streamed or not from its body (``"stream"``) or path (Gemini).
- A reply is an assistant message, written in the request's dialect by msgwire's own writers
  (``to_response_json``; for a stream, the message as one Gemini event, transcoded by
  ``msgwire.transcode``), or a recorded stream (served as it is, or transcoded to the request's
  dialect), or an HTTP error in the dialect's error shape.
- Delivery can fail on purpose: ``error(429, retry_after=1)``, ``error(500)`` before the first
  byte (``sse=True``: its body framed as ``data: {"error": ...}``), ``stream_error("overloaded",
  type="server_error", code=503, partial="It is")`` (a 200 stream that fails inside, in the
  dialect's own error frame), ``drop()`` (the connection closed before any response),
  ``reset_after=N`` (N body bytes, then a TCP reset), ``close_after=N`` (N bytes, then the
  connection closed), ``delay=`` between pieces (a slow body), ``hold_after=N`` (N bytes, then
  wait for the client to close: the cancellation tests), ``keepalive=`` (seconds between
  keep-alive comments while the body waits: a stream that never goes quiet).
- Every request is recorded (``requests``) with what was done about it: bytes sent, whether
  the body was complete, whether the client closed the connection before its end.
"""

from __future__ import annotations

from .replies import (
    KEEP,
    Reply,
    drop,
    error,
    error_body,
    recorded,
    reply,
    stream_bytes,
    stream_error,
    tool_call,
)
from .server import Received, ScriptedServer

__all__ = [
    "KEEP",
    "Received",
    "Reply",
    "ScriptedServer",
    "drop",
    "error",
    "error_body",
    "recorded",
    "reply",
    "stream_bytes",
    "stream_error",
    "tool_call",
]
