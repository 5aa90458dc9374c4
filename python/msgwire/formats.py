"""Request formats: a conversation as the request-body fields of a provider, and back.

``to_request(session, "openai")`` gives ``{"messages": [...]}`` (plus ``"tools"``), ready for
``client.chat.completions.create(model=..., **to_request(session, "openai"))``;
``to_request(session, "anthropic")`` gives ``{"system", "messages"}`` (plus ``"tools"``), ready
for ``client.messages.create(model=..., max_tokens=..., **...)``; ``to_request(session, "ollama")``
gives ``{"messages"}`` (plus ``"tools"``) for Ollama's native ``/api/chat`` (``ollama.chat(model=...,
**...)``); ``to_request(session, "gemini")`` gives ``{"systemInstruction", "contents"}`` (plus
``"tools"``) for ``generateContent``; ``to_request(session, "openai-responses")`` gives
``{"instructions", "input"}`` (plus ``"tools"``) for ``client.responses.create(model=..., **...)``.
``from_request`` reads such a body back into a ``Session``.

Every provider rule lives in the Rust core (``rust/core/src/request/``): this module only
encodes the arguments and decodes the results. See ``Policy`` for how blocks a provider cannot
carry are replayed, and ``LossReport`` (``report=True``) for what was lost doing so. The rules of
conversion (tool calls and results paired whatever the history, placeholders, call ids, empty
content, the normal form that makes ``to_request(from_request(body, d), d) == body``, provider
parts) are written once in ``docs/formats.md``.

HTTP error responses: ``http_error(status, headers, body, dialect)`` is the ``ProviderError`` of
one (the provider's error type and message read from its error body by the dialect's response
reader, the request id from ``request_id(headers)``); the streams raise it for an error status,
and so do the harness's providers.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal, get_args

import msgspec

from . import _core
from ._corestream import decode_message
from ._source import http_error, request_id
from .codec import dumps, loads, read_request_body
from .errors import ValidationError
from .types import (
    AssistantMessage,
    CacheControl,
    Converted,
    Dialect,
    Extra,
    LossReport,
    Message,
    Policy,
    ProviderTool,
    Reasoning,
    Request,
    ResponseFormat,
    Session,
    SystemControlMessage,
    Tool,
    ToolCallIds,
    ToolChoice,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
)

__all__ = [
    "DIALECTS",
    "EMPTY_MESSAGE",
    "MISSING_RESULT",
    "RequestCache",
    "convert_request",
    "convert_response",
    "from_request",
    "from_response",
    "http_error",
    "read_request",
    "request_id",
    "to_request",
    "to_request_json",
    "to_response",
    "to_response_json",
]

DIALECTS: tuple[Dialect, ...] = _core.DIALECTS
"""The dialect names, as the Rust core lists them (the ``Dialect`` literal names the same)."""
MISSING_RESULT: str = _core.MISSING_RESULT
"""The text of the error result sent for a tool call that has none (the Rust core's default)."""
EMPTY_MESSAGE: str = _core.EMPTY_MESSAGE
"""The text sent for a user message that opens the conversation but has nothing to send, where
the provider needs a user turn first (Anthropic, Gemini; the Rust core's constant)."""


class _Settings(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a ``Request`` holds besides its conversation and tools (the core's ``Settings``)."""

    model: str | None = None
    stream: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat | None = None
    reasoning: Reasoning | None = None
    metadata: dict[str, Any] | None = None
    user: str | None = None
    system_cache_control: CacheControl | None = None
    provider_tools: list[ProviderTool] | None = None
    extra: Extra | None = None


_SETTINGS = tuple(f for f in _Settings.__struct_fields__)


class _Options(msgspec.Struct, kw_only=True, omit_defaults=True):
    system_prompt: str | None = None
    system_role: Literal["system", "developer"] = "system"
    tools: list[Tool] | None = None
    policy: Policy | None = None
    missing_result: str | None = None
    tool_call_ids: ToolCallIds | None = None
    settings: _Settings | None = None


_options_encoder = msgspec.json.Encoder()
_dict_decoder = msgspec.json.Decoder(dict[str, Any])
_report_decoder = msgspec.json.Decoder(LossReport)


def _settings(request: Request) -> _Settings | None:
    fields = {name: getattr(request, name) for name in _SETTINGS}
    fields["provider_tools"] = fields["provider_tools"] or None
    settings = _Settings(**fields)
    if settings == _Settings():
        return None
    for name, value in fields.items():
        if value is not None:
            _check_numbers(msgspec.to_builtins(value), f"$.{name}")
    return settings


_INTEGERS = range(-(2**63), 2**64)


def _check_numbers(value: object, path: str) -> None:
    """Refuse a number of a request's settings or tools that JSON cannot carry as it is
    (``docs/wire.md``, "Numbers"): msgspec would write an infinity or NaN as ``null`` (a setting
    silently gone), and the Rust core holds integers of at most 64 bits (a larger one would be
    rounded to a double)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError([(path, f"{value} is not a number JSON can carry")])
    elif isinstance(value, int) and not isinstance(value, bool):
        if value not in _INTEGERS:
            raise ValidationError([(path, f"integer out of range (more than 64 bits): {value}")])
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_numbers(item, f"{path}[{i}]")


class RequestCache:
    """What the requests of one growing conversation have in common, kept between builds:
    pass the same one to every ``to_request``/``to_request_json``/``convert_request`` of a
    conversation (``cache=``), and a build after an append writes only what is new.

    It keeps each message's canonical JSON (encoded once per message object: messages are
    frozen, so one object always has the same content) and, in the Rust core, each message
    read, keyed by a 128-bit hash of that JSON, and the last request written per dialect and
    options, turn by turn. A build re-runs the whole-history steps (results moved after their
    calls, placeholders, repeated ids rewritten) and writes again from the first turn that
    differs from the last build: an edited, approved or removed message (same id, other
    content) is never served stale. The bytes and report are those of a build without a cache.
    Memory: the messages of the conversation's latest build (older ones are let go as it moves
    on) and their JSON, about three times the conversation's canonical size. ``to_request``
    still decodes the whole body into dicts each time (1.5 ms for a 1 MB body): send
    ``to_request_json``'s bytes where you can (the harness's providers do). Builds from several
    threads take turns (a lock): a cache is one conversation's.
    """

    __slots__ = ("_core", "_encoded", "_last", "_lock")

    def __init__(self) -> None:
        self._core = _core.RequestCache()
        # id(message) -> (message, its canonical JSON, its content key); the message is kept so
        # that its id is not reused while the entry lives
        self._encoded: dict[int, tuple[Message, bytes, bytes]] = {}
        # the messages of the last build, their keys joined and their JSON
        self._last: tuple[list[Message], bytes, list[bytes]] = ([], b"", [])
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many messages the core keeps read."""
        return len(self._core)

    def _convert(
        self, messages: list[Message], dialect: Dialect, options: bytes | None, report: bool
    ) -> tuple[bytes, bytes | None]:
        with self._lock:
            return self._build(messages, dialect, options, report)

    def _build(
        self, messages: list[Message], dialect: Dialect, options: bytes | None, report: bool
    ) -> tuple[bytes, bytes | None]:
        sent, keys, data = self._last
        # an agent loop's history grows at its end: the messages sent last time are compared by
        # identity (not ==: equal values may encode differently, True and 1, 0.0 and -0.0) in
        # one C-level pass, and only the rest looked up
        n = len(sent)
        if len(messages) >= n and all(map(operator.is_, messages, sent)):
            more: list[bytes] = []
            keys, data = keys + self._keys(messages[n:], more), data + more
        else:
            data = []
            keys = self._keys(messages, data)
        self._last = (list(messages), keys, data)
        if len(self._encoded) > 2 * len(messages) + 64:  # forget the messages no longer sent
            kept = {id(m) for m in messages}
            self._encoded = {k: v for k, v in self._encoded.items() if k in kept}
        return self._core.to_request_json(keys, data, dialect, options, report)

    def _keys(self, messages: list[Message], data: list[bytes]) -> bytes:
        """The content keys of `messages`, joined; their canonical JSON appended to `data`."""
        encoded = self._encoded
        keys = []
        for message in messages:
            entry = encoded.get(id(message))
            if entry is None:
                json = dumps(message)
                entry = encoded[id(message)] = (message, json, _core.content_key(json))
            data.append(entry[1])
            keys.append(entry[2])
        return b"".join(keys)


