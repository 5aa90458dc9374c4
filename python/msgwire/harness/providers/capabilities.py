"""What a model can take, per dialect and model name, where it is known: images (``vision``),
tool declarations (``tools``), reasoning (``thinking``) and sampling settings (``sampling``:
``temperature`` / ``top_p``, which reasoning models refuse: OpenAI's o-series and GPT-5,
Anthropic's models after Claude Opus 4.6).

A provider's ``validate()`` refuses what a model is known not to take (an image for a
text-only model, tools for a model without function calling); image recognition uses
``vision`` to choose between sending an image and reading its text first. ``None`` means
unknown, and an unknown capability is never refused: the table is a guard against sure
mistakes, not a gate. Give a provider ``capabilities={"my-model": Capabilities(vision=False)}``
for the models it serves that the table does not know (a vLLM or llama.cpp server, say).

Matching: the model name is lowercased and read after its last ``/`` (``models/gemini-2.5-pro``,
``openai/gpt-4o`` on OpenRouter); the first entry whose name is a prefix of it wins, so the
longer names come first.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

__all__ = ["UNKNOWN", "Capabilities", "lookup"]


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a model takes: ``True``, ``False``, or ``None`` (unknown)."""

    vision: bool | None = None
    tools: bool | None = None
    thinking: bool | None = None
    sampling: bool | None = None


UNKNOWN = Capabilities()


def _caps(vision: bool | None, tools: bool | None, thinking: bool | None, sampling: bool | None = None) -> Capabilities:
    return Capabilities(vision=vision, tools=tools, thinking=thinking, sampling=sampling)


_OPENAI: tuple[tuple[str, Capabilities], ...] = (
    ("gpt-5", _caps(True, True, True, False)),
    ("gpt-4.1", _caps(True, True, False, True)),
    ("gpt-4o", _caps(True, True, False, True)),
    ("gpt-4-turbo", _caps(True, True, False, True)),
    ("gpt-4", _caps(False, True, False, True)),
    ("gpt-3.5", _caps(False, True, False, True)),
    ("gpt-oss", _caps(False, True, True)),
    ("o1-mini", _caps(False, False, True, False)),
    ("o1-preview", _caps(False, False, True, False)),
    ("o1", _caps(True, True, True, False)),
    ("o3-mini", _caps(False, True, True, False)),
    ("o3", _caps(True, True, True, False)),
    ("o4-mini", _caps(True, True, True, False)),
    ("deepseek-reasoner", _caps(False, None, True)),
    ("deepseek-chat", _caps(False, True, False, True)),
)

# Sampling settings are refused from Claude Opus 4.7 on (and by every model of the 5 generation).
_ANTHROPIC: tuple[tuple[str, Capabilities], ...] = (
    ("claude-3-7-sonnet", _caps(True, True, True, True)),
    ("claude-3-5-haiku", _caps(None, True, False, True)),
    ("claude-3", _caps(True, True, False, True)),
    ("claude-2", _caps(False, False, False, True)),
    ("claude-instant", _caps(False, False, False, True)),
    ("claude-opus-4-7", _caps(True, True, True, False)),
    ("claude-opus-4-8", _caps(True, True, True, False)),
    ("claude-sonnet-4", _caps(True, True, True, True)),
    ("claude-opus-4", _caps(True, True, True, True)),
    ("claude-haiku-4", _caps(True, True, True, True)),
    ("claude-sonnet-5", _caps(True, True, True, False)),
    ("claude-opus-5", _caps(True, True, True, False)),
    ("claude-haiku-5", _caps(True, True, True, False)),
    ("claude", _caps(True, True, None)),
)

_GEMINI: tuple[tuple[str, Capabilities], ...] = (
    ("gemini-3", _caps(True, True, True)),
    ("gemini-2.5", _caps(True, True, True)),
    ("gemini-2.0-flash-thinking", _caps(True, None, True)),
    ("gemini-2.0", _caps(True, True, False)),
    ("gemini-1.5", _caps(True, True, False)),
    ("gemini", _caps(True, True, None)),
    ("gemma-3-1b", _caps(False, False, False)),
    ("gemma-3", _caps(True, False, False)),
)

# Ollama names are `family[:tag]`; the tag matters where a size changes what the model takes.
_OLLAMA: tuple[tuple[str, Capabilities], ...] = (
    ("gemma3:1b", _caps(False, False, False)),
    ("gemma3:270m", _caps(False, False, False)),
    ("gemma3", _caps(True, False, False)),
    ("llama3.2-vision", _caps(True, False, False)),
    ("llama3.1", _caps(False, True, False)),
    ("llama3.2", _caps(False, True, False)),
    ("llama3.3", _caps(False, True, False)),
    ("llava", _caps(True, False, False)),
    ("bakllava", _caps(True, False, False)),
    ("moondream", _caps(True, False, False)),
    ("qwen3-vl", _caps(True, True, True)),
    ("qwen3", _caps(False, True, True)),
    ("qwen2.5vl", _caps(True, None, False)),
    ("qwen2.5", _caps(False, True, False)),
    ("deepseek-r1", _caps(False, None, True)),
    ("gpt-oss", _caps(False, True, True)),
    ("magistral", _caps(False, True, True)),
)

_TABLES: dict[str, tuple[tuple[str, Capabilities], ...]] = {
    "openai": _OPENAI,
    "openai-responses": _OPENAI,
    "anthropic": _ANTHROPIC,
    "gemini": _GEMINI,
    "ollama": _OLLAMA,
}


def _match(table: Mapping[str, Capabilities] | tuple[tuple[str, Capabilities], ...], name: str) -> Capabilities | None:
    entries = table.items() if isinstance(table, Mapping) else table
    for prefix, caps in entries:
        if name.startswith(prefix.lower()):
            return caps
    return None


def lookup(dialect: str, model: str | None, overrides: Mapping[str, Capabilities] | None = None) -> Capabilities:
    """What ``model`` takes when served through ``dialect``: ``overrides`` first (exact names,
    then prefixes, as the table), then the table, else ``UNKNOWN``."""
    if not model:
        return UNKNOWN
    name = model.lower().rsplit("/", 1)[-1]
    if overrides:
        exact = overrides.get(model)
        if exact is not None:
            return exact
        found = _match(dict(sorted(overrides.items(), key=lambda kv: -len(kv[0]))), name)
        if found is not None:
            return found
    return _match(_TABLES.get(dialect, ()), name) or UNKNOWN
