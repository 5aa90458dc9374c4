"""The differential test of ``MsgwireModel`` (issue 29, item 3): the same reply bytes through
openai-agents' own models (``OpenAIChatCompletionsModel``, ``OpenAIResponsesModel``, each on an
``AsyncOpenAI`` client pointed at a ``ScriptedServer``) and through ``MsgwireModel`` on msgwire's
provider of the dialect give equal results: every stream event (its type, its order, its
content), the completed response (the output items, tool-call arguments as JSON text, the usage,
the ids), or, not streamed, the ``ModelResponse`` (items, usage, response and request ids);
and the same failure, where there is one (openai-agents' ``ModelBehaviorError`` with its message
for a Responses stream that ended incomplete or failed; an HTTP or stream error as
``msgwire.ProviderError`` with the provider's words the SDK's ``APIError`` has).

The replies: the held-out real-world recordings (``tests/fixtures/realworld``, provenance in its
``SOURCES.md``: 38 Chat Completions streams of OpenAI and compatible servers, 16 Responses
streams) and the project's own (``tests/fixtures/wire``), streamed; not streamed, the same
recordings as the server assembles them into one JSON body (msgwire's writer), and the project's
non-streamed bodies as they are (``tests/fixtures/responses``).

Where they differ, ``ALLOWED`` names the recording, what differs and why: each is openai-agents'
own model getting it wrong (a reason); its check asserts that difference and that everything else
is equal, so an entry that is no longer needed fails too. One normalization applies everywhere:
openai-agents yields an ``output_text.delta`` with an empty delta for a chunk whose content is
``""`` once the text began; msgwire makes no event of nothing (``without_empty_deltas``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from agents.exceptions import ModelBehaviorError
from openai import APIError
from pydantic import ValidationError

import msgwire
from msgwire import ProviderError
from msgwire.testing import recorded
from tests._support.localserver import LocalServer
from tests._support.localserver import Reply as Raw
from tests._support.oa_models import (
    Run,
    both,
    call,
    native,
    ours,
    with_response_id,
    without_empty_deltas,
    without_reasoning_details,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REALWORLD = FIXTURES / "realworld"
CHAT = sorted(
    [
        *REALWORLD.glob("openai/*.sse"),
        *FIXTURES.glob("wire/openai/chat-*.sse"),
        *FIXTURES.glob("wire/openai-compat/*.sse"),
    ]
)
RESPONSES = sorted([*REALWORLD.glob("openai-responses/*.sse"), *FIXTURES.glob("wire/openai/responses-*.sse")])
RECORDINGS = [("openai", p) for p in CHAT] + [("openai-responses", p) for p in RESPONSES]


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# --- what may differ, and why ------------------------------------------------------------------------


def _same(native_run: Run, ours_run: Run) -> None:
    if native_run.error is not None or ours_run.error is not None:
        _same_failure(native_run.error, ours_run.error)
    assert [e["type"] for e in without_empty_deltas(ours_run.events)] == [
        e["type"] for e in without_empty_deltas(native_run.events)
    ]
    assert without_empty_deltas(ours_run.events) == without_empty_deltas(native_run.events)
    assert ours_run.response == native_run.response


def _same_failure(theirs: BaseException | None, mine: BaseException | None) -> None:
    assert theirs is not None, f"msgwire raised {mine!r} where openai-agents' own model did not"
    assert mine is not None, f"openai-agents' own model raised {theirs!r}, MsgwireModel did not"
    if isinstance(theirs, ModelBehaviorError):
        assert type(mine) is ModelBehaviorError
        assert str(mine) == str(theirs)
    else:  # the SDK's APIError; msgwire's ProviderError, with the provider's own words
        assert isinstance(theirs, APIError)
        assert isinstance(mine, ProviderError)
        assert mine.provider_message is not None
        assert theirs.message.startswith(mine.provider_message) or mine.provider_message in str(theirs)


def _native_drops_reasoning_details(native_run: Run, ours_run: Run) -> None:
    """Chat Completions' ``reasoning_details`` (OpenRouter, Vercel: Claude's signatures, Gemini's
    and OpenAI's encrypted reasoning) never reach openai-agents' items: its stream handler reads
    ``reasoning`` and ``reasoning_content`` only, so the reasoning cannot be sent back to the
    provider that needs it (Claude refuses a tool result after thinking without its signature).
    msgwire keeps it in the reasoning item (``provider_data.thinking_blocks``,
    ``encrypted_content``); all else is equal."""
    assert native_run.error is None
    assert ours_run.error is None
    assert without_reasoning_details(without_empty_deltas(ours_run.events)) == without_reasoning_details(
        without_empty_deltas(native_run.events)
    )
    completed = ours_run.completed
    assert completed is not None
    kept = [o for o in completed["output"] if o["type"] == "reasoning"]
    assert kept
    assert kept[0]["provider_data"]["thinking_blocks"]
    assert ours_run.events != native_run.events


def _native_loses_groq_usage(native_run: Run, ours_run: Run) -> None:
    """Groq's first API put the usage in ``x_groq.usage`` of the last chunk: openai-agents reads
    none and reports a run without tokens; msgwire reads it."""
    theirs, mine = native_run.completed, ours_run.completed
    assert theirs is not None
    assert mine is not None
    assert theirs["usage"] is None
    assert mine["usage"]["input_tokens"] == 18
    assert mine["usage"]["output_tokens"] == 73
    assert [{**e, "response": {**e["response"], "usage": None}} if "response" in e else e for e in ours_run.events] == [
        {**e, "response": {**e["response"], "usage": None}} if "response" in e else e
        for e in without_empty_deltas(native_run.events)
    ]


def _native_crashes_on_content_parts(native_run: Run, ours_run: Run) -> None:
    """Mistral's Magistral streams ``content`` as a list of parts (``thinking``, ``text``): the
    openai SDK keeps the list and openai-agents' handler puts it in a text delta, which pydantic
    refuses, so the run fails on the first chunk. msgwire reads the thinking and the text."""
    assert isinstance(native_run.error, ValidationError)
    assert ours_run.error is None
    message = msgwire.assemble(
        (FIXTURES / "wire/openai-compat/mistral-magistral-content-array-thinking.sse").read_bytes(), "openai"
    )
    completed = ours_run.completed
    assert completed is not None
    reasoning, answer = completed["output"]
    assert reasoning["summary"][0]["text"] == message.content[0].thinking  # type: ignore[union-attr]
    assert answer["content"][0]["text"] == message.text


def _native_swallows_an_error_body(native_run: Run, ours_run: Run) -> None:
    """A provider's error object in a 200 response (a proxy that answers so; recorded as such):
    the openai SDK finds no event in it and openai-agents ends the call as if the model had said
    nothing (an empty completed response, or no event at all), so the run fails later with "Model
    did not produce a final response" or goes on with an empty turn. msgwire raises the
    provider's error with its words."""
    assert native_run.error is None
    assert all(not (e.get("response") or {}).get("output") for e in native_run.events)
    assert isinstance(ours_run.error, ProviderError)
    assert ours_run.error.provider_message


