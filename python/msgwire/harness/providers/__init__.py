"""Model providers over HTTP (httpx): one class per dialect, each returning msgwire's own streams.

::

    from msgwire import Request
    from msgwire.harness.providers import OpenAI

    provider = OpenAI(model="gpt-4o")                   # OPENAI_API_KEY from the environment
    with provider.stream(Request(messages=[msgwire.user("hi")])) as stream:
        for event in stream:                            # msgwire events, as they arrive
            ...
        message = stream.message()                      # also after a failure ("error") or a close ("aborted")

Every class takes the same constructor options (``HTTPProvider``; ``ProviderOptions`` lists
them for ``create``) and has the same calls:
``stream(request) -> Stream`` (a context manager: leaving it closes the HTTP response at
once), ``astream(request)`` (``async with``, or ``await``, gives an ``AsyncStream``),
``complete(request) -> AssistantMessage`` and ``acomplete`` (non-streamed), ``validate(request)``
(the universal rules, the dialect's, and what the model is known to take: ``capabilities``),
``prepare(request)`` (the HTTP call, not sent, with what the dialect could not carry).
``Request`` is ``msgwire.Request`` (re-exported here): the body is written from it whole by
``msgwire.formats.convert_request``; replies are read by ``msgwire.stream`` /
``msgwire.from_response``.
Errors: ``msgwire.ProviderError`` (``status``, ``error_type``, ``provider_message``,
``request_id``, ``retryable``) for an HTTP error or one the provider reports in the stream,
``msgwire.TransportError`` for the network (its cause ``DeadlineExceeded`` when the call took
longer than the provider's ``deadline``), ``msgwire.ValidationError`` for a request refused
before sending. Which failures are retried, by whom: ``msgwire.ProviderError.retryable``.
"""

from __future__ import annotations

import os
from typing import Any, Literal, Protocol, Required, Unpack, overload, runtime_checkable

from msgwire.formats import RequestCache
from msgwire.stream import Stream
from msgwire.types import AssistantMessage, Dialect, Policy, Request

from ._base import (
    AsyncProviderStream,
    AsyncStreamManager,
    HTTPCall,
    HTTPProvider,
    Problems,
    ProviderOptions,
    ProviderStream,
)
from ._http import DeadlineExceeded, Retry, Tap
from .anthropic import Anthropic
from .capabilities import UNKNOWN, Capabilities, lookup
from .gemini import Gemini
from .ollama import Ollama
from .openai import OpenAI, OpenAIOptions
from .openai_responses import OpenAIResponses

__all__ = [
    "PRESETS",
    "PROVIDERS",
    "UNKNOWN",
    "Anthropic",
    "AsyncProviderStream",
    "AsyncStreamManager",
    "Capabilities",
    "DeadlineExceeded",
    "Gemini",
    "HTTPCall",
    "HTTPProvider",
    "Ollama",
    "OpenAI",
    "OpenAIName",
    "OpenAIOptions",
    "OpenAIResponses",
    "Preset",
    "Problems",
    "Provider",
    "ProviderOptions",
    "ProviderStream",
    "Request",
    "Retry",
    "Tap",
    "create",
    "lookup",
]


@runtime_checkable
class Provider(Protocol):
    """What an agent loop needs of a model: ``HTTPProvider`` and its subclasses are one; a
    test double or another transport can be too. ``cache``: the conversation's
    ``msgwire.formats.RequestCache``, which the agent passes with every call (a provider that
    writes no request body may ignore it). ``retry``: when a request is sent again, and the
    backoff an ``Agent`` waits before sending again a stream that failed midway; ``policy``:
    what a request keeps of the blocks its dialect cannot carry (``None``: ``Policy()``'s
    defaults), which ``replay`` reports its losses with."""

    @property
    def dialect(self) -> Dialect: ...

    model: str | None

    @property
    def retry(self) -> Retry: ...

    @property
    def policy(self) -> Policy | None: ...

    def capabilities(self, model: str | None = None) -> Capabilities: ...

    def validate(self, request: Request) -> None: ...

    def stream(self, request: Request, *, cache: RequestCache | None = None, **options: Any) -> Stream: ...

    def astream(self, request: Request, *, cache: RequestCache | None = None, **options: Any) -> AsyncStreamManager: ...

    def complete(self, request: Request) -> AssistantMessage: ...

    async def acomplete(self, request: Request) -> AssistantMessage: ...


