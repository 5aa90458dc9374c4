"""Whole requests: model, sampling, limits, tools, tool choice, structured output, reasoning,
metadata, cache breakpoints, image detail and names, read by ``formats.read_request`` and
written by ``formats.convert_request`` for every dialect.

- every body of the fixture corpus (tests/fixtures/requests and requests-full, which hold whole
  request bodies with every setting each dialect has) round-trips within its dialect, with an
  empty loss report, and is accepted by the provider SDK's own create-params type where there is
  one;
- across dialects, what the target can carry is carried in its own fields, and every setting it
  cannot carry is a request-level entry of the report (``message=None``), never dropped silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from pydantic import TypeAdapter

import msgwire
from msgwire import (
    CacheControl,
    LossReport,
    NamedTool,
    Reasoning,
    Request,
    ResponseFormat,
    TextBlock,
    Tool,
    formats,
    user,
)
from tests._support.sdk import drain

FIXTURES = Path(__file__).parents[1] / "fixtures"
DIALECTS = formats.DIALECTS

_WHOLE = {
    "openai": TypeAdapter(CompletionCreateParamsNonStreaming | CompletionCreateParamsStreaming),
    "anthropic": TypeAdapter(MessageCreateParamsNonStreaming | MessageCreateParamsStreaming),
    "openai-responses": TypeAdapter(ResponseCreateParamsNonStreaming | ResponseCreateParamsStreaming),
}


def _bodies() -> list[Any]:
    return [
        pytest.param(dialect, path, id=f"{path.parent.parent.name}/{dialect}/{path.stem}")
        for folder in ("requests", "requests-full")
        for dialect in DIALECTS
        for path in sorted((FIXTURES / folder / dialect).glob("*.json"))
    ]


def sdk_accepts(body: dict[str, Any], dialect: str) -> None:
    """The SDK's own create-params type takes the body (when it names its model, as a whole
    request does; the conversation-only fixtures are checked by test_formats*)."""
    if dialect in _WHOLE and "model" in body:
        drain(_WHOLE[dialect].validate_python(body))


def settings_losses(report: LossReport) -> list[tuple[str, str]]:
    return [(e.kind, e.action) for e in report.entries if e.message is None]


@pytest.mark.parametrize(("dialect", "path"), _bodies())
def test_every_body_round_trips_whole(dialect: str, path: Path) -> None:
    body = json.loads(path.read_bytes())
    sdk_accepts(body, dialect)
    request = formats.read_request(body, dialect)
    first = body.get("messages", [{}])[0] if dialect == "openai" else {}
    role = "developer" if isinstance(first, dict) and first.get("role") == "developer" else "system"
    again = formats.convert_request(request, dialect, system_role=role)
    assert again.dict() == body
    assert not again.report
    # the request survives msgwire's own codec too
    assert formats.to_request(msgwire.loads(msgwire.dumps(request), type=Request), dialect, system_role=role) == body


def test_the_whole_corpus_is_there() -> None:
    for dialect in DIALECTS:
        assert list((FIXTURES / "requests-full" / dialect).glob("*.json")), dialect


def _read(dialect: str, name: str = "full_settings") -> Request:
    return formats.read_request((FIXTURES / "requests-full" / dialect / f"{name}.json").read_bytes(), dialect)


def test_openai_settings_read_into_canonical_form() -> None:
    request = _read("openai")
    assert request.model == "gpt-4.1"
    assert (request.max_tokens, request.temperature, request.top_p, request.stop) == (1024, 0.2, 0.9, ["END"])
    assert request.tool_choice == NamedTool(name="get_weather")
    assert request.parallel_tool_calls is False
    assert request.response_format == ResponseFormat(
        type="json_schema",
        name="answer",
        schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        strict=True,
    )
    assert request.reasoning == Reasoning(effort="low")
    assert (request.metadata, request.user) == ({"team": "search"}, "user-42")
    assert request.tools[0].strict is True
    assert request.extra is not None
    assert request.extra.dialect == "openai"
    assert request.extra.fields == {"seed": 7, "stream_options": {"include_usage": True}}
    message = request.messages[0]
    assert message.name == "ada"  # type: ignore[union-attr]
    assert message.content[1].detail == "low"  # type: ignore[union-attr]


def test_openai_to_anthropic_carries_what_it_can_and_reports_the_rest() -> None:
    converted = formats.convert_request(_read("openai"), "anthropic")
    body = converted.dict()
    assert body["model"] == "gpt-4.1"
    assert body["max_tokens"] == 1024
    assert body["temperature"] == 0.2
    assert body["stop_sequences"] == ["END"]
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}
    assert body["output_config"] == {
        "effort": "low",
        "format": {
            "type": "json_schema",
            "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    assert body["thinking"] == {"type": "adaptive"}
    assert body["metadata"] == {"user_id": "user-42"}
    assert "seed" not in body
    lost = settings_losses(converted.report)
    assert ("metadata", "drop") in lost  # Anthropic's metadata holds only a user id
    assert lost.count(("setting", "drop")) == 2  # seed, stream_options
    assert ("tools", "strip") in lost  # strict
    assert ("top_p", "drop") not in lost
    # block-level fields Anthropic has no place for
    kinds = {(e.kind, e.action) for e in converted.report.entries if e.message is not None}
    assert kinds == {("name", "strip"), ("image_detail", "strip")}
    sdk_accepts(body, "anthropic")


def test_anthropic_to_openai_reports_cache_breakpoints_and_server_tools() -> None:
    request = _read("anthropic")
    assert request.system_cache_control == CacheControl()
    first = request.messages[0].content[0]  # type: ignore[union-attr]
    assert first == TextBlock(text="A long document...", cache_control=CacheControl(ttl="1h"))
    assert request.reasoning == Reasoning(budget_tokens=1024)
    assert request.user == "user-42"
    assert request.parallel_tool_calls is False
    assert [t.dialect for t in request.provider_tools] == ["anthropic"]
    converted = formats.convert_request(request, "openai")
    body = converted.dict()
    assert body["max_completion_tokens"] == 2048
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["parallel_tool_calls"] is False
    assert body["reasoning_effort"] == "low"  # the budget, as the closest effort
    assert body["user"] == "user-42"
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]  # the server tool is not
    lost = settings_losses(converted.report)
    assert ("reasoning", "fallback") in lost
    assert ("tools", "drop") in lost  # web_search_20250305
    assert ("cache_control", "strip") in lost  # on the tool
    assert ("setting", "drop") in lost  # service_tier
    block_kinds = [e.kind for e in converted.report.entries if e.message is not None]
    assert block_kinds == ["cache_control"]
    sdk_accepts(body, "openai")


def test_gemini_and_ollama_keep_settings_in_their_own_places() -> None:
    request = _read("gemini")
    assert request.tool_choice == NamedTool(name="get_weather")
    assert request.reasoning == Reasoning(budget_tokens=2048, summary="auto")
    assert request.response_format == ResponseFormat(type="json_schema", schema={"type": "object"})
    assert request.extra is not None
    assert request.extra.fields == {
        "generationConfig": {"topK": 40},
        "safetySettings": [request.extra.fields["safetySettings"][0]],
    }
    ollama = formats.convert_request(request, "ollama")
    body = ollama.dict()
    assert body["options"] == {"temperature": 0.3, "top_p": 0.8, "num_predict": 512, "stop": ["END"]}
    assert body["format"] == {"type": "object"}
    assert body["think"] is True
    lost = settings_losses(ollama.report)
    assert ("tool_choice", "drop") in lost
    assert ("reasoning", "fallback") in lost
    assert ("tools", "drop") in lost  # googleSearch
    back = formats.read_request(body, "ollama")
    assert (back.temperature, back.max_tokens, back.stop) == (0.3, 512, ["END"])


def test_a_request_built_in_python_writes_every_dialect() -> None:
    tool = Tool(name="lookup", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    request = Request(
        model="m",
        messages=[user("hi")],
        system_prompt="be brief",
        tools=[tool],
        tool_choice="required",
        temperature=0.5,
        max_tokens=100,
        response_format=ResponseFormat(type="json_object"),
        reasoning=Reasoning(effort="high"),
    )
    expected_choice = {
        "openai": "required",
        "openai-responses": "required",
        "anthropic": {"type": "any"},
        "gemini": None,
        "ollama": None,
    }
    for dialect in DIALECTS:
        converted = formats.convert_request(request, dialect)
        body = converted.dict()
        if expected_choice[dialect] is not None:
            assert body["tool_choice"] == expected_choice[dialect], dialect
        again = formats.read_request(body, dialect)
        assert again.temperature == 0.5, dialect
        assert again.max_tokens == 100, dialect
        assert again.tools[0].name == "lookup", dialect
        sdk_accepts(body, dialect)
    gemini = formats.to_request(request, "gemini")
    assert gemini["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert gemini["generationConfig"]["responseMimeType"] == "application/json"
    assert gemini["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "high"}
    anthropic = formats.convert_request(request, "anthropic")
    assert ("response_format", "drop") in settings_losses(anthropic.report)  # json without a schema


def test_the_legacy_max_tokens_spelling_is_kept_for_compatible_servers() -> None:
    request = _read("openai", "legacy_max_tokens")
    assert request.max_tokens == 256
    assert formats.to_request(request, "openai")["max_tokens"] == 256
    fresh = Request(model="m", messages=[user("x")], max_tokens=9)
    assert formats.to_request(fresh, "openai")["max_completion_tokens"] == 9
