"""Telling the dialect of a recording or a request body when the command line does not say.

A recording is recognised from its first payloads (the first KiBs): each ``data:`` line of an
SSE stream, or each line of an NDJSON one, that is a whole JSON object is classified by its
keys, the first that says something wins; when none does (an event cut by the sniff window),
the raw markers of each dialect decide. A request body is recognised from its top-level keys,
then from what only one dialect writes in its messages; when two dialects fit, ``--from`` must
say which.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..formats import DIALECTS
from ..types import Dialect
from .inputs import UsageError

STREAM_DIALECTS: tuple[str, ...] = ("openai", "openai-responses", "anthropic", "gemini", "ollama")
SNIFF_SIZE = 16 * 1024

# (dialect, pattern) in the order they are tried on the raw bytes.
_MARKERS: tuple[tuple[Dialect, re.Pattern[bytes]], ...] = (
    ("anthropic", re.compile(rb'event: *message_start|"type" *: *"message_start"')),
    ("openai-responses", re.compile(rb'"type" *: *"response\.|event: *response\.')),
    ("gemini", re.compile(rb'"candidates" *:')),
    ("openai", re.compile(rb'"choices" *:|chat\.completion\.chunk')),
    ("ollama", re.compile(rb'"message" *:.*"done" *:')),
)


def _payloads(head: bytes) -> Iterable[bytes]:
    """The candidate JSON payloads of the first bytes: SSE data lines, or NDJSON lines."""
    for raw in head.splitlines():
        line = raw.strip()
        if line.startswith(b"data:"):
            yield line[5:].strip()
        elif line.startswith(b"{"):
            yield line


def _classify_payload(payload: Mapping[str, Any], sse: bool) -> Dialect | None:
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind == "message_start" or kind.startswith("content_block_"):
            return "anthropic"
        if kind.startswith("response."):
            return "openai-responses"
    if "candidates" in payload:
        return "gemini"
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai"
    if not sse and "message" in payload and "done" in payload:
        return "ollama"
    return None


def sniff_stream(head: bytes) -> Dialect | None:
    """The dialect of a recording from its first bytes, or ``None`` when nothing tells."""
    head = head[:SNIFF_SIZE]
    sse = bool(re.search(rb"^(data|event):", head, re.MULTILINE))
    for payload in _payloads(head):
        try:
            value = json.loads(payload)
        except ValueError:  # cut by the window, or not JSON ([DONE], a comment)
            continue
        if isinstance(value, dict) and (dialect := _classify_payload(value, sse)) is not None:
            return dialect
    for dialect, marker in _MARKERS:
        if (dialect != "ollama" or not sse) and marker.search(head):
            return dialect
    return None


def stream_dialect(head: bytes, name: str) -> Dialect:
    dialect = sniff_stream(head)
    if dialect is None:
        choices = ", ".join(STREAM_DIALECTS)
        raise UsageError(f"cannot tell the dialect of {name} from its first bytes: pass --dialect ({choices})")
    return dialect


# --- request bodies --------------------------------------------------------------------------

_ANTHROPIC_PARTS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document"})
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})


def _message_signals(message: Mapping[str, Any]) -> set[str]:
    """The dialects of which this message has something only they write (empty: any could)."""
    found: set[str] = set()
    if "tool_call_id" in message:
        found.add("openai")
    if {"images", "thinking", "tool_name"} & message.keys():
        found.add("ollama")
    if message.get("role") == "developer":
        found.add("openai")
    for call in message.get("tool_calls") or ():
        arguments = call.get("function", {}).get("arguments") if isinstance(call, dict) else None
        found.add("openai" if isinstance(arguments, str) else "ollama")
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _ANTHROPIC_PARTS or (kind == "image" and "source" in part):
            found.add("anthropic")
        elif kind in _OPENAI_PARTS:
            found.add("openai")
    return found


def request_kind(body: Any) -> str:
    """``"canonical"`` for a session (the envelope, or a list of messages ``msgwire.loads``
    reads), else the dialect of a request body. Raises ``UsageError`` when it is ambiguous."""
    if isinstance(body, list):
        return "canonical"
    if not isinstance(body, dict):
        raise UsageError("the input is not a JSON object: neither a session nor a request body")
    if "version" in body or "created_at" in body:
        return "canonical"
    if "contents" in body:
        return "gemini"
    if "input" in body or "instructions" in body:
        return "openai-responses"
    if "system" in body:
        return "anthropic"
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise UsageError("no messages, contents or input in the body: pass --from (" + ", ".join(DIALECTS) + ")")
    if messages and all(isinstance(m, dict) and "type" in m and "role" not in m for m in messages):
        return "canonical"
    found: set[str] = set()
    for message in messages:
        if isinstance(message, dict):
            found |= _message_signals(message)
    if len(found) == 1:
        return found.pop()
    fits = " or ".join(sorted(found)) if found else "several dialects"
    raise UsageError(f"the body could be {fits}: pass --from to say which")