def _convert(
    source: Session | Sequence[Message] | Request,
    dialect: Dialect,
    system_prompt: str | None,
    system_role: Literal["system", "developer"],
    tools: Sequence[Tool] | None,
    policy: Policy | None,
    missing_result: str,
    tool_call_ids: ToolCallIds | None,
    cache: RequestCache | None = None,
    report: bool = False,
) -> tuple[bytes, bytes | None]:
    if system_role not in ("system", "developer"):
        raise ValueError(f"system_role must be 'system' or 'developer', got {system_role!r}")
    if tool_call_ids is not None and tool_call_ids not in get_args(ToolCallIds):
        raise ValueError(f"tool_call_ids must be one of {get_args(ToolCallIds)} or None, got {tool_call_ids!r}")
    if not isinstance(missing_result, str):
        raise TypeError(f"missing_result must be a str, got {type(missing_result).__name__}")
    if cache is not None and not isinstance(cache, RequestCache):
        raise TypeError(f"cache must be a formats.RequestCache, got {type(cache).__name__}")
    settings = None
    messages: list[Message] | None = None
    data = b""
    if isinstance(source, Request):
        settings = _settings(source)
        system_prompt = source.system_prompt if system_prompt is None else system_prompt
        tools = source.tools if tools is None else tools
        messages = _messages(source.messages)
    elif isinstance(source, Session):
        if cache is not None:
            system_prompt = source.system_prompt if system_prompt is None else system_prompt
            messages = source.messages
        else:
            data = dumps(source)
    else:
        messages = _messages(source)
    for i, tool in enumerate(tools or ()):
        if isinstance(tool, Tool):
            _check_numbers(tool.parameters, f"$.tools[{i}].parameters")
    if cache is None and messages is not None:
        data = dumps(messages)
    text = None if missing_result == MISSING_RESULT else missing_result
    options = None
    given = (system_prompt, policy, text, tool_call_ids, settings)
    if system_role != "system" or tools or any(option is not None for option in given):
        opts = _Options(
            system_prompt=system_prompt,
            system_role=system_role,
            tools=list(tools) if tools else None,
            policy=policy,
            missing_result=text,
            tool_call_ids=tool_call_ids,
            settings=settings,
        )
        options = _options_encoder.encode(opts)
    if cache is not None and messages is not None:
        return cache._convert(messages, dialect, options, report)
    return _core.to_request_json(data, dialect, options, report)


