"""pydantic-ai's own OpenAI and Anthropic models beside ``MsgwireModel``, on the same scripted
server, and what of their responses is compared (``shape``): the tests of
``msgwire.interop.pydantic_ai.MsgwireModel`` that compare the two use these."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pydantic_ai
import pytest
from pydantic_ai import exceptions as _errors
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import Model, ModelRequestParameters

from msgwire.harness.providers import Anthropic, HTTPProvider, OpenAI, OpenAIResponses
from msgwire.interop.pydantic_ai import MsgwireModel

API_ERROR: type[Exception] = getattr(_errors, "ModelAPIError", _errors.UnexpectedModelBehavior)
"""What a failed model call raises: ``ModelAPIError``, or before pydantic-ai had it (1.0)
``UnexpectedModelBehavior``."""
MODEL_ERRORS: tuple[type[Exception], ...] = (_errors.ModelHTTPError, API_ERROR)
"""What a call whose provider reported an error raises, in any release."""
UNSUPPORTED_SETTING_WARNING: type[Warning] | None = getattr(_errors, "UnsupportedSettingWarning", None)

_PIN = re.search(
    r"^pydantic-ai-slim==(\S+)$", (Path(__file__).parents[2] / "requirements" / "dev.txt").read_text(), re.M
)
MEASURED_ON = _PIN[1] if _PIN else ""
"""The pydantic-ai release the native models were compared on (the newest supported, pinned in
requirements/dev.txt): their faults in the differential's allow-list are that release's."""
native_comparison = pytest.mark.skipif(
    pydantic_ai.__version__ != MEASURED_ON,
    reason=f"compares with pydantic-ai {MEASURED_ON}'s own models (their faults differ by release)",
)

MODEL_NAMES = {
    "openai": "gpt-4o",
    "openai-responses": "gpt-4o",
    "anthropic": "claude-test-model",
}  # a name the SDK warns of no deprecation for
PROVIDERS: dict[str, type[HTTPProvider]] = {
    "openai": OpenAI,
    "openai-responses": OpenAIResponses,
    "anthropic": Anthropic,
}
PROMPT = [ModelRequest(parts=[UserPromptPart("Go on.")])]


def native_model(dialect: str, url: str, *, max_retries: int = 0) -> Model:
    """pydantic-ai's own model of ``dialect`` with its SDK client pointed at ``url`` (the SDK's
    retries off unless asked: the same reply is read once by each model)."""
    name = MODEL_NAMES[dialect]
    if dialect == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(api_key="test", base_url=url, max_retries=max_retries)
        return AnthropicModel(name, provider=AnthropicProvider(anthropic_client=client))
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    openai_client = AsyncOpenAI(api_key="test", base_url=f"{url}/v1", max_retries=max_retries)
    provider = OpenAIProvider(openai_client=openai_client)
    if dialect == "openai":
        return OpenAIChatModel(name, provider=provider)
    return OpenAIResponsesModel(name, provider=provider)


def msgwire_model(dialect: str, url: str, *, max_retries: int = 0) -> MsgwireModel:
    base = f"{url}/v1" if dialect != "anthropic" else url
    provider = PROVIDERS[dialect](base_url=base, api_key="test", model=MODEL_NAMES[dialect], max_retries=max_retries)
    return MsgwireModel(provider)


async def respond(model: Model, streamed: bool, params: ModelRequestParameters | None = None) -> ModelResponse:
    """One call of ``model`` on ``PROMPT``: its response, streamed (read to its end) or not."""
    params = params or ModelRequestParameters()
    if not streamed:
        return await model.request(list(PROMPT), None, params)
    async with model.request_stream(list(PROMPT), None, params) as stream:
        async for _ in stream:
            pass
        return stream.get()


async def outcome(model: Model, streamed: bool) -> dict[str, Any]:
    """The shape of the response, or of the error the call raised; the model's HTTP client is
    closed after it."""
    try:
        response = await respond(model, streamed)
    except Exception as error:
        return {"error": _error_kind(error)}
    finally:
        await close(model)
    return shape(response)


async def close(model: Model) -> None:
    if isinstance(model, MsgwireModel):
        await model.msgwire_provider.aclose()
    else:
        await model.client.close()  # type: ignore[attr-defined]  # the SDK client of a native model


def _error_kind(error: Exception) -> str:
    """What kind of failure: an HTTP status, an API error, or the model misbehaving."""
    status = getattr(error, "status_code", None)
    if status is not None:
        return f"http {status}"
    if isinstance(error, API_ERROR) and API_ERROR is not _errors.UnexpectedModelBehavior:
        return "api error"
    if isinstance(error, _errors.UnexpectedModelBehavior):
        return "unexpected model behavior"
    return f"crash {type(error).__name__}"


def arguments(text: str) -> Any:
    """A call's arguments as compared: the JSON value when the text is JSON (so that only the
    value counts, not the spacing), else the text itself."""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return ("RAW", text)


def shape(response: ModelResponse) -> dict[str, Any]:
    """What the comparison reads of a response: its parts (text, thinking with its signature,
    tool calls with their arguments and ids), usage, finish reason (and the raw one), ids."""
    parts: list[tuple[Any, ...]] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            if parts and parts[-1][0] == "text":  # one text, however many parts it came in
                parts[-1] = ("text", parts[-1][1] + part.content)
            elif part.content:
                parts.append(("text", part.content))
        elif isinstance(part, ThinkingPart):
            redacted = part.id == "redacted_thinking"
            if parts and parts[-1][0] == "thinking" and not redacted and not parts[-1][3]:
                # one reasoning item's summary parts, however many parts they came in
                _, text, signature, _ = parts[-1]
                text = "\n\n".join(t for t in (text, part.content) if t)
                parts[-1] = ("thinking", text, part.signature or signature, False)
            else:
                parts.append(("thinking", part.content, part.signature or None, redacted))
        elif isinstance(part, ToolCallPart):
            parts.append(("tool_call", part.tool_name, arguments(part.args_as_json_str()), part.tool_call_id))
        else:
            parts.append((type(part).__name__,))
    u = response.usage
    reasoning = getattr(u, "output_reasoning_tokens", 0) or (u.details or {}).get("reasoning_tokens", 0)
    details = getattr(response, "provider_details", None) or {}
    return {
        "parts": parts,
        "usage": (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, reasoning),
        "finish_reason": getattr(response, "finish_reason", None),
        "raw_finish_reason": details.get("finish_reason"),
        "response_id": getattr(response, "provider_response_id", None),
        "model_name": response.model_name,
    }
