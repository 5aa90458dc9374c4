"""``msgwire.validate`` of a ``msgwire.Request`` (the universal rules), each provider's own rules
and capabilities, the bodies and headers each dialect sends (written whole by
``formats.convert_request``, checked against the SDK param types), and the constructor's
defaults (keys from the environment, presets, a client of the user's)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pytest

import msgwire
from msgwire import (
    Base64Source,
    ImageBlock,
    NamedTool,
    PathSource,
    Policy,
    Reasoning,
    Tool,
    UrlSource,
    ValidationError,
    tool_result,
    user,
)
from msgwire.harness.providers import (
    PROVIDERS,
    Anthropic,
    Capabilities,
    Gemini,
    HTTPProvider,
    Ollama,
    OpenAI,
    OpenAIResponses,
    Provider,
    Request,
    create,
    lookup,
)
from msgwire.testing import ScriptedServer, reply
from msgwire.types import Extra
from tests._support.providers import DIALECTS, check_body

Connect = Callable[..., HTTPProvider]
HI = [user("hi")]
TOOLS = [Tool(name="read_file"), Tool(name="grep")]


def _paths(error: ValidationError) -> list[str]:
    return [path for path, _ in error.errors]


def _problems(request: Request, model: HTTPProvider | None = None, **options: Any) -> dict[str, str]:
    if model is not None:
        return dict(model.problems(request, **options))
    try:
        request.validate()
    except ValidationError as error:
        return dict(error.errors)
    return {}


# --- the universal rules -------------------------------------------------------------------------


def test_a_valid_request_passes() -> None:
    request = Request(
        messages=HI, model="m", tools=TOOLS, tool_choice=NamedTool(name="grep"), max_tokens=10, temperature=2, top_p=1
    )
    request.validate()
    msgwire.validate(request)


def test_every_problem_is_reported_at_once_with_its_path() -> None:
    request = Request(
        messages=[user("hi"), tool_result("nobody", "orphan")],
        temperature=2.5,
        top_p=1.5,
        max_tokens=0,
        stop=[""],
        reasoning=Reasoning(budget_tokens=0),
        tools=[Tool(name="grep"), Tool(name="grep"), Tool(name="")],
        tool_choice=NamedTool(name="read_file"),
    )
    expected = {
        "$.model",
        "$.temperature",
        "$.top_p",
        "$.max_tokens",
        "$.messages[1].tool_call_id",
        "$.stop",
        "$.reasoning.budget_tokens",
        "$.tools[1].name",
        "$.tools[2].name",
        "$.tool_choice",
    }
    with pytest.raises(ValidationError) as failure:
        msgwire.validate(request)
    assert set(_paths(failure.value)) == expected
    with pytest.raises(ValidationError) as failure:
        request.validate(messages=False)  # the settings alone: no walk over the history
    assert set(_paths(failure.value)) == expected - {"$.messages[1].tool_call_id"}
    with pytest.raises(ValidationError) as failure:
        _make(Gemini).validate(request)  # the provider has no default model either
    assert "no model" in dict(failure.value.errors)["$.model"]
    assert set(_paths(failure.value)) == expected


def test_a_default_model_satisfies_the_model_rule() -> None:
    assert "$.model" in _problems(Request(messages=HI))
    assert _problems(Request(messages=HI), _make(OpenAI, model="gpt-4o")) == {}


@pytest.mark.parametrize(
    ("choice", "tools", "ok"),
    [
        ("auto", [], True),
        ("none", [], True),
        ("required", [], False),
        ("required", TOOLS, True),
        (NamedTool(name="grep"), TOOLS, True),
        (NamedTool(name="nope"), TOOLS, False),
        (NamedTool(name="grep"), [], False),
        ("grep", TOOLS, False),  # a tool by name is a NamedTool, not a mode
    ],
)
def test_tool_choice(choice: Any, tools: list[Tool], ok: bool) -> None:
    problems = _problems(Request(messages=HI, model="m", tools=tools, tool_choice=choice))
    assert ("$.tool_choice" not in problems) is ok


@pytest.mark.parametrize("budget", [True, -1, 0])
def test_a_reasoning_budget_is_a_positive_number_of_tokens(budget: Any) -> None:
    problems = _problems(Request(messages=HI, model="m", reasoning=Reasoning(budget_tokens=budget)))
    assert "$.reasoning.budget_tokens" in problems


# --- provider rules -------------------------------------------------------------------------------


def _make(cls: type[HTTPProvider], **options: Any) -> HTTPProvider:
    return cls(base_url="http://127.0.0.1:9", api_key="k", **options)


def test_anthropic_rules() -> None:
    model = _make(Anthropic, model="claude-sonnet-4-5")
    assert "Anthropic needs max_tokens" in _problems(Request(messages=HI), model).values()
    assert "$.temperature" in _problems(Request(messages=HI, max_tokens=9, temperature=1.5), model)
    thinking = _problems(
        Request(
            messages=HI,
            max_tokens=2000,
            reasoning=Reasoning(budget_tokens=500),
            temperature=0.5,
            top_p=0.5,
            tools=TOOLS,
            tool_choice=NamedTool(name="grep"),
        ),
        model,
    )
    assert set(thinking) == {"$.reasoning.budget_tokens", "$.temperature", "$.top_p", "$.tool_choice"}
    budget = Reasoning(budget_tokens=4000)
    assert "$.reasoning.budget_tokens" in _problems(Request(messages=HI, max_tokens=2000, reasoning=budget), model)
    assert _problems(Request(messages=HI, max_tokens=8000, reasoning=budget), model) == {}
    assert _problems(Request(messages=HI, max_tokens=8000, reasoning=Reasoning(effort="high")), model) == {}
    off = Request(messages=HI, max_tokens=9, reasoning=Reasoning(enabled=False), temperature=0.5, tool_choice="none")
    assert _problems(off, model) == {}  # thinking turned off: the thinking rules do not apply


def test_models_that_refuse_sampling_settings() -> None:
    assert "$.temperature" in _problems(
        Request(messages=HI, max_tokens=9, temperature=0.2), _make(Anthropic, model="claude-opus-4-7")
    )
    assert "$.top_p" in _problems(Request(messages=HI, top_p=0.9), _make(OpenAI, model="o3"))
    assert _problems(Request(messages=HI, temperature=0.2), _make(OpenAI, model="gpt-4o")) == {}


@pytest.mark.parametrize(
    ("cls", "name", "ok"),
    [
        (OpenAI, "read_file", True),
        (OpenAI, "read file", False),
        (OpenAI, "x" * 65, False),
        (OpenAIResponses, "ns.tool", False),
        (Anthropic, "x" * 100, True),
        (Anthropic, "x" * 129, False),
        (Gemini, "ns:tool.v1", True),
        (Gemini, "ns/tool", False),
        (Ollama, "any name at all", True),
    ],
)
def test_tool_names_each_dialect_refuses(cls: type[HTTPProvider], name: str, ok: bool) -> None:
    problems = _problems(Request(messages=HI, model="m", max_tokens=5, tools=[Tool(name=name)]), _make(cls))
    assert ("$.tools[0].name" not in problems) is ok


def test_an_image_for_a_model_without_vision() -> None:
    image = ImageBlock(source=UrlSource(url="https://example.test/cat.png"))
    request = Request(messages=[user([msgwire.TextBlock(text="what is this?"), image])])
    assert "$.messages[0].content[1]" in _problems(request, _make(OpenAI, model="gpt-3.5-turbo"))
    assert _problems(request, _make(OpenAI, model="gpt-4o")) == {}
    assert _problems(request, _make(OpenAI, model="my-local-model")) == {}  # unknown: let through
    as_text = Policy(images="to_text")
    assert _problems(request, _make(OpenAI, model="gpt-3.5-turbo"), policy=as_text) == {}
    assert _problems(request, _make(OpenAI, model="gpt-3.5-turbo", policy=as_text)) == {}
    by_path = Request(messages=[user(ImageBlock(source=PathSource(path="cat.png")))])  # sent as its text
    assert _problems(by_path, _make(OpenAI, model="gpt-3.5-turbo")) == {}
    tool_image = Request(
        messages=[
            user("look"),
            msgwire.assistant(msgwire.ToolCallBlock(id="c", name="shot")),
            tool_result("c", ImageBlock(source=Base64Source(media_type="image/png", data="AA=="))),
        ]
    )
    assert "$.messages[2].content[0]" in _problems(tool_image, _make(Ollama, model="gemma3:1b"))


def test_tools_and_thinking_for_models_without_them() -> None:
    assert "$.tools" in _problems(Request(messages=HI, tools=TOOLS), _make(OpenAI, model="o1-mini"))
    low = Reasoning(effort="low")
    assert "$.reasoning" in _problems(Request(messages=HI, reasoning=low), _make(OpenAI, model="gpt-4o"))
    off = Reasoning(enabled=False)
    assert _problems(Request(messages=HI, reasoning=off), _make(OpenAI, model="gpt-4o")) == {}
    budget = Reasoning(budget_tokens=1024)
    assert "$.reasoning" in _problems(Request(messages=HI, reasoning=budget), _make(OpenAI, model="o3"))  # an effort


def test_dialect_rules_on_settings() -> None:
    assert "$.stop" in _problems(Request(messages=HI, stop=["a", "b", "c", "d", "e"]), _make(OpenAI, model="m"))
    assert "$.stop" in _problems(Request(messages=HI, stop=["END"]), _make(OpenAIResponses, model="m"))
    assert "$.stop" in _problems(Request(messages=HI, stop=list("abcdef")), _make(Gemini, model="m"))
    assert "$.tool_choice" in _problems(
        Request(messages=HI, tools=TOOLS, tool_choice="required"), _make(Ollama, model="m")
    )
    assert "$.reasoning" in _problems(
        Request(messages=HI, reasoning=Reasoning(budget_tokens=2048)), _make(Ollama, model="m")
    )


def test_calls_check_the_settings_and_leave_the_history_to_validate() -> None:
    model = _make(OpenAI, model="m")
    orphan = Request(messages=[user("hi"), tool_result("nobody", "orphan")])
    model.prepare(orphan)  # the history is checked once, as it grows, not on every call
    with pytest.raises(ValidationError) as failure:
        model.validate(orphan)
    assert _paths(failure.value) == ["$.messages[1].tool_call_id"]
    with pytest.raises(ValidationError):
        model.prepare(msgspec.structs.replace(orphan, temperature=3))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_nothing_is_sent_for_an_invalid_request(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    server.add(reply("unused"))
    with pytest.raises(ValidationError):
        connect(dialect).stream(Request(messages=HI, temperature=9))
    assert server.requests == []


# --- capabilities ------------------------------------------------------------------------------


def test_capabilities_lookup() -> None:
    assert lookup("openai", "gpt-4o-2024-08-06").vision is True
    assert lookup("openai", "gpt-4").vision is False  # not gpt-4o's entry
    assert lookup("openai", "openai/gpt-4o").vision is True  # an OpenRouter name
    assert lookup("gemini", "models/gemini-2.5-pro").thinking is True
    assert lookup("ollama", "gemma3:1b").vision is False
    assert lookup("ollama", "gemma3:4b").vision is True
    assert lookup("anthropic", "claude-opus-4-8").sampling is False
    assert lookup("anthropic", "claude-opus-4-1").sampling is True
    assert lookup("openai", "some-new-model") == Capabilities()
    assert lookup("openai", None) == Capabilities()


def test_capability_overrides_win() -> None:
    mine = {"my-vlm": Capabilities(vision=True), "gpt-4o-mini-audio": Capabilities(vision=False)}
    assert lookup("openai", "my-vlm-7b", mine).vision is True
    assert lookup("openai", "gpt-4o-mini-audio", mine).vision is False
    model = _make(OpenAI, model="my-vlm-7b", capabilities=mine)
    assert model.capabilities().vision is True


# --- what each dialect sends -----------------------------------------------------------------------

FULL = Request(
    messages=HI,
    system_prompt="Be brief.",
    model="test-model",
    tools=TOOLS,
    tool_choice=NamedTool(name="grep"),
    max_tokens=100,
    temperature=0.5,
    top_p=0.95,
    stop=["END"],
)
SETTINGS: dict[str, dict[str, Any]] = {
    "openai": {
        "model": "test-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 100,
        "temperature": 0.5,
        "top_p": 0.95,
        "stop": ["END"],
        "tool_choice": {"type": "function", "function": {"name": "grep"}},
    },
    "openai-responses": {
        "model": "test-model",
        "stream": True,
        "max_output_tokens": 100,
        "temperature": 0.5,
        "top_p": 0.95,
        "tool_choice": {"type": "function", "name": "grep"},
    },
    "anthropic": {
        "model": "test-model",
        "max_tokens": 100,
        "stream": True,
        "temperature": 0.5,
        "top_p": 0.95,
        "stop_sequences": ["END"],
        "tool_choice": {"type": "tool", "name": "grep"},
    },
    "gemini": {
        "generationConfig": {"maxOutputTokens": 100, "temperature": 0.5, "topP": 0.95, "stopSequences": ["END"]},
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["grep"]}},
    },
    "ollama": {
        "model": "test-model",
        "stream": True,
        "options": {"num_predict": 100, "temperature": 0.5, "top_p": 0.95, "stop": ["END"]},
    },
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_body_is_the_wire_request(dialect: str) -> None:
    # What a dialect has no place for is left out: stop sequences (Responses), a tool choice (Ollama).
    unsupported = {"openai-responses": {"stop": None}, "ollama": {"tool_choice": None}}
    request = msgspec.structs.replace(FULL, **unsupported.get(dialect, {}))
    call = _make(PROVIDERS[dialect]).prepare(request)
    body = call.json()
    fields = msgwire.formats.to_request(HI, dialect, system_prompt="Be brief.", tools=TOOLS)
    assert body == {**fields, **SETTINGS[dialect]}
    assert call.report.entries == []
    check_body(dialect, True, body)
    if dialect != "openai-responses":
        unstreamed = _make(PROVIDERS[dialect]).prepare(request, stream=False).json()
        assert unstreamed.get("stream", False) is False
        check_body(dialect, False, unstreamed)


def test_ollama_is_told_not_to_stream() -> None:
    """Ollama streams unless the body says ``"stream": false``."""
    body = _make(Ollama, model="m").prepare(Request(messages=HI), stream=False).json()
    assert body["stream"] is False


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_report_says_what_the_dialect_cannot_carry(dialect: str) -> None:
    thinking = msgwire.assistant([msgwire.ThinkingBlock(thinking="hm", signature="s")], provider="elsewhere")
    request = Request(messages=[user("a"), thinking, user("b")], model="m", max_tokens=5, metadata={"team": "x"})
    call = _make(PROVIDERS[dialect]).prepare(request)
    assert call.report == msgwire.formats.convert_request(_make(PROVIDERS[dialect]).outgoing(request), dialect).report
    assert call.report.by_kind("thinking")  # another provider's thinking is dropped by default
    metadata = bool(call.report.by_kind("metadata"))
    assert metadata is (dialect not in ("openai", "openai-responses"))


@pytest.mark.parametrize(
    ("dialect", "reasoning", "expected"),
    [
        ("openai", Reasoning(effort="high"), {"reasoning_effort": "high"}),
        ("openai-responses", Reasoning(effort="low"), {"reasoning": {"effort": "low"}}),
        (
            "openai-responses",
            Reasoning(effort="low", summary="auto"),
            {"reasoning": {"effort": "low", "summary": "auto"}},
        ),
        ("anthropic", Reasoning(budget_tokens=2048), {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        (
            "anthropic",
            Reasoning(effort="medium"),
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"}},
        ),
        ("anthropic", Reasoning(enabled=False), {"thinking": {"type": "disabled"}}),
        (
            "gemini",
            Reasoning(budget_tokens=1024, summary="auto"),
            {
                "generationConfig": {
                    "maxOutputTokens": 4096,
                    "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
                }
            },
        ),
        (
            "gemini",
            Reasoning(effort="high"),
            {"generationConfig": {"maxOutputTokens": 4096, "thinkingConfig": {"thinkingLevel": "high"}}},
        ),
        ("ollama", Reasoning(effort="high"), {"think": "high"}),
        ("ollama", Reasoning(enabled=False), {"think": False}),
    ],
)
def test_reasoning_settings(dialect: str, reasoning: Reasoning, expected: dict[str, Any]) -> None:
    body = (
        _make(PROVIDERS[dialect], model="test-model")
        .prepare(Request(messages=HI, max_tokens=4096, reasoning=reasoning))
        .json()
    )
    assert {k: body[k] for k in expected} == expected
    check_body(dialect, True, body)


@pytest.mark.parametrize(
    ("choice", "openai", "anthropic", "gemini"),
    [
        ("auto", "auto", {"type": "auto"}, {"mode": "AUTO"}),
        ("none", "none", {"type": "none"}, {"mode": "NONE"}),
        ("required", "required", {"type": "any"}, {"mode": "ANY"}),
    ],
)
def test_tool_choice_modes(choice: str, openai: Any, anthropic: Any, gemini: Any) -> None:
    request = Request(messages=HI, model="m", tools=TOOLS, tool_choice=choice, max_tokens=5)
    assert _make(OpenAI).prepare(request).json()["tool_choice"] == openai
    assert _make(OpenAIResponses).prepare(request).json()["tool_choice"] == openai
    assert _make(Anthropic).prepare(request).json()["tool_choice"] == anthropic
    assert _make(Gemini).prepare(request).json()["toolConfig"] == {"functionCallingConfig": gemini}


def test_extra_fields_of_the_dialect_win_over_the_calls_own() -> None:
    extra = Extra(dialect="openai", fields={"seed": 7, "stream_options": {"include_usage": False}})
    request = Request(messages=HI, model="m", extra=extra)
    body = _make(OpenAI).prepare(request).json()
    assert (body["seed"], body["stream_options"]) == (7, {"include_usage": False})
    replaced = msgspec.structs.replace(request, extra=Extra(dialect="openai", fields={"messages": []}))
    with pytest.raises(ValidationError) as failure:
        _make(OpenAI).prepare(replaced)
    assert _paths(failure.value) == ["$.extra.fields.messages"]


def test_another_dialects_extra_is_reported_not_sent() -> None:
    request = Request(messages=HI, model="m", extra=Extra(dialect="anthropic", fields={"top_k": 5}))
    call = _make(OpenAI).prepare(request)  # the call's own stream_options are still sent
    assert "top_k" not in call.json()
    assert call.json()["stream_options"] == {"include_usage": True}
    (lost,) = call.report.by_kind("setting")
    assert (lost.message, lost.action) == (None, "drop")
    assert "top_k" in lost.reason
    unstreamed = _make(OpenAI, include_usage=False).prepare(request, stream=False)  # no fields of the call
    assert [e.reason for e in unstreamed.report.by_kind("setting")] == [lost.reason]


def test_openai_options() -> None:
    official = OpenAI(api_key="k", model="gpt-4o").prepare(Request(messages=HI, max_tokens=5)).json()
    assert official["max_completion_tokens"] == 5  # OpenAI's own API: reasoning models refuse max_tokens
    compat = (
        _make(OpenAI, model="m", include_usage=False, system_role="developer")
        .prepare(Request(messages=HI, system_prompt="S", max_tokens=5))
        .json()
    )
    assert compat["max_tokens"] == 5
    assert "stream_options" not in compat
    assert compat["messages"][0] == {"role": "developer", "content": "S"}


def test_prepare_shows_the_call_and_masks_the_key() -> None:
    call = Anthropic(api_key="sk-secret", base_url="http://127.0.0.1:9", headers={"x-trace": "t"}).prepare(
        Request(messages=HI, model="claude-sonnet-4-6", max_tokens=5)
    )
    assert call.url == "http://127.0.0.1:9/v1/messages"
    assert call.headers["x-api-key"] == "sk-secret"
    assert call.headers["x-trace"] == "t"
    assert "sk-secret" not in repr(call)


def test_gemini_url_carries_the_model_and_no_key() -> None:
    model = Gemini(api_key="secret", base_url="http://127.0.0.1:9")
    assert (
        model.prepare(Request(messages=HI, model="models/gemini-2.5-pro")).url
        == "http://127.0.0.1:9/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert model.prepare(Request(messages=HI, model="gemini-2.5-pro"), stream=False).url.endswith(
        "/models/gemini-2.5-pro:generateContent"
    )


# --- constructors, keys, headers ----------------------------------------------------------------------

AUTH = {
    "openai": ("OPENAI_API_KEY", {"authorization": "Bearer env-key"}),
    "openai-responses": ("OPENAI_API_KEY", {"authorization": "Bearer env-key"}),
    "anthropic": ("ANTHROPIC_API_KEY", {"x-api-key": "env-key", "anthropic-version": "2023-06-01"}),
    "gemini": ("GEMINI_API_KEY", {"x-goog-api-key": "env-key"}),
    "ollama": ("OLLAMA_API_KEY", {"authorization": "Bearer env-key"}),
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_api_key_comes_from_the_environment_and_goes_in_the_dialects_header(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    env, headers = AUTH[dialect]
    monkeypatch.setenv(env, "env-key")
    server.add(reply("ok"))
    with PROVIDERS[dialect](base_url=server.url, model="m", headers={"x-trace": "t1"}) as model:
        model.complete(Request(messages=HI, max_tokens=5))
    (received,) = server.wait(1)
    assert {k: received.headers.get(k) for k in headers} == headers
    assert received.headers["x-trace"] == "t1"
    assert received.headers["content-type"] == "application/json"
    assert "env-key" not in received.path


def test_google_api_key_wins_over_gemini_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "google")
    assert Gemini().api_key == "google"


@pytest.mark.parametrize("cls", [OpenAI, OpenAIResponses, Anthropic, Gemini])
def test_no_key_for_the_public_api_fails_early(cls: type[HTTPProvider], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "GEMINI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="no API key"):
        cls()
    cls(base_url="http://127.0.0.1:8000/v1")  # a server of one's own may need none


def test_ollama_needs_no_key_and_reads_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert Ollama().base_url == "http://10.0.0.5:11434"
    monkeypatch.delenv("OLLAMA_HOST")
    assert Ollama().base_url == "http://127.0.0.1:11434"


def test_a_client_of_ones_own_is_used_and_left_open(server: ScriptedServer) -> None:
    server.add(reply("one"), reply("two"))
    client = httpx.Client(headers={"x-mine": "yes"})
    model = OpenAI(base_url=server.url, api_key="k", model="m", client=client)
    assert model.complete(Request(messages=HI)).text == "one"
    model.close()
    assert not client.is_closed
    client.close()

    async def run() -> str:
        async with httpx.AsyncClient(headers={"x-mine": "async"}) as async_client:
            model = OpenAI(base_url=server.url, api_key="k", model="m", async_client=async_client)
            text = (await model.acomplete(Request(messages=HI))).text
            await model.aclose()
            assert not async_client.is_closed
            return text

    assert asyncio.run(run()) == "two"
    assert [r.headers["x-mine"] for r in server.wait(2)] == ["yes", "async"]


def test_create_by_dialect_or_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(create("anthropic", api_key="k"), Anthropic)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    with pytest.raises(ValueError, match="GROQ_API_KEY"):
        create("groq")
    monkeypatch.setenv("MISTRAL_API_KEY", "mk")
    mistral = create("mistral", model="mistral-large-latest")
    assert isinstance(mistral, OpenAI)
    assert (mistral.api_key, mistral.tool_call_ids, mistral.base_url) == ("mk", "mistral", "https://api.mistral.ai/v1")
    local = create("vllm", base_url="http://127.0.0.1:9/v1")
    assert local.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(ValueError, match="unknown provider"):
        create("nope")


@pytest.mark.parametrize("cls", list(PROVIDERS.values()))
def test_every_provider_is_a_provider(cls: type[HTTPProvider]) -> None:
    assert isinstance(_make(cls), Provider)