_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage, SystemControlMessage, UnknownMessage)
_MESSAGE_TYPE_SET = frozenset(_MESSAGE_TYPES)


def _messages(source: object) -> list[Message]:
    """``source`` as a list of canonical messages, or a ``TypeError`` that says what it is."""
    if isinstance(source, _MESSAGE_TYPES):
        raise TypeError(f"to_request takes a Session or a list of messages, got one {type(source).__name__}: pass [it]")
    if isinstance(source, dict):
        raise TypeError(
            "to_request takes a Session or a list of messages, got a dict (a provider request body? "
            "read it with formats.from_request(body, dialect))"
        )
    if isinstance(source, (str, bytes, bytearray)) or not isinstance(source, Sequence | Iterable):
        raise TypeError(f"to_request takes a Session or a list of messages, got {type(source).__name__}")
    messages = list(source)
    # the usual case in one C-level pass (an agent's history is checked at every step: a loop of
    # isinstance calls over 900 messages cost more than re-building its request with the cache)
    if _MESSAGE_TYPE_SET.issuperset(map(type, messages)):
        return messages
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            hint = (
                "a provider's role/content message: read the body with formats.from_request(body, dialect), "
                "or a stored list with msgwire.loads"
                if "role" in message
                else "a dict"
            )
            raise TypeError(f"messages[{index}] is {hint}, not a msgwire message")
        if not isinstance(message, _MESSAGE_TYPES):
            raise TypeError(f"messages[{index}] is {type(message).__name__}, not a msgwire message")
    return messages


def _report(raw: bytes | None) -> LossReport:
    return _report_decoder.decode(b'{"entries":' + (raw or b"[]") + b"}")


