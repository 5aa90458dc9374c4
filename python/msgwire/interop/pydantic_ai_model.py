"""``MsgwireModel``: a pydantic-ai ``Model`` whose calls go through a msgwire provider, so that
an app on pydantic-ai gets msgwire's stream decoding (Rust), retries and error reading by
changing one line::

    from pydantic_ai import Agent
    from msgwire.harness.providers import OpenAI
    from msgwire.interop.pydantic_ai import MsgwireModel

    agent = Agent(MsgwireModel(OpenAI(model="gpt-4o")))

The provider is any of ``msgwire.harness.providers`` (``OpenAI`` and its presets for
compatible servers, ``OpenAIResponses``, ``Anthropic``, ``Gemini``, ``Ollama``). What is sent:
``pydantic_ai_request``; what is read: ``pydantic_ai_response``; what maps and what is refused:
``docs/interop.md``.

One retry layer: the provider's (``max_retries`` / ``retry`` of its constructor, the official
SDKs' status rules). pydantic-ai adds none of its own to a model's call (its SDK-backed models
leave retrying to the SDK client, as this one leaves it to the provider), and its
``max_retries`` setting is declared unsupported here: set it on the provider.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from msgwire.errors import MissingExtraError

try:
    from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponseStreamEvent
    from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse, check_allow_model_requests
    from pydantic_ai.settings import ModelSettings
except ImportError as exc:
    raise MissingExtraError("msgwire.interop.pydantic_ai", "pydantic-ai", exc) from None

from ..errors import MsgwireError
from ..harness.providers import PRESETS, HTTPProvider
from ..harness.providers._base import AsyncProviderStream
from ..types import (
    AssistantMessage,
    Dialect,
    MessageEnd,
    MessageStart,
    Request,
    TextDelta,
    ThinkingDelta,
    ToolCallBegin,
    ToolCallDelta,
    UsageEvent,
)
from .pydantic_ai_request import EXTRA_SETTINGS, REDACTED_ID, build_request
from .pydantic_ai_response import (
    TagSplitter,
    finish_reason,
    iter_events,
    provider_details,
    pydantic_ai_error,
    request_usage,
    response_parts,
    tool_call_id,
)

__all__ = ["MsgwireModel", "MsgwireStreamedResponse"]

_SYSTEMS: dict[Dialect, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google-gla",
    "ollama": "ollama",
}
_TAGGED_DIALECTS = frozenset({"openai", "ollama"})
"""Dialects whose text may hold ``<think>`` tags (OpenAI-compatible and local servers), as
pydantic-ai's own models split them: its Chat Completions model does, its Anthropic and Responses
models do not."""
_ALWAYS_UNSUPPORTED: frozenset[Any] = frozenset({"timeout", "max_retries", "extra_headers", "service_tier"})


class MsgwireModel(Model):
    """A pydantic-ai model on a msgwire provider.

    ``provider``: a ``msgwire.harness.providers`` instance; ``model_name``: the model (else the
    provider's default model); ``provider_name``: the name pydantic-ai records as the responses'
    ``provider_name`` (by default the preset the base URL is, else ``openai``, ``anthropic``,
    ``google-gla`` or ``ollama``); ``settings`` and ``profile`` as every pydantic-ai model takes
    them (the profile by default: pydantic-ai's for the model's family)."""

    unsupported_settings = _ALWAYS_UNSUPPORTED
    """Settings no call of this model sends (they are the provider's: its ``timeout``,
    ``max_retries``, ``headers``); ``_unsupported_settings`` adds those the dialect has no field
    for (``top_k`` for OpenAI, ``seed`` for Anthropic...). pydantic-ai warns when one is set."""

    def __init__(
        self,
        provider: HTTPProvider,
        *,
        model_name: str | None = None,
        provider_name: str | None = None,
        settings: ModelSettings | None = None,
        profile: Any = None,
    ) -> None:
        if not isinstance(provider, HTTPProvider):
            raise TypeError(
                f"provider is a msgwire provider (msgwire.harness.providers: OpenAI, Anthropic, ...), "
                f"got {type(provider).__name__}"
            )
        name = model_name or provider.model
        if not name:
            raise ValueError("model_name: name the model, or give the provider a default model (model=...)")
        self._msgwire = provider
        self._model_name = name
        self._dialect: Dialect = provider.dialect
        self._system = provider_name or _system_of(provider)
        super().__init__(settings=settings, profile=profile if profile is not None else _family_profile(self))

    # --- identity ------------------------------------------------------------------------------

    @property
    def msgwire_provider(self) -> HTTPProvider:
        """The msgwire provider every call goes through."""
        return self._msgwire

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        return self._system

    @property
    def base_url(self) -> str:
        return self._msgwire.base_url

    def __repr__(self) -> str:
        return f"MsgwireModel({self._msgwire!r}, model_name={self._model_name!r})"

    def _unsupported_settings(self) -> frozenset[str]:
        return _ALWAYS_UNSUPPORTED | {name for name, ds in EXTRA_SETTINGS.items() if self._dialect not in ds}

    # --- calls ---------------------------------------------------------------------------------

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        check_allow_model_requests()
        request, _ = self._prepared(messages, model_settings, model_request_parameters)
        try:
            message = await self._msgwire.acomplete(request)
        except MsgwireError as error:
            raise pydantic_ai_error(error, self._model_name) from error
        return ModelResponse(
            parts=response_parts(message, dialect=self._dialect, system=self._system, tags=self._tags()),
            usage=request_usage(message.usage),
            model_name=message.model or self._model_name,
            timestamp=message.timestamp,
            provider_name=self._system,
            **_optional_response_fields(
                provider_url=self.base_url,
                provider_response_id=message.response_id,
                finish_reason=finish_reason(message),
                provider_details=provider_details(message),
            ),
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        check_allow_model_requests()
        request, params = self._prepared(messages, model_settings, model_request_parameters)
        try:
            stream = await self._msgwire.astream(request)
        except MsgwireError as error:
            raise pydantic_ai_error(error, self._model_name) from error
        try:
            yield MsgwireStreamedResponse(params, model=self, stream=stream)
        finally:
            await stream.aclose()  # closes the HTTP response at once if the reply was not read to its end

    def _prepared(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> tuple[Request, ModelRequestParameters]:
        prepare = getattr(self, "prepare_request", None)  # before pydantic-ai 1.x had it, the agent prepared them
        if prepare is not None:
            settings, params = prepare(settings, params)
        request = build_request(
            messages,
            settings,
            params,
            dialect=self._dialect,
            system=self._system,
            instructions=_instructions(self, messages, params),
            json_object_output=bool(_profile_value(self.profile, "supports_json_object_output", False)),
        )
        return msgspec.structs.replace(request, model=self._model_name), params

    def _tags(self) -> tuple[str, str] | None:
        if self._dialect not in _TAGGED_DIALECTS:
            return None
        tags = _profile_value(self.profile, "thinking_tags", ("<think>", "</think>"))
        return (str(tags[0]), str(tags[1])) if tags else None


class MsgwireStreamedResponse(StreamedResponse):
    """A msgwire provider stream as pydantic-ai's ``StreamedResponse``: each msgwire event becomes
    the parts manager's call (text, thinking, tool-call deltas as they arrive); once the stream
    ended, ``get()`` gives the parts of the whole message as a non-streamed call would."""

    def __init__(self, params: ModelRequestParameters, *, model: MsgwireModel, stream: AsyncProviderStream) -> None:
        super().__init__(model_request_parameters=params)
        self._stream = stream
        self._model_name = model.model_name
        self._system = model.system
        self._url = model.base_url
        self._dialect = model._dialect
        self._tag_pair = model._tags()
        self._splitters: dict[int, TagSplitter] = {}
        self._last_text = -1
        self._ids: dict[int, str] = {}
        self._final: AssistantMessage | None = None
        self._timestamp = _dt.datetime.now(_dt.UTC)
        self.provider_response_id: str | None = None
        self.finish_reason: Any = None
        self.provider_details: dict[str, Any] | None = None

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        try:
            async for event in self._stream:
                kind = type(event)
                index = getattr(event, "index", -1)
                if self._last_text >= 0 and index != self._last_text:
                    for e in self._flush_text(self._last_text):
                        yield e
                if kind is TextDelta:
                    for e in self._text(event.index, event.text):  # type: ignore[union-attr]
                        yield e
                elif kind is ToolCallDelta:
                    result = manager.handle_tool_call_delta(vendor_part_id=("tool", index), args=event.fragment)  # type: ignore[union-attr]
                    for e in iter_events(result):
                        yield e
                elif kind is ToolCallBegin:
                    call_id = self._ids.setdefault(index, tool_call_id(event.id))  # type: ignore[union-attr]
                    result = manager.handle_tool_call_delta(
                        vendor_part_id=("tool", index),
                        tool_name=event.name,  # type: ignore[union-attr]
                        tool_call_id=call_id,
                    )
                    for e in iter_events(result):
                        yield e
                elif kind is ThinkingDelta:
                    for e in self._thinking(event):  # type: ignore[arg-type]
                        yield e
                elif kind is UsageEvent:
                    self._usage = request_usage(event.usage)  # type: ignore[union-attr]  # a total, not added
                elif kind is MessageStart:
                    self.provider_response_id = event.response_id or self.provider_response_id  # type: ignore[union-attr]
                    self._model_name = event.model or self._model_name  # type: ignore[union-attr]
                elif kind is MessageEnd:
                    self.finish_reason = finish_reason(self._stream.message())
            if self._last_text >= 0:
                for e in self._flush_text(self._last_text):
                    yield e
        except MsgwireError as error:
            if getattr(self, "_cancelled", False):
                return  # the stream was cancelled: its end is not an error
            raise pydantic_ai_error(error, self._model_name) from error
        self._finished_with(self._stream.message())

    def _text(self, index: int, text: str) -> Any:
        manager = self._parts_manager
        self._last_text = index
        if self._tag_pair is None:
            return iter_events(manager.handle_text_delta(vendor_part_id=("text", index, 0), content=text))
        splitter = self._splitters.get(index)
        if splitter is None:
            splitter = self._splitters[index] = TagSplitter(self._tag_pair)
        return self._runs(index, splitter.feed(text))

    def _flush_text(self, index: int) -> Any:
        self._last_text = -1
        splitter = self._splitters.get(index)
        return self._runs(index, splitter.flush()) if splitter is not None else ()

    def _runs(self, index: int, runs: list[tuple[bool, int, str]]) -> Any:
        manager = self._parts_manager
        for thinking, segment, text in runs:
            if thinking:
                yield from iter_events(
                    manager.handle_thinking_delta(vendor_part_id=("tag", index, segment), content=text)
                )
            else:
                yield from iter_events(manager.handle_text_delta(vendor_part_id=("text", index, segment), content=text))

    def _thinking(self, event: ThinkingDelta) -> Any:
        manager = self._parts_manager
        vendor = ("thinking", event.index)
        if event.redacted is not None:
            return iter_events(
                manager.handle_thinking_delta(
                    vendor_part_id=vendor, id=REDACTED_ID, signature=event.redacted, provider_name=self._system
                )
            )
        if not event.thinking and event.signature is None:
            return ()
        return iter_events(
            manager.handle_thinking_delta(
                vendor_part_id=vendor,
                content=event.thinking or None,
                signature=event.signature,
                provider_name=self._system,
            )
        )

    def _finished_with(self, message: AssistantMessage) -> None:
        self._final = message
        self._usage = request_usage(message.usage)
        self.provider_response_id = message.response_id or self.provider_response_id
        self._model_name = message.model or self._model_name
        self.finish_reason = finish_reason(message)
        self.provider_details = provider_details(message)

    def get(self) -> ModelResponse:
        response = super().get()
        if self._final is None:
            return response
        parts = response_parts(
            self._final, dialect=self._dialect, system=self._system, tags=self._tag_pair, ids=self._ids
        )
        response.parts = parts
        return response

    async def close_stream(self) -> None:
        await self._stream.aclose()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return self._system

    @property
    def provider_url(self) -> str:
        return self._url

    @property
    def timestamp(self) -> _dt.datetime:
        return self._timestamp


# --- across pydantic-ai releases ----------------------------------------------------------------

_RESPONSE_FIELDS = frozenset(getattr(ModelResponse, "__dataclass_fields__", {}))


def _optional_response_fields(**fields: Any) -> dict[str, Any]:
    """The ``ModelResponse`` fields this pydantic-ai release has (``provider_url``,
    ``finish_reason``, ``provider_details`` came after 1.0)."""
    return {k: v for k, v in fields.items() if k in _RESPONSE_FIELDS}


def _profile_value(profile: Any, key: str, default: Any) -> Any:
    """A profile setting: profiles are dicts from pydantic-ai 2, dataclasses before."""
    if isinstance(profile, Mapping):
        return profile.get(key, default)
    return getattr(profile, key, default)


def _instructions(model: Model, messages: Sequence[ModelMessage], params: ModelRequestParameters) -> str | None:
    """The instructions of this request, prompted output's included, joined as pydantic-ai's own
    models send them."""
    parts_of = getattr(model, "_get_instruction_parts", None)
    if parts_of is not None:
        parts = parts_of(messages, params) or []
        return "\n\n".join(p.content for p in parts).strip() or None
    get = model._get_instructions  # type: ignore[attr-defined]
    try:
        text: str | None = get(messages, params)
    except TypeError:
        text = get(messages)
    return text


def _system_of(provider: HTTPProvider) -> str:
    for name, preset in PRESETS.items():
        if (preset.get("base_url") or "").rstrip("/") == provider.base_url:
            return "ollama" if name == "ollama-openai" else name
    return _SYSTEMS[provider.dialect]


_FAMILIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("deepseek",), "deepseek", "deepseek_model_profile"),
    (("qwen", "qwq"), "qwen", "qwen_model_profile"),
    (("llama", "meta-"), "meta", "meta_model_profile"),
    (("kimi", "moonshot"), "moonshotai", "moonshotai_model_profile"),
    (("grok",), "grok", "grok_model_profile"),
    (("mistral", "magistral", "codestral", "devstral"), "mistral", "mistral_model_profile"),
    (("gemini", "gemma"), "google", "google_model_profile"),
    (("claude",), "anthropic", "anthropic_model_profile"),
)


def _family_profile(model: MsgwireModel) -> Any:
    """pydantic-ai's profile for the model's family, as its own provider of that API would pick:
    OpenAI's for OpenAI's APIs, Anthropic's, Google's; on a compatible server, the family the
    model name says (DeepSeek, Qwen, Llama, Kimi, ...), else OpenAI's."""
    import importlib

    name = model.model_name.lower().rsplit("/", 1)[-1]
    dialect = model._dialect
    if dialect == "anthropic":
        module, function = "anthropic", "anthropic_model_profile"
    elif dialect == "gemini":
        module, function = "google", "google_model_profile"
    else:
        module, function = "openai", "openai_model_profile"
        if model.system != "openai":
            for prefixes, family, make in _FAMILIES:
                if name.startswith(prefixes):
                    module, function = family, make
                    break
    try:
        make_profile = getattr(importlib.import_module(f"pydantic_ai.profiles.{module}"), function)
    except (ImportError, AttributeError):  # a family this release has no profile for
        return None
    return make_profile(model.model_name)
