"""Helpers of the provider tests. Every request a provider sends to the scripted server is checked,
when the test ends (``conftest.server``), against the official SDK's own param types (OpenAI Chat and Responses,
Anthropic Messages: pydantic ``TypeAdapter`` over the SDK's ``TypedDict``) and read back by
``msgwire.formats.from_request`` (every dialect, Gemini and Ollama included: no SDK of theirs
is installed)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from anthropic.types import message_create_params
from openai.types.chat import completion_create_params
from openai.types.responses import response_create_params
from pydantic import TypeAdapter

from msgwire.formats import from_request
from msgwire.harness.providers import PROVIDERS, HTTPProvider, Retry
from msgwire.testing import Received, ScriptedServer

DIALECTS = tuple(PROVIDERS)
WIRE = Path(__file__).resolve().parents[1] / "fixtures" / "wire"
LONG = {
    "openai": WIRE / "openai" / "chat-parallel-tool-calls-usage.sse",
    "openai-responses": WIRE / "openai" / "responses-reasoning-summary-text.sse",
    "anthropic": WIRE / "anthropic" / "thinking-signature-text.sse",
    "gemini": WIRE / "gemini" / "thought-parts-then-text.sse",
    "ollama": WIRE / "ollama" / "local-gemma3-text.ndjson",
}
"""One recording per dialect, of many events: long enough to cut or hold in the middle of."""
FAST_RETRY = Retry(initial_delay=0.01, max_delay=0.05)
"""Retries a test waits little for (the waits are what is configured, never asserted)."""

_SDK_TYPES: dict[tuple[str, bool], Any] = {
    ("openai", True): completion_create_params.CompletionCreateParamsStreaming,
    ("openai", False): completion_create_params.CompletionCreateParamsNonStreaming,
    ("openai-responses", True): response_create_params.ResponseCreateParamsStreaming,
    ("openai-responses", False): response_create_params.ResponseCreateParamsNonStreaming,
    ("anthropic", True): message_create_params.MessageCreateParamsStreaming,
    ("anthropic", False): message_create_params.MessageCreateParamsNonStreaming,
}
# Fields the Anthropic API still takes (models up to Claude Opus 4.6) that its SDK dropped from
# its types in 1.0 (its migration guide: pass them in `extra_body`).
_SDK_DROPPED = {"anthropic": {"temperature", "top_p"}}
# The body fields each dialect without an SDK here may hold (what the provider writes).
_KNOWN_FIELDS = {
    "gemini": {"contents", "systemInstruction", "tools", "generationConfig", "toolConfig"},
    "ollama": {"model", "messages", "tools", "stream", "options", "think"},
}


@cache
def _adapter(dialect: str, stream: bool) -> TypeAdapter[Any]:
    return TypeAdapter(_SDK_TYPES[(dialect, stream)])


def _drain(value: Any) -> Any:
    """Pydantic validates ``Iterable[...]`` fields lazily: iterate each, so every item is checked."""
    if isinstance(value, dict):
        return {k: _drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)):
        return [_drain(v) for v in value]
    return value


def _sdk_view(item: dict[str, Any]) -> dict[str, Any]:
    """A Responses input item as the SDK's types describe it (as in ``tests/formats/test_native_dialects.py``):
    msgwire keeps no item ids, which the SDK marks required where the API takes input items
    without them; placeholders fill them so the rest of the shape is checked."""
    if item.get("type") == "reasoning" and "id" not in item:
        return {**item, "id": "rs_placeholder"}
    if item.get("type") == "message" and item.get("role") == "assistant" and "id" not in item:
        content = [{"annotations": [], **part} for part in item["content"]]
        return {**item, "id": "msg_placeholder", "status": "completed", "content": content}
    return item


def check_body(dialect: str, stream: bool, body: dict[str, Any]) -> None:
    """``body`` is a request the provider's API takes: its SDK's param type where there is one
    (no field it does not know, every field of the right shape), and a conversation msgwire
    reads back."""
    if (dialect, stream) in _SDK_TYPES:
        sdk_type = _SDK_TYPES[(dialect, stream)]
        unknown = set(body) - (sdk_type.__required_keys__ | sdk_type.__optional_keys__)
        unknown -= _SDK_DROPPED.get(dialect, set())
        assert not unknown, f"{dialect} request fields the SDK does not know: {unknown}"
        if dialect == "openai-responses" and isinstance(body.get("input"), list):
            body = {**body, "input": [_sdk_view(item) for item in body["input"]]}
        _drain(_adapter(dialect, stream).validate_python(body))
    else:
        unknown = set(body) - _KNOWN_FIELDS[dialect]
        assert not unknown, f"{dialect} request fields: {unknown}"
    from_request(body, dialect)


def check_received(received: Received) -> None:
    if received.dialect is not None and received.body:
        check_body(received.dialect, received.stream, received.json())


def provider(dialect: str, server: ScriptedServer, **options: Any) -> HTTPProvider:
    """A provider of ``dialect`` pointed at the scripted server."""
    options.setdefault("api_key", "test-key")
    options.setdefault("model", "test-model")
    options.setdefault("retry", FAST_RETRY)
    return PROVIDERS[dialect](base_url=server.url, **options)
