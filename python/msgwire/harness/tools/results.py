"""What a call comes back as: one ``ToolResultMessage`` per call, whatever happened.

Two kinds of failure, as the seed system defines them:

- **domain**: the tool ran and reports that the operation failed (it raised ``ToolFailure``, or
  returned ``ToolOutput(..., is_error=True)``). The model is told, in the tool's own words:
  ``content`` holds them, ``error.message`` too, ``error.recoverable`` is the tool's say;
- **infrastructure**: the tool could not do its job at all: it raised another exception, timed
  out, does not exist, or got arguments that do not fit its schema. The model sees a short
  message in ``content`` (what happened, never a traceback); ``error`` keeps the whole story
  (``message`` in full, ``traceback``), which msgwire's request writers never send. What the
  model is told of an exception is the runner's ``failure_text`` (``FailureText``): its type
  and the first line of its message by default, its type only, or a function's words, since
  an exception's message may hold paths, SQL or credentials.

``error.recoverable`` says whether trying again can succeed: true for an exception (the model may
retry or take another way; an exception carrying a ``recoverable`` attribute decides for itself),
a timeout, an unknown tool (another one may do) and bad arguments (the model can fix them);
false for an interrupted call (the user or the program stopped it: retrying is their call).

Statuses: ``success``; ``error`` (``is_error``); ``denied`` (the approval said no, or nobody
approved; the reason goes to the model); ``interrupted`` (cancelled before it finished, or never
started). Every non-success result has ``is_error`` set, as the request writers send it.
"""

from __future__ import annotations

import datetime as dt
import traceback
from collections.abc import Callable
from typing import Any, Literal, get_args

import msgspec

from msgwire import ContentBlock, TextBlock, ToolCallBlock, ToolError, ToolResultMessage, UnknownBlock
from msgwire.errors import MsgwireError

__all__ = [
    "FailureKind",
    "FailureText",
    "ToolFailure",
    "ToolOutput",
    "denied",
    "domain_failure",
    "infrastructure_failure",
    "interrupted",
    "success",
]

FailureKind = Literal["exception", "timeout", "unknown_tool", "invalid_arguments"]
FailureText = Literal["message", "type"] | Callable[[str, BaseException], str]
"""What the model is told when a tool raises (``ToolRunner(failure_text=...)``; ``ToolFailure``
text always goes as written): ``"message"`` (the default), ``Tool 'x' failed: KeyError: 'k'``,
the exception's type and the first line of its message; ``"type"``, ``Tool 'x' failed:
KeyError``, its type only; or a function ``(tool name, exception) -> text`` (a text it cannot
give, or an exception it raises, falls back to the type only). ``error.message`` keeps the
exception in full either way, for the trail, never sent."""

_SHORT = 300  # the longest exception text the model is shown


class ToolFailure(MsgwireError):
    """Raised by a tool that ran but whose operation failed (a file that does not exist, a
    payment refused): a domain failure, sent to the model in these words."""

    def __init__(self, message: str, *, recoverable: bool = True, structured: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.recoverable = recoverable
        self.structured = structured


class ToolOutput(msgspec.Struct, frozen=True, kw_only=True):
    """A tool's result spelled out: ``content`` for the model (a string or content blocks),
    ``structured`` (any JSON) kept whole in ``structured_content``, and ``is_error`` for a
    domain failure (with ``recoverable``)."""

    content: str | list[ContentBlock] = ""
    structured: Any = None
    is_error: bool = False
    recoverable: bool = True


_json_encoder = msgspec.json.Encoder()
_SCALARS = frozenset((int, float, bool))
_BLOCK_TYPES = (*get_args(ContentBlock), UnknownBlock)


def _blocks(content: str | list[ContentBlock]) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []  # no empty text block (providers refuse them)
    return list(content)


def _result(call: ToolCallBlock, **fields: Any) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call.id, tool_name=call.name, **fields)


def success(
    call: ToolCallBlock, value: Any, started_at: dt.datetime, duration_ms: float
) -> tuple[ToolResultMessage, str | None]:
    """The result of a tool that returned ``value``, and the failure kind (``"domain"`` for a
    returned error result, else ``None``). A string is the text; content blocks are sent as
    they are; any other value is JSON: kept whole in ``structured_content``, its JSON text sent.
    Raises ``TypeError`` for a value JSON cannot carry (an infrastructure failure). The result
    is stamped now (when the call ended): a second clock read costs less than adding the
    duration to ``started_at``."""
    structured: Any = None
    kind = type(value)
    if kind is str:
        content = _blocks(value)
    elif kind in _SCALARS:  # JSON as they are (their own builtins)
        content = [TextBlock(text=_json_encoder.encode(value).decode())]
        structured = value
    elif value is None:
        content = []
    elif _is_block(value):
        content = [value]
    elif isinstance(value, ToolOutput):
        content = _blocks(value.content)
        structured = msgspec.to_builtins(value.structured) if value.structured is not None else None
        if value.is_error:
            error = ToolError(message=_text_of(value.content), recoverable=value.recoverable)
            result = _result(
                call,
                content=content,
                is_error=True,
                status="error",
                error=error,
                structured_content=structured,
                started_at=started_at,
                duration_ms=duration_ms,
                timestamp=dt.datetime.now(dt.UTC),
            )
            return result, "domain"
    elif isinstance(value, str):  # a subclass of str
        content = _blocks(value)
    elif isinstance(value, list) and value and all(_is_block(v) for v in value):
        content = list(value)
    else:
        content = [TextBlock(text=_json_encoder.encode(value).decode())]  # TypeError for what JSON cannot carry
        structured = msgspec.to_builtins(value)
    # built here, not through _result: keywords passed on with ** cost a third of a result
    result = ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=content,
        structured_content=structured,
        started_at=started_at,
        duration_ms=duration_ms,
        timestamp=dt.datetime.now(dt.UTC),
    )
    return result, None