PROVIDERS: dict[str, type[HTTPProvider]] = {
    "openai": OpenAI,
    "openai-responses": OpenAIResponses,
    "anthropic": Anthropic,
    "gemini": Gemini,
    "ollama": Ollama,
}
"""The provider class of each dialect name (``msgwire.formats.DIALECTS``)."""


class Preset(OpenAIOptions, total=False):
    """A server by name (``PRESETS``): its ``dialect``, its ``env`` (the environment variable
    of its key) and the constructor options it needs (``base_url``, ...)."""

    dialect: Required[Dialect]
    env: str


PRESETS: dict[str, Preset] = {
    "groq": {"dialect": "openai", "base_url": "https://api.groq.com/openai/v1", "env": "GROQ_API_KEY"},
    "mistral": {
        "dialect": "openai",
        "base_url": "https://api.mistral.ai/v1",
        "env": "MISTRAL_API_KEY",
        "tool_call_ids": "mistral",
    },
    "deepseek": {"dialect": "openai", "base_url": "https://api.deepseek.com/v1", "env": "DEEPSEEK_API_KEY"},
    "openrouter": {"dialect": "openai", "base_url": "https://openrouter.ai/api/v1", "env": "OPENROUTER_API_KEY"},
    "ollama-openai": {"dialect": "openai", "base_url": "http://127.0.0.1:11434/v1"},
    "vllm": {"dialect": "openai", "base_url": "http://127.0.0.1:8000/v1"},
    "llama.cpp": {"dialect": "openai", "base_url": "http://127.0.0.1:8080/v1"},
}
"""OpenAI-compatible servers by name: their base URL, the environment variable of their key,
and what they need besides (Mistral's 9-character tool-call ids)."""

OpenAIName = Literal["openai", "groq", "mistral", "deepseek", "openrouter", "ollama-openai", "vllm", "llama.cpp"]
"""The names ``create`` makes an ``OpenAI`` of: the dialect and the built-in presets."""


@overload
def create(name: OpenAIName, **options: Unpack[OpenAIOptions]) -> OpenAI: ...
@overload
def create(name: Literal["openai-responses"], **options: Unpack[ProviderOptions]) -> OpenAIResponses: ...
@overload
def create(name: Literal["anthropic"], **options: Unpack[ProviderOptions]) -> Anthropic: ...
@overload
def create(name: Literal["gemini"], **options: Unpack[ProviderOptions]) -> Gemini: ...
@overload
def create(name: Literal["ollama"], **options: Unpack[ProviderOptions]) -> Ollama: ...
@overload
def create(name: str, **options: Unpack[ProviderOptions]) -> HTTPProvider: ...
def create(name: str, **options: Any) -> HTTPProvider:
    """A provider by dialect name (``"openai"``, ``"openai-responses"``, ``"anthropic"``,
    ``"gemini"``, ``"ollama"``) or preset (``"groq"``, ``"mistral"``, ``"deepseek"``,
    ``"openrouter"``, ``"ollama-openai"``, ``"vllm"``, ``"llama.cpp"``, or one you added to
    ``PRESETS``); ``options`` (``ProviderOptions``, and ``OpenAIOptions`` for the names of
    ``OpenAIName``) go to the constructor and win over the preset's. Type checkers know the class
    each built-in name makes."""
    if name in PROVIDERS:
        return PROVIDERS[name](**options)
    preset = PRESETS.get(name)
    if preset is None:
        known = ", ".join([*PROVIDERS, *PRESETS])
        raise ValueError(f"unknown provider {name!r} (known: {known})")
    settings: dict[str, Any] = {k: v for k, v in preset.items() if k not in ("dialect", "env")}
    env = preset.get("env")
    if env and "api_key" not in options:
        settings["api_key"] = os.environ.get(env)
        if not settings["api_key"]:
            raise ValueError(f"{name}: no API key: pass api_key= or set {env}")
    return PROVIDERS[preset["dialect"]](**{**settings, **options})
