"""What ``MsgwireModel`` reads: a msgwire ``AssistantMessage`` as pydantic-ai's ``ModelResponse``
parts and usage, its stop reason as pydantic-ai's ``finish_reason``, and msgwire's errors as
pydantic-ai's.

One function builds the parts of a whole message (``response_parts``), for a non-streamed reply
and for a stream once it ended, so that both give the same ``ModelResponse``; ``TagSplitter``
cuts text at the profile's thinking tags (``<think>``) the same way whether the text comes whole
or in deltas, a tag split across deltas included.
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

from msgwire.errors import MissingExtraError

try:
    from pydantic_ai import exceptions as pai_errors
    from pydantic_ai.messages import ModelResponsePart, TextPart, ThinkingPart, ToolCallPart
    from pydantic_ai.usage import RequestUsage
except ImportError as exc:
    raise MissingExtraError("msgwire.interop.pydantic_ai", "pydantic-ai", exc) from None

from ..errors import (
    DecodeError,
    LimitExceededError,
    MalformedStreamError,
    MsgwireError,
    ProviderError,
    StreamError,
    TransportError,
    TruncatedStreamError,
    ValidationError,
)
from ..types import AssistantMessage, Dialect, StopReason, TextBlock, ThinkingBlock, ToolCallBlock, Usage
from .pydantic_ai_request import REDACTED_ID

__all__ = [
    "FINISH_REASONS",
    "TagSplitter",
    "pydantic_ai_error",
    "request_usage",
    "response_parts",
    "tool_call_id",
]

FINISH_REASONS: dict[StopReason, str] = {
    "end_turn": "stop",
    "length": "length",
    "tool_use": "tool_call",
    "content_filter": "content_filter",
    "refusal": "content_filter",
    "error": "error",
}
"""msgwire's stop reasons as pydantic-ai's ``finish_reason`` (``pause``, ``aborted`` and
``unknown`` have none: the raw reason is in ``provider_details``)."""

_STATUS = re.compile(r"[1-5][0-9][0-9]")
_USAGE_FIELDS = frozenset(f.name for f in dataclasses.fields(RequestUsage))


def request_usage(usage: Usage | None) -> RequestUsage:
    """msgwire's usage of one reply as pydantic-ai's: the provider's totals as they were reported
    once (input includes the cache reads and writes, as pydantic-ai counts it); reasoning tokens
    in ``details`` and, where the release has it, ``output_reasoning_tokens``. A reply without
    usage is an unmeasured request where the release counts those."""
    if usage is None:
        return RequestUsage(unmeasured_requests=1) if "unmeasured_requests" in _USAGE_FIELDS else RequestUsage()
    fields: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }
    if usage.reasoning_tokens:
        fields["details"] = {"reasoning_tokens": usage.reasoning_tokens}
        if "output_reasoning_tokens" in _USAGE_FIELDS:
            fields["output_reasoning_tokens"] = usage.reasoning_tokens
    return RequestUsage(**fields)


def tool_call_id(block_id: str) -> str:
    """A call's id: the provider's, or a new unique one when it sent none (some compatible
    servers do), so that its result can name it."""
    return block_id or f"call_{uuid.uuid4().hex[:24]}"


class TagSplitter:
    """Text cut into runs of text and of thinking at a pair of tags (``("<think>", "</think>")``),
    fed in pieces: a piece that may begin a tag is held until the next one says. Each run is
    ``(thinking, segment, text)``; ``segment`` grows at each tag, so that the runs of one part
    share it."""

    __slots__ = ("end", "inside", "pending", "segment", "start")

    def __init__(self, tags: tuple[str, str]) -> None:
        self.start, self.end = tags
        self.inside = False
        self.pending = ""
        self.segment = 0

    def feed(self, text: str) -> list[tuple[bool, int, str]]:
        runs: list[tuple[bool, int, str]] = []
        buffer = self.pending + text if self.pending else text
        self.pending = ""
        while buffer:
            tag = self.end if self.inside else self.start
            at = buffer.find(tag)
            if at >= 0:
                if at:
                    runs.append((self.inside, self.segment, buffer[:at]))
                buffer = buffer[at + len(tag) :]
                self.inside = not self.inside
                self.segment += 1
                continue
            held = _tag_start_at_end(buffer, tag)
            if held < len(buffer):
                runs.append((self.inside, self.segment, buffer[: len(buffer) - held]))
            self.pending = buffer[len(buffer) - held :] if held else ""
            break
        return runs

    def flush(self) -> list[tuple[bool, int, str]]:
        text, self.pending = self.pending, ""
        return [(self.inside, self.segment, text)] if text else []


def _tag_start_at_end(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could begin ``tag``."""
    if "<" not in text[-len(tag) :]:  # the common case, cheaply: every tag here starts with "<"
        return 0
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