def convert_request(
    source: Session | Sequence[Message] | Request,
    dialect: Dialect,
    *,
    system_prompt: str | None = None,
    system_role: Literal["system", "developer"] = "system",
    tools: Sequence[Tool] | None = None,
    policy: Policy | None = None,
    missing_result: str = MISSING_RESULT,
    tool_call_ids: ToolCallIds | None = None,
    cache: RequestCache | None = None,
) -> Converted:
    """The request body of ``source`` for ``dialect`` (written in Rust) with the report of every
    lossy step: ``Converted(body, report)``, ``.dict()`` the body decoded.

    ``source`` is a ``Session``, a list of messages, or a whole ``Request`` (its tools and
    settings written too: model, sampling, limits, tool choice, structured output, reasoning,
    metadata; each setting the dialect cannot carry is in the report, with ``message=None``).
    ``system_prompt`` and ``tools`` replace the source's. ``system_role`` is ``"developer"`` to
    send the system prompt as an OpenAI developer message. ``missing_result`` is the text of the
    error result sent for a tool call without one (the last assistant message's calls too: see
    docs/formats.md); ``tool_call_ids`` names the id rule of the server behind the
    dialect when it is stricter (``"mistral"`` for Mistral's OpenAI-compatible API,
    ``"anthropic"`` for a proxy to Claude). Raises ``ValueError`` for an unknown dialect,
    ``TypeError`` for a source of another kind, and ``DecodeError`` when the conversion is
    refused (``Policy(malformed_arguments="error")``). ``cache``, a ``RequestCache`` kept with the
    conversation, makes the build after an append write only what is new (the same bytes).
    """
    body, losses = _convert(
        source, dialect, system_prompt, system_role, tools, policy, missing_result, tool_call_ids, cache, report=True
    )
    return Converted(body=body, report=_report(losses))


def to_request_json(
    source: Session | Sequence[Message] | Request,
    dialect: Dialect,
    *,
    system_prompt: str | None = None,
    system_role: Literal["system", "developer"] = "system",
    tools: Sequence[Tool] | None = None,
    policy: Policy | None = None,
    missing_result: str = MISSING_RESULT,
    tool_call_ids: ToolCallIds | None = None,
    cache: RequestCache | None = None,
) -> bytes:
    """``convert_request(...).body``: the request body as JSON bytes (without the report)."""
    body, _ = _convert(source, dialect, system_prompt, system_role, tools, policy, missing_result, tool_call_ids, cache)
    return body


def to_request(
    source: Session | Sequence[Message] | Request,
    dialect: Dialect,
    *,
    system_prompt: str | None = None,
    system_role: Literal["system", "developer"] = "system",
    tools: Sequence[Tool] | None = None,
    policy: Policy | None = None,
    missing_result: str = MISSING_RESULT,
    tool_call_ids: ToolCallIds | None = None,
    cache: RequestCache | None = None,
) -> dict[str, Any]:
    """``convert_request(...).dict()``: the request body as a dict, to pass as keyword arguments
    to the provider's SDK."""
    body, _ = _convert(source, dialect, system_prompt, system_role, tools, policy, missing_result, tool_call_ids, cache)
    return _dict_decoder.decode(body)


def _body_bytes(body: object, purpose: str) -> bytes:
    if isinstance(body, dict):
        return msgspec.json.encode(body)
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, list):
        raise TypeError(f"{purpose} takes a request body (a dict), got a list: pass {{'messages': [...]}}")
    raise TypeError(f"{purpose} takes a request body (a dict, JSON bytes or str), got {type(body).__name__}")


def read_request(body: dict[str, Any] | bytes | str, dialect: Dialect) -> Request:
    """The whole request in a body of ``dialect``: the conversation as ``from_request`` reads it,
    the tools, and every setting (model, sampling, limits, tool choice, structured output,
    reasoning, metadata, Anthropic's cache breakpoints, an image's ``detail``, a message's
    ``name``). Fields msgwire has no place for are kept in ``Request.extra`` with the dialect,
    and written back by ``to_request`` to the same dialect: ``to_request(read_request(body, d),
    d) == body`` for the bodies msgwire writes."""
    request: Request = loads(read_request_body(_body_bytes(body, "read_request"), dialect), type=Request)
    return request


def from_request(body: dict[str, Any] | bytes | str, dialect: Dialect) -> Session:
    """The conversation in a request body of ``dialect`` (``messages``, ``contents`` or ``input``,
    and the system prompt where the dialect keeps it apart) as a ``Session``. A request holds no
    ids or times: the session and its messages get fresh ones. Assistant messages get
    ``provider`` set to the dialect's provider, so their thinking is native when sent back to it.
    Raises ``DecodeError`` (with ``offset`` into the JSON) for a body of the wrong shape. The rest
    of the request (tools, settings) is read by ``read_request``."""
    data = _body_bytes(body, "from_request")
    session: Session = loads(read_request_body(data, dialect))
    return session