def _msgwires_writing_has_xai_total(native_run: Run, ours_run: Run) -> None:
    """Not streamed, the server answers with msgwire's own writing of the recording, whose
    ``total_tokens`` is input + output; xAI counts its reasoning tokens apart from its output and
    in its total (628 in the stream, as MsgwireModel reports it: input + output + reasoning). A
    difference of the test's server, not of either model: all else is equal."""
    theirs, mine = native_run.response, ours_run.response
    assert theirs is not None
    assert mine is not None
    reasoning = mine["usage"]["output_tokens_details"]["reasoning_tokens"]
    assert mine["usage"]["total_tokens"] == theirs["usage"]["total_tokens"] + reasoning
    assert {**mine, "usage": None} == {**theirs, "usage": None}


def _provider_changes_the_chunk_id(native_run: Run, ours_run: Run) -> None:
    """Avian's proxy sends its first chunk with one id (``chatcmpl-...``) and the others with
    another (``gen-...``): openai-agents writes into each item's ``provider_data.response_id``
    the id of the chunk that opened it, msgwire the id its reply began with. Neither reads a
    wrong id; the provider's stream has two. All else is equal."""
    theirs, mine = without_empty_deltas(native_run.events), without_empty_deltas(ours_run.events)
    their_ids = {e["item"]["provider_data"]["response_id"] for e in theirs if "item" in e}
    my_ids = {e["item"]["provider_data"]["response_id"] for e in mine if "item" in e}
    assert len(their_ids) == len(my_ids) == 1
    assert my_ids != their_ids
    assert next(iter(my_ids)).startswith("chatcmpl-")  # the first chunk's
    assert with_response_id(mine, "x") == with_response_id(theirs, "x")