def split_text(text: str, tags: tuple[str, str] | None) -> list[tuple[bool, int, str]]:
    if tags is None:
        return [(False, 0, text)]
    splitter = TagSplitter(tags)
    return splitter.feed(text) + splitter.flush()


def response_parts(
    message: AssistantMessage,
    *,
    dialect: Dialect,
    system: str,
    tags: tuple[str, str] | None,
    ids: dict[int, str] | None = None,
) -> list[ModelResponsePart]:
    """The parts of a whole message. ``tags``: the thinking tags text is split at (``None``: not
    split); ``ids``: tool-call ids already made up for calls without one (by block index), so that
    a stream's final parts name the calls as its events did."""
    responses_api = dialect == "openai-responses"
    refused = message.stop_reason == "refusal"
    parts: list[ModelResponsePart] = []
    for index, block in enumerate(message.content):
        if type(block) is TextBlock and refused:
            continue  # a refusal is no answer: its text is in provider_details, as pydantic-ai's models keep it
        if type(block) is TextBlock:
            item_id = block.item_id if responses_api else None
            for thinking, _, text in split_text(block.text, tags):
                if thinking:
                    parts.append(ThinkingPart(content=text))
                else:
                    parts.append(TextPart(content=text, id=item_id) if item_id else TextPart(content=text))
        elif type(block) is ThinkingBlock:
            parts.append(thinking_part(block, system, responses_api))
        elif type(block) is ToolCallBlock:
            call_id = (ids or {}).get(index) or tool_call_id(block.id)
            args = block.arguments if block.arguments.strip() else "{}"  # no arguments: an empty object
            part = ToolCallPart(tool_name=block.name, args=args, tool_call_id=call_id)
            if responses_api and block.item_id:
                part.id = block.item_id
            parts.append(part)
        # A server tool's blocks (web search...) are not requested by MsgwireModel (it refuses
        # native tools), and pydantic-ai's own models leave out those they did not enable.
    return parts


def thinking_part(block: ThinkingBlock, system: str, responses_api: bool) -> ThinkingPart:
    if block.redacted is not None:
        return ThinkingPart(content="", id=REDACTED_ID, signature=block.redacted, provider_name=system)
    part = ThinkingPart(content=block.thinking, signature=block.signature, provider_name=system)
    if responses_api and block.item_id:
        part.id = block.item_id
    return part


def finish_reason(message: AssistantMessage) -> str | None:
    """The stop reason as pydantic-ai's; a reply whose provider gave none (some compatible
    servers) ended with its tool calls or its text."""
    if message.stop_reason in (None, "unknown"):
        return "tool_call" if any(type(b) is ToolCallBlock for b in message.content) else "stop"
    return FINISH_REASONS.get(message.stop_reason)


def provider_details(message: AssistantMessage) -> dict[str, Any] | None:
    """The raw stop reason; a refusal's text instead (pydantic-ai's models give it no part)."""
    if message.stop_reason == "refusal":
        return {"refusal": message.text}
    return {"finish_reason": message.raw_stop_reason} if message.raw_stop_reason else None


# --- errors ------------------------------------------------------------------------------------

_CATEGORIES = (
    ((401, 403), "ModelAuthenticationError"),
    ((404,), "ModelNotFoundError"),
    ((400, 422), "ModelRequestRejectedError"),
    ((402,), "ModelQuotaExceededError"),
    ((429,), "ModelRateLimitError"),
    ((529,), "ModelOverloadedError"),
    ((503,), "ModelUnavailableError"),
)


