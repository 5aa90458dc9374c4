"""The providers' constructor options are spelled out, never ``**options: Any`` (so type checkers
and editors know them: tests/typing/providers_*.py): ``OpenAI``'s repeat ``HTTPProvider``'s,
``ProviderOptions`` / ``OpenAIOptions`` (what ``create`` takes) are the constructors', and
``create`` passes them on over a preset's."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from msgwire.harness.providers import (
    PRESETS,
    PROVIDERS,
    HTTPProvider,
    OpenAI,
    OpenAIOptions,
    ProviderOptions,
    Retry,
    create,
)


def _options(init: Callable[..., Any]) -> dict[str, tuple[Any, Any]]:
    """Each keyword option of a constructor: (its type, its default)."""
    hints = typing.get_type_hints(init)
    found = {}
    for name, parameter in inspect.signature(init).parameters.items():
        if name == "self":
            continue
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, (init.__qualname__, name, parameter.kind)
        found[name] = (hints[name], parameter.default)
    return found


@pytest.mark.parametrize("cls", PROVIDERS.values(), ids=PROVIDERS)
def test_every_provider_spells_out_the_options_every_provider_takes(cls: type[HTTPProvider]) -> None:
    common = _options(HTTPProvider.__init__)
    own = _options(cls.__init__)
    assert {name: own[name] for name in common} == common


def test_the_typed_dicts_are_the_constructors_options() -> None:
    def typed(options: type) -> dict[str, Any]:
        return typing.get_type_hints(options)

    assert typed(ProviderOptions) == {name: hint for name, (hint, _) in _options(HTTPProvider.__init__).items()}
    assert typed(OpenAIOptions) == {name: hint for name, (hint, _) in _options(OpenAI.__init__).items()}


def test_create_passes_every_option_on_and_over_the_presets() -> None:
    retry = Retry(max_retries=5)
    groq = create("groq", api_key="k", model="llama", deadline=30.0, retry=retry, include_usage=False)
    assert isinstance(groq, OpenAI)
    assert (groq.base_url, groq.model, groq.deadline, groq.include_usage) == (
        PRESETS["groq"]["base_url"],
        "llama",
        30.0,
        False,
    )
    assert groq.transport.retry is retry
    mistral = create("mistral", api_key="k", tool_call_ids=None)
    assert mistral.tool_call_ids is None  # the caller's option wins over the preset's "mistral"
    with pytest.raises(TypeError, match="modle"):
        create("anthropic", api_key="k", modle="m")  # type: ignore[call-overload]


def test_a_misspelt_option_is_refused_at_run_time_too() -> None:
    with pytest.raises(TypeError, match="modle"):
        OpenAI(api_key="k", modle="m")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"timeout": "10"}, TypeError, r"timeout is a number of seconds .* got str"),
        ({"timeout": 0}, ValueError, r"timeout is a number of seconds above 0 .* got 0"),
        ({"deadline": "5"}, TypeError, r"deadline is a number of seconds .* got str"),
        ({"max_retries": "2"}, TypeError, r"max_retries is an int, got str"),
        ({"base_url": "localhost:47811"}, ValueError, r"base_url 'localhost:47811' .* 'http://localhost:47811'"),
        ({"base_url": "127.0.0.1:8000/v1"}, ValueError, r"base_url '127.0.0.1:8000/v1' .* 'http://127.0.0.1:8000/v1'"),
        ({"base_url": "ftp://example.com/v1"}, ValueError, r"base_url 'ftp://example.com/v1' .* http:// or https://"),
        ({"base_url": 8000}, TypeError, r"base_url is a URL \(a str\), got int"),
    ],
)
def test_a_wrong_option_is_refused_at_construction_naming_it(
    options: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        OpenAI(api_key="k", **options)


def test_a_base_url_without_scheme_from_the_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:47811/v1")
    with pytest.raises(ValueError, match=r"OPENAI_BASE_URL 'localhost:47811/v1' .* 'http://localhost:47811/v1'"):
        OpenAI(api_key="k")
    monkeypatch.setenv("OLLAMA_HOST", "localhost:11434")  # Ollama's own habit: host:port is read as http
    assert PROVIDERS["ollama"]().base_url == "http://localhost:11434"