# --- non-streamed responses -------------------------------------------------------------------
#
# ``to_response`` writes what a provider returns for a call without ``stream``, and
# ``from_response`` reads it (every rule in ``rust/core/src/response/``): OpenAI Chat's
# ``chat.completion``, Anthropic's ``message``, the Responses API's ``response``, Gemini's
# ``GenerateContentResponse``, Ollama's ``/api/chat`` reply. Reading replays the body through the
# dialect's stream decoder, so a response reads exactly as the stream of the same message would
# (``msgwire.assemble``). Times: ``created`` / ``created_at`` (OpenAI Chat and Responses, whole
# seconds) and Ollama's ``created_at`` are the message's ``timestamp`` both ways; Anthropic and
# Gemini responses carry none (``from_response`` stamps the time it read the body). What each
# dialect's body holds that a message does not keep (so ``to_response`` cannot write it back) is
# listed in that dialect's file there: ``system_fingerprint``, citations, item ids, ...


class _ResponseOptions(msgspec.Struct, kw_only=True, omit_defaults=True):
    policy: Policy | None = None


def _to_response(message: AssistantMessage, dialect: Dialect, policy: Policy | None) -> tuple[bytes, bytes]:
    if not isinstance(message, AssistantMessage):
        raise TypeError(f"a response holds an AssistantMessage, got {type(message).__name__}")
    options = None if policy is None else _options_encoder.encode(_ResponseOptions(policy=policy))
    return _core.to_response_json(dumps(message), dialect, options)


def convert_response(message: AssistantMessage, dialect: Dialect, *, policy: Policy | None = None) -> Converted:
    """The complete non-streamed response body of ``dialect`` for ``message`` (written in Rust),
    with the report of every lossy step: ``Converted(body, report)``.

    The body's id is the message's ``response_id`` (else one made from its id), the stop reason
    the provider's own ``raw_stop_reason`` when it means the message's ``stop_reason`` (else the
    dialect's value for it), and blocks the dialect cannot carry follow ``policy`` as in a
    request (thinking of another provider is dropped by default). Raises ``ValueError`` for an
    unknown dialect, ``TypeError`` for another kind of message, and ``DecodeError`` when the
    policy refuses the conversion."""
    body, losses = _to_response(message, dialect, policy)
    return Converted(body=body, report=_report(losses))


def to_response_json(message: AssistantMessage, dialect: Dialect, *, policy: Policy | None = None) -> bytes:
    """``convert_response(...).body``: what the provider's API returns for a call without
    ``stream``, as JSON bytes."""
    return _to_response(message, dialect, policy)[0]


def to_response(message: AssistantMessage, dialect: Dialect, *, policy: Policy | None = None) -> dict[str, Any]:
    """``convert_response(...).dict()``: the response as a dict, ready for the provider SDK's own
    types (``openai.types.chat.ChatCompletion.model_validate(to_response(m, "openai"))``)."""
    return _dict_decoder.decode(_to_response(message, dialect, policy)[0])


def _response_bytes(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, dict):
        return msgspec.json.encode(body)
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, (bytearray, memoryview)):
        return bytes(body)
    dump = getattr(body, "model_dump_json", None)
    if callable(dump):  # an SDK's pydantic object (a ChatCompletion, a Message, a Response)
        text: str = dump(by_alias=True, warnings=False)
        return text.encode()
    raise TypeError(f"a response body is a dict, bytes, str or an SDK model object, got {type(body).__name__}")


def from_response(body: dict[str, Any] | bytes | str | Any, dialect: Dialect) -> AssistantMessage:
    """The assistant message in a non-streamed response of ``dialect``: a dict, JSON bytes or
    text, or the SDK's own object (``from_response(client.chat.completions.create(...),
    "openai")``, read through its ``model_dump_json()``).

    The message reads as the stream of the same reply would (``msgwire.assemble``): the same stop
    reasons, usage, ``raw_stop_reason``, signatures, malformed arguments and raw provider blocks,
    ``provider``, ``model`` and ``response_id`` from the body. It gets a fresh ``id``; its
    ``timestamp`` is the body's creation time where the dialect has one, else now. An error body
    (``{"error": {...}}``, a Responses ``response`` with status ``failed``) raises
    ``ProviderError`` (``error_type``, ``provider_message``; no partial message), as a stream
    does; a body of the wrong shape raises ``DecodeError`` with ``offset`` and ``path``
    (``$.choices[0].message.tool_calls[1].function.arguments``)."""
    # the id and, when the body has no creation time, the timestamp are the core's (the same
    # generator as new_id, the same clock as now)
    return decode_message(*_core.from_response_parts(_response_bytes(body), dialect))
