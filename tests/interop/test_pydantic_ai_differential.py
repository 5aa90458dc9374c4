"""The same response bytes through pydantic-ai's own models (``OpenAIChatModel``,
``OpenAIResponsesModel``, ``AnthropicModel``, their SDK clients on a ``ScriptedServer``) and
through ``MsgwireModel`` give equal responses: parts (tool-call arguments as JSON), usage, finish
reason and the raw one, ids, model name; streamed and not (the non-streamed body is the server's
assembly of the recording). Over every recording of a real provider stream of those dialects in
``tests/fixtures/realworld`` (``SOURCES.md``: their provenance) and ``tests/fixtures/wire``
(``PROVENANCE.md``).

Where they differ, ``ALLOWED`` says which fields and why: each reason is something the native
model gets wrong (or a reply ``MsgwireModel`` can never get), never a difference of msgwire's.
An entry that no longer differs fails the test (the list stays true)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from msgwire.testing import ScriptedServer, recorded
from tests._support.pai_models import msgwire_model, native_comparison, native_model, outcome

pytestmark = native_comparison

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DIALECT_DIRS = {
    "realworld/openai": "openai",
    "realworld/openai-responses": "openai-responses",
    "realworld/anthropic": "anthropic",
    "wire/openai": "openai",  # its responses-*.sse are Responses streams
    "wire/openai-compat": "openai",
    "wire/anthropic": "anthropic",
}


def _recordings() -> list[tuple[str, str]]:
    found = []
    for folder, dialect in DIALECT_DIRS.items():
        for path in sorted((FIXTURES / folder).glob("*.sse")):
            name = f"{folder}/{path.name}"
            found.append((name, "openai-responses" if path.name.startswith("responses-") else dialect))
    return found


RECORDINGS = _recordings()

# --- why they differ: each reason is the native model's --------------------------------------

USAGE_TWICE = "native adds Groq's x_groq.usage to the chunk's usage: the same usage counted twice"
USAGE_IN_X_GROQ = "native reads no usage when it comes only in Groq's x_groq (msgwire reads it there)"
CHOICES_MERGED = 'native merges the deltas of all n=3 choices into one text (\'{"{"{"city...\'); msgwire keeps choice 0'
REASONING_DETAILS = (
    "native OpenAIChatModel ignores OpenRouter's / Vercel's reasoning_details: the thinking's signature "
    "and the encrypted reasoning are lost, so they cannot go back in the next request"
)
NAME_TWICE = (
    "native concatenates a call sent twice whole: tool name 'llm_versionllm_version' (realworld/expectations.json)"
)
NO_FINISH = "the reply has no finish_reason: native says 'stop' for a reply that is only a tool call"
RESPONSES_STOP = (
    "native Responses model says 'stop' for a response ending in function calls; its Chat model says 'tool_call'"
)
SERVER_TOOLS = (
    "server tool blocks (web search, tool search) of a tool the request never enabled: native Anthropic drops "
    "the calls but keeps their results as NativeToolReturnPart without a call; MsgwireModel never enables a "
    "server tool (native tools are refused) and keeps neither"
)
ERROR_BODY = (
    "the body is the provider's error object: native reads it as a broken chunk (UnexpectedModelBehavior, the "
    "provider's words lost); MsgwireModel raises the provider's error (ModelAPIError / ModelHTTPError)"
)
ERROR_EVENT = (
    "an `event: error` frame carrying the status it stands for (status_code 400): native raises ModelAPIError, "
    "the status lost (the openai SDK's APIError for the frame has none); MsgwireModel raises ModelHTTPError 400 "
    "with the provider's body, as pydantic-ai does for the same error before a stream opens"
)
CONTENT_ARRAY_THINKING = "native drops the thinking chunks of Mistral's content array (it reads its text items only)"
TWO_IDS = (
    "the stream names two ids (the gateway's first chunk, then the generation's): native keeps the last; "
    "msgwire the first, as the openai SDK's accumulator does"
)
BOTH = (True, False)
ALLOWED: dict[str, tuple[tuple[bool, ...], frozenset[str], str]] = {
    "realworld/openai/groq-kimi-k2-parallel-tools-x-groq.sse": ((True,), frozenset({"usage"}), USAGE_TWICE),
    "realworld/openai/huggingface-kimi-k2-parallel-tools.sse": ((True,), frozenset({"usage"}), USAGE_TWICE),
    "realworld/openai/groq-llama3-8b-x-groq.sse": ((True,), frozenset({"usage"}), USAGE_IN_X_GROQ),
    "realworld/openai/openai-python-gpt-4o-n3-choices.sse": ((True,), frozenset({"parts"}), CHOICES_MERGED),
    "realworld/openai/openrouter-claude-reasoning-details-tool.sse": ((True,), frozenset({"parts"}), REASONING_DETAILS),
    "realworld/openai/openrouter-gemini-parallel-tools.sse": ((True,), frozenset({"parts"}), REASONING_DETAILS),
    "realworld/openai/openrouter-grok-parallel-tools.sse": ((True,), frozenset({"parts"}), REASONING_DETAILS),
    "realworld/openai/vercel-gateway-claude-reasoning-signature.sse": (
        (True,),
        frozenset({"parts"}),
        REASONING_DETAILS,
    ),
    "realworld/openai/vercel-gateway-gpt-5-reasoning.sse": ((True,), frozenset({"parts"}), REASONING_DETAILS),
    "wire/openai-compat/openrouter-reasoning-details-comments.sse": ((True,), frozenset({"parts"}), REASONING_DETAILS),
    "realworld/openai/openrouter-novita-kimi-repeated-tool-call-delta.sse": (
        (True,),
        frozenset({"parts", "finish_reason"}),
        f"{NAME_TWICE}; {NO_FINISH}",
    ),
    "realworld/openai/openrouter-novita-kimi-repeated-tool-call-delta.sse[not streamed]": (
        (False,),
        frozenset({"finish_reason"}),
        NO_FINISH,
    ),
    "realworld/openai/openrouter-novita-kimi-whole-tool-call-no-finish.sse": (
        BOTH,
        frozenset({"finish_reason"}),
        NO_FINISH,
    ),
    "realworld/openai/avian-kimi-parallel-tools.sse": ((True,), frozenset({"response_id"}), TWO_IDS),
    "realworld/openai/avian-kimi-reasoning.sse": ((True,), frozenset({"response_id"}), TWO_IDS),
    "realworld/openai/openai-401-json-error-body.sse": ((True,), frozenset({"error"}), ERROR_BODY),
    "realworld/openai-responses/openai-400-model-not-found-json-error-body.sse": (
        (True,),
        frozenset({"error"}),
        ERROR_BODY,
    ),
    "realworld/anthropic/anthropic-401-json-error-body.sse": ((True,), frozenset({"error"}), ERROR_BODY),
    "wire/openai-compat/groq-event-error.sse": ((True,), frozenset({"error"}), ERROR_EVENT),
    "wire/openai-compat/mistral-magistral-content-array-thinking.sse": (
        (True,),
        frozenset({"parts"}),
        CONTENT_ARRAY_THINKING,
    ),
    **{
        name: (BOTH, frozenset({"parts"}), SERVER_TOOLS)
        for name in (
            "realworld/openai-responses/openai-web-search-call.sse",
            "realworld/anthropic/claude-web-search-beta-110kb.sse",
            "realworld/anthropic/claude-web-search-citations-long.sse",
            "wire/anthropic/server-tool-use-then-tool-use-with-args.sse",
            "wire/anthropic/web-search-citations.sse",
        )
    },
    **{
        name: (BOTH, frozenset({"finish_reason"}), RESPONSES_STOP)
        for name in (
            "realworld/openai-responses/azure-o4-mini-function-call.sse",
            "realworld/openai-responses/openai-function-call-2026.sse",
            "realworld/openai-responses/openai-gpt-4o-parallel-function-calls.sse",
            "realworld/openai-responses/openai-gpt-5-reasoning-parallel-function-calls.sse",
            "realworld/openai-responses/openrouter-responses-function-call-done-sentinel.sse",
            "wire/openai/responses-encrypted-reasoning-text-function-call.sse",
            "wire/openai/responses-function-call-2025-03-no-seqnum.sse",
        )
    },
}


async def _outcomes(data: bytes, dialect: str) -> dict[tuple[str, bool], dict[str, Any]]:
    found: dict[tuple[str, bool], dict[str, Any]] = {}
    with ScriptedServer([recorded(data, dialect)] * 4) as server:
        for streamed in (True, False):
            found["native", streamed] = await outcome(native_model(dialect, server.url), streamed)
            found["msgwire", streamed] = await outcome(msgwire_model(dialect, server.url), streamed)
    return found


def allowed(name: str, streamed: bool) -> tuple[frozenset[str], str]:
    """The fields allowed to differ on a recording, and why (``name[not streamed]``: an entry of
    the non-streamed call alone)."""
    for key in (name, f"{name}[not streamed]"):
        modes, fields, reason = ALLOWED.get(key, ((), frozenset(), ""))
        if streamed in modes:
            return fields, reason
    return frozenset(), ""


@pytest.mark.parametrize(("name", "dialect"), RECORDINGS, ids=[n for n, _ in RECORDINGS])
def test_msgwire_model_reads_a_recording_as_the_native_model_does(name: str, dialect: str) -> None:
    found = asyncio.run(_outcomes((FIXTURES / name).read_bytes(), dialect))
    for streamed in (True, False):
        native, ours = found["native", streamed], found["msgwire", streamed]
        differing = {k for k in native.keys() | ours.keys() if native.get(k) != ours.get(k)}
        expected, reason = allowed(name, streamed)
        shown = {k: (native.get(k), ours.get(k)) for k in differing}
        assert differing == expected, f"streamed={streamed}: {shown} (allowed: {sorted(expected)}, {reason})"


def test_every_allowed_difference_names_a_recording() -> None:
    names = {n for n, _ in RECORDINGS}
    assert {k.removesuffix("[not streamed]") for k in ALLOWED} <= names