def pydantic_ai_error(error: MsgwireError, model_name: str, *, cancelled: bool = False) -> Exception:
    """The pydantic-ai exception for a msgwire one (raised ``from`` it, so the original stays the
    ``__cause__``): an HTTP error status is ``ModelHTTPError`` (of its category where the release
    has them: ``ModelRateLimitError`` for a 429...) with the status and the provider's error body;
    an error the provider reported inside a stream and a failed connection are ``ModelAPIError``
    (``ModelConnectionError`` where the release has it); a body msgwire could not read is
    ``UnexpectedModelBehavior``; a request msgwire refused before sending it is ``UserError``."""
    if isinstance(error, ProviderError) and error.status is not None:
        return _http_error(error, model_name)
    if isinstance(error, ProviderError) and (status := _status_word(error)) is not None:
        return _http_error(error, model_name, status, in_stream=True)
    if isinstance(error, ProviderError):
        return _api_error(
            "ModelAPIError",
            model_name,
            str(error),
            provider_error_code=error.code,
            provider_error_type=error.error_type,
            in_stream=True,
        )
    if isinstance(error, TransportError):
        return _api_error("ModelConnectionError", model_name, str(error))
    if isinstance(error, ValidationError):
        return pai_errors.UserError(str(error))
    if isinstance(error, (TruncatedStreamError, MalformedStreamError, LimitExceededError, DecodeError, StreamError)):
        return pai_errors.UnexpectedModelBehavior(f"{model_name}: {error}")
    return pai_errors.UnexpectedModelBehavior(f"{model_name}: {error}")


def _error_body(error: ProviderError) -> object:
    """The provider's error object as the SDKs give it (the ``error`` member of a JSON body, else
    the body), or the body's text."""
    raw = getattr(error, "body", None)
    if not raw:
        return {"type": error.error_type, "message": error.provider_message, "code": error.code}
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data["error"]
    return data


_STATUS_OF_TYPE = {
    "server_error": 500,
    "internal_server_error": 500,
    "api_error": 500,
    "overloaded_error": 529,
    "rate_limit_exceeded": 429,
    "rate_limit_error": 429,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
}
"""The status the providers answer an error of each type with before a stream opens."""


def _status_word(error: ProviderError) -> int | None:
    """The HTTP status of an error inside a stream: the one its code names (OpenRouter's
    ``"code": 400``), else the one its type is sent with as an HTTP error (pydantic-ai reports an
    in-stream error as the same error before the stream opened, ``in_stream`` set)."""
    for word in (error.code, error.error_type):
        if word is not None and _STATUS.fullmatch(word):
            return int(word)
    for word in (error.error_type, error.code):
        if word in _STATUS_OF_TYPE:
            return _STATUS_OF_TYPE[word]
    return None


def _http_error(
    error: ProviderError, model_name: str, status: int | None = None, *, in_stream: bool = False
) -> Exception:
    status = status or error.status or 0
    body = _error_body(error)
    category = _category(status, error.provider_message)
    make = getattr(pai_errors.ModelHTTPError, "for_category", None)
    if make is not None:
        try:
            made: Exception = make(
                category,
                status_code=status,
                model_name=model_name,
                body=body,
                provider_error_code=error.code,
                provider_error_type=error.error_type,
                in_stream=in_stream,
            )
            return made
        except TypeError:
            pass
    return pai_errors.ModelHTTPError(status_code=status, model_name=model_name, body=body)


def _category(status: int, message: str | None) -> Any:
    name = None
    for statuses, candidate in _CATEGORIES:
        if status in statuses:
            name = candidate
            break
    if status == 503 and message and "overloaded" in message.lower():
        name = "ModelOverloadedError"
    if name is None and 500 <= status < 600:
        name = "ModelServerError"
    return getattr(pai_errors, name, None) if name else None


def _api_error(name: str, model_name: str, message: str, **fields: Any) -> Exception:
    """``name`` (``ModelAPIError`` or a subclass) where the release has it; before pydantic-ai
    had ``ModelAPIError`` (1.0), ``UnexpectedModelBehavior``."""
    base = getattr(pai_errors, "ModelAPIError", None)
    cls = getattr(pai_errors, name, base)
    if cls is None:
        return pai_errors.UnexpectedModelBehavior(f"{model_name}: {message}")
    try:
        made: Exception = cls(model_name, message, **fields)
        return made
    except TypeError:  # a release whose errors take fewer fields
        fallback: Exception = cls(model_name, message)
        return fallback


def iter_events(result: Any) -> Iterator[Any]:
    """The events of a parts-manager call: an iterator of them, one event, or ``None`` (the
    calls return one or the other in different pydantic-ai releases)."""
    if result is None:
        return iter(())
    if hasattr(result, "event_kind"):
        return iter((result,))
    return iter(result)
