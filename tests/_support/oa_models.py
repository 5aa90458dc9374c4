"""openai-agents' own models and ``MsgwireModel`` on the same reply bytes, for the differential
and anomaly tests: each model reads its reply from a ``ScriptedServer`` of its own (so that the
request ids match), the native one through an ``AsyncOpenAI`` client with no retries, msgwire's
through the provider of the dialect with none either. A run's result is plain JSON: the events
(streamed) or the ``ModelResponse`` (not streamed), and the error raised, if any."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents import ModelSettings, OpenAIChatCompletionsModel, OpenAIResponsesModel
from agents.models.interface import Model, ModelTracing
from openai import AsyncOpenAI

from msgwire.harness.providers import PROVIDERS, Retry
from msgwire.interop.openai_agents import MsgwireModel
from msgwire.testing import Reply, ScriptedServer

MODEL = "gpt-4o"
SETTINGS = ModelSettings()


@dataclass
class Run:
    """What one model made of one reply."""

    events: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    error: BaseException | None = None

    @property
    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    @property
    def completed(self) -> dict[str, Any] | None:
        """The response of ``response.completed`` (streamed) or the ``ModelResponse``."""
        done = [e["response"] for e in self.events if e["type"] == "response.completed"]
        return done[-1] if done else self.response


def _plain(value: Any) -> Any:
    """JSON of an event or item, less what differs from run to run (``created_at``)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "created_at"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def native(dialect: str, url: str) -> tuple[Model, Callable[[], Any]]:
    client = AsyncOpenAI(base_url=url, api_key="test-key", max_retries=0)
    model: Model = (
        OpenAIChatCompletionsModel(MODEL, client) if dialect == "openai" else OpenAIResponsesModel(MODEL, client)
    )
    return model, client.close


def ours(dialect: str, url: str, **options: Any) -> tuple[Model, Callable[[], Any]]:
    options.setdefault("retry", Retry(max_retries=0))
    provider = PROVIDERS[dialect](base_url=url, api_key="test-key", model=MODEL, **options)
    model = MsgwireModel(provider)
    return model, model.close


async def call(model: Model, *, stream: bool, input: Any = "hi", settings: ModelSettings = SETTINGS, **kw: Any) -> Run:  # noqa: A002
    run = Run()
    arguments: dict[str, Any] = {
        "system_instructions": kw.pop("system_instructions", None),
        "input": input,
        "model_settings": settings,
        "tools": kw.pop("tools", []),
        "output_schema": kw.pop("output_schema", None),
        "handoffs": kw.pop("handoffs", []),
        "tracing": ModelTracing.DISABLED,
        "previous_response_id": None,
        "conversation_id": None,
        "prompt": None,
    }
    try:
        if stream:
            async for event in model.stream_response(**arguments):
                run.events.append(_plain(event.model_dump(mode="json")))
        else:
            response = await model.get_response(**arguments)
            run.response = _plain(
                {
                    "output": [item.model_dump(mode="json") for item in response.output],
                    "usage": {
                        "requests": response.usage.requests,
                        "input_tokens": response.usage.input_tokens,
                        "output_tokens": response.usage.output_tokens,
                        "total_tokens": response.usage.total_tokens,
                        "input_tokens_details": response.usage.input_tokens_details.model_dump(mode="json"),
                        "output_tokens_details": response.usage.output_tokens_details.model_dump(mode="json"),
                    },
                    "response_id": response.response_id,
                    "request_id": response.request_id,
                }
            )
    except Exception as error:
        run.error = error
    return run


def both(dialect: str, reply: Callable[[], Reply], *, stream: bool, **kw: Any) -> tuple[Run, Run]:
    """The native model's run and msgwire's, each on a server of its own with ``reply()``."""

    async def on(make: Callable[[str, str], tuple[Model, Callable[[], Any]]]) -> Run:
        with ScriptedServer([reply()]) as server:
            model, close = make(dialect, server.url)
            try:
                return await call(model, stream=stream, **kw)
            finally:
                await close()

    return asyncio.run(on(native)), asyncio.run(on(ours))


# --- what a difference may be: the normalizations, each with its reason -----------------------------


def without_empty_deltas(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events less ``response.output_text.delta`` events whose delta is empty, numbered again.
    openai-agents yields one for a chunk whose ``content`` is ``""`` after the text began (a
    provider's last chunk, often); msgwire makes no event of an empty fragment. Neither carries
    anything: the text, the items and every other event are the same."""
    kept = [e for e in events if not (e["type"] == "response.output_text.delta" and e["delta"] == "")]
    return [{**e, "sequence_number": n} if "sequence_number" in e else e for n, e in enumerate(kept)]


_SIGNED_DATA = ("thinking_blocks", "provider", "_chat_completions_reasoning_field")


def with_response_id(value: Any, response_id: str) -> Any:
    """``value`` with every ``provider_data.response_id`` set to ``response_id``."""
    if isinstance(value, dict):
        out = {k: with_response_id(v, response_id) for k, v in value.items()}
        if isinstance(out.get("provider_data"), dict) and "response_id" in out["provider_data"]:
            out["provider_data"] = {**out["provider_data"], "response_id": response_id}
        return out
    if isinstance(value, list):
        return [with_response_id(v, response_id) for v in value]
    return value


def _strip_signed(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("type") == "reasoning":
            value = {k: v for k, v in value.items() if k != "encrypted_content"}
            data = value.get("provider_data")
            if isinstance(data, dict):
                value["provider_data"] = {k: v for k, v in data.items() if k not in _SIGNED_DATA}
        return {k: _strip_signed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_signed(v) for v in value]
    return value


def without_reasoning_details(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events less what Chat Completions' ``reasoning_details`` carried (signatures and
    encrypted reasoning: a reasoning item's ``encrypted_content`` and ``provider_data``
    ``thinking_blocks`` / ``provider``, its reasoning-field mark, and a reasoning item made of
    nothing else), numbered again."""
    empty = {
        e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.added"
        and e["item"]["type"] == "reasoning"
        and not e["item"].get("summary")
        and not any(c.get("text") for c in e["item"].get("content") or [])
        and not any(x["type"].startswith("response.reasoning") for x in events)
    }
    kept = []
    for e in events:
        is_item = e["type"] in ("response.output_item.added", "response.output_item.done")
        if empty and is_item and e["item"]["type"] == "reasoning":
            continue
        if e["type"] == "response.completed" and empty:
            output = [o for o in e["response"]["output"] if o["type"] != "reasoning"]
            e = {**e, "response": {**e["response"], "output": output}}
        kept.append(e)
    if empty:  # the calls and the message sit one place lower without that item
        kept = [{**e, "output_index": e["output_index"] - 1} if "output_index" in e else e for e in kept]
    kept = [{**e, "sequence_number": n} if "sequence_number" in e else e for n, e in enumerate(kept)]
    return _strip_signed(kept)
