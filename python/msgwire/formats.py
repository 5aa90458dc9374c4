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
carry are replayed, and ``LossReport`` (``report=True``) for what was lost doing so.

Normal form: content that is exactly one text block is written as a string, any other as a
list of parts; a request written that way reads back to the same canonical blocks, so
``to_request(from_request(body, d), d) == body`` for the bodies this module writes (ids,
signatures, arguments text and block order included). Fields msgwire has no place for
(``cache_control``, an image's ``detail``, a message's ``name``) are not read back. A part
msgwire has no block for (an Anthropic ``document``, an OpenAI ``input_audio``) is kept whole as
an unknown block ``{"type": "provider_part", "dialect", "part"}`` and written back to the same
dialect unchanged (dropped for another one, by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import msgspec

from . import _core
from .codec import dumps, loads
from .types import LossReport, Message, Policy, Session, Tool

__all__ = ["DIALECTS", "from_request", "to_request", "to_request_json"]

Dialect = Literal["openai", "anthropic", "ollama", "gemini", "openai-responses"]
DIALECTS: tuple[str, ...] = ("openai", "anthropic", "ollama", "gemini", "openai-responses")


class _Options(msgspec.Struct, kw_only=True, omit_defaults=True):
    system_prompt: str | None = None
    system_role: Literal["system", "developer"] = "system"
    tools: list[Tool] | None = None
    policy: Policy | None = None


_options_encoder = msgspec.json.Encoder()
_dict_decoder = msgspec.json.Decoder(dict[str, Any])
_report_decoder = msgspec.json.Decoder(LossReport)


def _convert(
    source: Session | Sequence[Message],
    dialect: str,
    system_prompt: str | None,
    system_role: Literal["system", "developer"],
    tools: Sequence[Tool] | None,
    policy: Policy | None,
) -> tuple[bytes, bytes]:
    if system_role not in ("system", "developer"):
        raise ValueError(f"system_role must be 'system' or 'developer', got {system_role!r}")
    data = dumps(source if isinstance(source, Session) else list(source))
    options = None
    if system_prompt is not None or system_role != "system" or tools or policy is not None:
        opts = _Options(
            system_prompt=system_prompt, system_role=system_role, tools=list(tools) if tools else None, policy=policy
        )
        options = _options_encoder.encode(opts)
    return _core.to_request_json(data, dialect, options)


def _report(raw: bytes) -> LossReport:
    return _report_decoder.decode(b'{"entries":' + raw + b"}")


@overload
def to_request_json(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = ...,
    system_role: Literal["system", "developer"] = ...,
    tools: Sequence[Tool] | None = ...,
    policy: Policy | None = ...,
    report: Literal[False] = ...,
) -> bytes: ...
@overload
def to_request_json(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = ...,
    system_role: Literal["system", "developer"] = ...,
    tools: Sequence[Tool] | None = ...,
    policy: Policy | None = ...,
    report: Literal[True],
) -> tuple[bytes, LossReport]: ...
def to_request_json(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = None,
    system_role: Literal["system", "developer"] = "system",
    tools: Sequence[Tool] | None = None,
    policy: Policy | None = None,
    report: bool = False,
) -> bytes | tuple[bytes, LossReport]:
    """The request-body fields of ``source`` for ``dialect``, as JSON bytes (written in Rust).

    ``source`` is a ``Session`` or a list of messages; ``system_prompt`` replaces the session's
    (it is the system prompt of a message list). ``system_role`` is ``"developer"`` to send the
    system prompt as an OpenAI developer message. With ``report=True``, returns
    ``(body, LossReport)``. Raises ``ValueError`` for an unknown or unsupported dialect, and
    ``DecodeError`` when the conversion is refused (``Policy(malformed_arguments="error")``).
    """
    body, losses = _convert(source, dialect, system_prompt, system_role, tools, policy)
    return (body, _report(losses)) if report else body


@overload
def to_request(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = ...,
    system_role: Literal["system", "developer"] = ...,
    tools: Sequence[Tool] | None = ...,
    policy: Policy | None = ...,
    report: Literal[False] = ...,
) -> dict[str, Any]: ...
@overload
def to_request(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = ...,
    system_role: Literal["system", "developer"] = ...,
    tools: Sequence[Tool] | None = ...,
    policy: Policy | None = ...,
    report: Literal[True],
) -> tuple[dict[str, Any], LossReport]: ...
def to_request(
    source: Session | Sequence[Message],
    dialect: str,
    *,
    system_prompt: str | None = None,
    system_role: Literal["system", "developer"] = "system",
    tools: Sequence[Tool] | None = None,
    policy: Policy | None = None,
    report: bool = False,
) -> dict[str, Any] | tuple[dict[str, Any], LossReport]:
    """``to_request_json`` decoded: a dict to pass as keyword arguments to the provider's SDK."""
    body, losses = _convert(source, dialect, system_prompt, system_role, tools, policy)
    decoded = _dict_decoder.decode(body)
    return (decoded, _report(losses)) if report else decoded


def from_request(body: dict[str, Any] | bytes | str, dialect: str) -> Session:
    """The conversation in a request body of ``dialect`` (``messages``, ``contents`` or ``input``,
    and the system prompt where the dialect keeps it apart) as a ``Session``. A request holds no
    ids or times: the session and its messages get fresh ones. Assistant messages get
    ``provider`` set to the dialect's provider, so their thinking is native when sent back to it.
    Raises ``DecodeError`` (with ``offset`` into the JSON) for a body of the wrong shape."""
    if isinstance(body, dict):
        data = msgspec.json.encode(body)
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = bytes(body)
    return loads(_core.from_request_json(data, dialect))