def domain_failure(
    call: ToolCallBlock, failure: ToolFailure, started_at: dt.datetime, duration_ms: float
) -> ToolResultMessage:
    try:
        structured = msgspec.to_builtins(failure.structured) if failure.structured is not None else None
    except (TypeError, ValueError):  # the failure's words are what matter; never fail on the extra
        structured = None
    return _result(
        call,
        content=[TextBlock(text=failure.message)],
        is_error=True,
        status="error",
        error=ToolError(message=failure.message, recoverable=failure.recoverable),
        structured_content=structured,
        started_at=started_at,
        duration_ms=duration_ms,
    )


def infrastructure_failure(
    call: ToolCallBlock,
    kind: FailureKind,
    short: str,
    *,
    detail: str | None = None,
    exc: BaseException | None = None,
    recoverable: bool = True,
    started_at: dt.datetime | None = None,
    duration_ms: float | None = None,
) -> ToolResultMessage:
    """``short`` goes to the model; ``detail`` (default ``short``) and the traceback of ``exc``
    stay in ``error``."""
    trace = "".join(traceback.format_exception(exc)) if exc is not None else None
    return _result(
        call,
        content=[TextBlock(text=short)],
        is_error=True,
        status="error",
        error=ToolError(message=detail or short, traceback=trace, recoverable=recoverable),
        started_at=started_at,
        duration_ms=duration_ms,
    )


def _str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails still gets a result
        return ""


def exception_detail(exc: BaseException) -> str:
    """The exception in full, for ``error.message`` (kept, not sent)."""
    return f"{type(exc).__name__}: {_str(exc)}"


def exception_summary(tool: str, exc: BaseException) -> str:
    """The short text the model sees for an exception: the tool, the exception type and the
    first line of its message, cut at a few hundred characters."""
    text = _str(exc).strip()
    text = text.splitlines()[0] if text else ""
    if len(text) > _SHORT:
        text = text[: _SHORT - 1] + "…"
    return f"Tool {tool!r} failed: {type(exc).__name__}" + (f": {text}" if text else "")


def check_failure_text(failure_text: object) -> FailureText:
    """``failure_text`` if it is one (a ``TypeError`` that says what it takes otherwise)."""
    if failure_text in ("message", "type") or callable(failure_text):
        return failure_text
    raise TypeError(
        f"failure_text is 'message', 'type' or a function (tool name, exception) -> text, got {failure_text!r}"
    )


def exception_text(tool: str, exc: BaseException, failure_text: FailureText) -> tuple[str, str | None]:
    """What the model is told of ``exc`` (``FailureText``), and why the runner's function gave
    no text when it did not (for ``error.message``)."""
    if failure_text == "message":
        return exception_summary(tool, exc), None
    only_type = f"Tool {tool!r} failed: {type(exc).__name__}"
    if failure_text == "type":
        return only_type, None
    try:
        text = failure_text(tool, exc)
    except Exception as failed:
        return only_type, f"failure_text raised {exception_detail(failed)}"
    if not isinstance(text, str) or not text.strip():
        return only_type, f"failure_text gave {text!r}, not a text"
    return text, None


def denied(call: ToolCallBlock, reason: str | None) -> ToolResultMessage:
    text = f"The tool call was denied: {reason}" if reason else "The tool call was denied."
    return _result(call, content=[TextBlock(text=text)], is_error=True, status="denied")


def interrupted(
    call: ToolCallBlock, started_at: dt.datetime | None = None, duration_ms: float | None = None
) -> ToolResultMessage:
    started = started_at is not None
    text = (
        "The tool call was interrupted before it finished."
        if started
        else "The tool call was interrupted before it started."
    )
    return _result(
        call,
        content=[TextBlock(text=text)],
        is_error=True,
        status="interrupted",
        error=ToolError(message=text, recoverable=False),
        started_at=started_at,
        duration_ms=duration_ms,
    )


def _is_block(value: Any) -> bool:
    # decided once per type: isinstance against the tuple of block types cost, for a value that
    # is none of them (a tool's int or dict), a sixth of a result
    kind = type(value)
    known = _block_types.get(kind)
    if known is None:
        known = _block_types[kind] = issubclass(kind, _BLOCK_TYPES)
    return known


_block_types: dict[type, bool] = {}


def _text_of(content: str | list[ContentBlock]) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextBlock))