@dataclass(frozen=True)
class Allowed:
    check: Callable[[Run, Run], None]
    streamed: bool | None = None  # only streamed (True), only not (False), both (None)


ALLOWED: dict[str, Allowed] = {
    "openai/avian-kimi-parallel-tools.sse": Allowed(_provider_changes_the_chunk_id, True),
    "openai/avian-kimi-reasoning.sse": Allowed(_provider_changes_the_chunk_id, True),
    "openai/openrouter-claude-reasoning-details-tool.sse": Allowed(_native_drops_reasoning_details, True),
    "openai/vercel-gateway-claude-reasoning-signature.sse": Allowed(_native_drops_reasoning_details, True),
    "openai/openrouter-gemini-parallel-tools.sse": Allowed(_native_drops_reasoning_details, True),
    "openai/openrouter-grok-parallel-tools.sse": Allowed(_native_drops_reasoning_details, True),
    "openai/vercel-gateway-gpt-5-reasoning.sse": Allowed(_native_drops_reasoning_details, True),
    "openai-compat/openrouter-reasoning-details-comments.sse": Allowed(_native_drops_reasoning_details, True),
    "openai/groq-llama3-8b-x-groq.sse": Allowed(_native_loses_groq_usage, True),
    "openai-compat/mistral-magistral-content-array-thinking.sse": Allowed(_native_crashes_on_content_parts, True),
    "openai/openai-401-json-error-body.sse": Allowed(_native_swallows_an_error_body, True),
    "openai-responses/openai-400-model-not-found-json-error-body.sse": Allowed(_native_swallows_an_error_body, True),
    "openai/xai-grok-3-mini-long-reasoning-content.sse": Allowed(_msgwires_writing_has_xai_total, False),
    "openai/xai-grok-code-fast-reasoning-content-tools.sse": Allowed(_msgwires_writing_has_xai_total, False),
}
"""Each difference with its reason (the check's docstring) and the check that it is that one."""


# --- the recordings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream_response", "get_response"])
@pytest.mark.parametrize(("dialect", "path"), RECORDINGS, ids=[_name(p) for _, p in RECORDINGS])
def test_msgwire_model_gives_what_openai_agents_own_model_gives(dialect: str, path: Path, stream: bool) -> None:
    data = path.read_bytes()
    theirs, mine = both(dialect, lambda: recorded(data, dialect), stream=stream)
    allowed = ALLOWED.get(_name(path))
    if allowed is not None and allowed.streamed in (None, stream):
        allowed.check(theirs, mine)
        return
    _same(theirs, mine)
    assert mine.completed is not None or mine.error is not None


def test_every_allowed_difference_names_a_recording_and_says_why() -> None:
    names = {_name(p) for _, p in RECORDINGS}
    for name, allowed in ALLOWED.items():
        assert name in names, name
        assert allowed.check.__doc__
        assert len(allowed.check.__doc__) > 80


# --- the project's bodies not streamed, as they are ------------------------------------------------------

BODIES = sorted([*FIXTURES.glob("responses/openai/*.json"), *FIXTURES.glob("responses/openai-responses/*.json")])


@pytest.mark.parametrize("path", BODIES, ids=[_name(p) for p in BODIES])
def test_a_body_not_streamed_reads_as_openai_agents_own_model_reads_it(path: Path) -> None:
    dialect = path.parent.name
    route = "/chat/completions" if dialect == "openai" else "/responses"
    headers = {"content-type": "application/json", "x-request-id": "req_body_1"}

    async def on(make: Callable[..., tuple[object, Callable[[], object]]]) -> Run:
        with LocalServer() as server:
            server.route(route, Raw(body=path.read_bytes(), headers=headers))
            model, close = make(dialect, server.url(""))
            try:
                return await call(model, stream=False)  # type: ignore[arg-type]
            finally:
                await close()  # type: ignore[misc]

    theirs, mine = asyncio.run(on(native)), asyncio.run(on(ours))
    _same(theirs, mine)
    assert mine.response is not None or isinstance(mine.error, ModelBehaviorError)
    if mine.response is not None:
        assert mine.response["request_id"] == "req_body_1"
        assert msgspec.json.encode(mine.response["output"])  # JSON all through
