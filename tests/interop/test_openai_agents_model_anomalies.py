"""The anomaly corpus of issue 29 through ``MsgwireModel`` and openai-agents' own models: the
stream bugs users report, each with its correct outcome stated and asserted for MsgwireModel,
and what openai-agents' own model does with the same bytes recorded (asserted too, so the record
stays true: a case openai-agents fixes fails here, and the table below changes with it).

Each case: the correct outcome (MsgwireModel); openai-agents 0.24's own model.

- a chunk with ``"choices": null``: skipped, the reply read; the same.
- usage on the finish chunk and again on a usage chunk: counted once; the same.
- parallel calls all at ``"index": 0`` (Gemini's compatible endpoint): two calls, each with its
  id and arguments; openai-agents makes one call ``{"x":1}{"x":2}`` with the second id.
- arguments before the call's id and name: every fragment in ``function_call_arguments.delta``;
  openai-agents' deltas miss the fragments that came before the id.
- calls without ids: each a unique, non-empty ``call_id``, the same in every event; openai-agents
  gives ``""`` to both (its ``Model`` contract asks for one per call).
- a Responses stream ending ``response.incomplete`` / ``response.failed`` / ``error``: the event,
  then ``ModelBehaviorError``; the same.
- an error inside the stream after text: the text's events, then ``ProviderError``
  (retryable for an overload); the same, with the SDK's ``APIError``.
- the connection cut inside a tool call: the events so far, then ``TransportError``, no
  completed response (no half call run); the same, with ``APIConnectionError``.
- Anthropic usage in ``message_start`` and ``message_delta``: input and output once each (no
  Anthropic model in openai-agents but LiteLLM's, not installed).
- the connection cut before any event: sent again, one ``response.created``; after the first
  words: not sent again (the caller saw them).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from agents import ModelSettings
from agents.exceptions import ModelBehaviorError
from openai import APIConnectionError, APIError

from msgwire import ProviderError, TransportError
from msgwire.harness.providers import Retry
from msgwire.testing import Reply, ScriptedServer, recorded, stream_error
from tests._support.localserver import LocalServer
from tests._support.localserver import Reply as Raw
from tests._support.oa_models import Run, both, call, ours

_encode = msgspec.json.encode
BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gemini-2.5-flash"}
DONE = b"data: [DONE]\n\n"
USAGE = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}


def _event(data: dict[str, Any]) -> bytes:
    return b"data: " + _encode(data) + b"\n\n"


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **fields: Any) -> bytes:
    return _event({**BASE, "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **fields})


def _call(index: int, arguments: str, call_id: str | None = None, name: str | None = "get") -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    out: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        out["id"] = call_id
    return out


def _deltas(run: Run, kind: str = "response.function_call_arguments.delta") -> str:
    return "".join(e["delta"] for e in run.events if e["type"] == kind)


def _calls(run: Run) -> list[tuple[str, str]]:
    completed = run.completed
    assert completed is not None
    return [(o["call_id"], o["arguments"]) for o in completed["output"] if o["type"] == "function_call"]


def _chat(data: bytes) -> tuple[Run, Run]:
    return both("openai", lambda: recorded(data, "openai"), stream=True)


def test_a_chunk_with_choices_null_is_skipped() -> None:
    data = (
        _event({**BASE, "choices": None}) + _chunk({"role": "assistant", "content": "hi"}) + _chunk({}, "stop") + DONE
    )
    theirs, mine = _chat(data)
    assert mine.error is None
    assert mine.completed is not None
    assert mine.completed["output"][0]["content"][0]["text"] == "hi"
    assert theirs.completed == mine.completed  # openai-agents 0.24 reads it too


def test_usage_sent_twice_is_counted_once() -> None:
    data = (
        _chunk({"role": "assistant", "content": "hi"})
        + _chunk({}, "stop", usage=USAGE)
        + _event({**BASE, "choices": [], "usage": USAGE})
        + DONE
    )
    theirs, mine = _chat(data)
    assert mine.completed is not None
    usage = mine.completed["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (5, 3, 8)
    assert theirs.completed is not None
    assert theirs.completed["usage"] == usage


def test_parallel_calls_all_at_index_0_are_two_calls() -> None:
    data = (
        _chunk({"role": "assistant", "tool_calls": [_call(0, '{"x":1}', "call_a")]})
        + _chunk({"tool_calls": [_call(0, '{"x":2}', "call_b")]})
        + _chunk({}, "tool_calls")
        + DONE
    )
    theirs, mine = _chat(data)
    assert _calls(mine) == [("call_a", '{"x":1}'), ("call_b", '{"x":2}')]
    assert [e["output_index"] for e in mine.events if e["type"] == "response.function_call_arguments.delta"] == [0, 1]
    assert _calls(theirs) == [("call_b", '{"x":1}{"x":2}')]  # openai-agents: one call, arguments run together


def test_arguments_before_the_calls_id_are_all_in_the_deltas() -> None:
    data = (
        _chunk({"role": "assistant", "tool_calls": [_call(0, '{"x"', name=None)]})
        + _chunk({"tool_calls": [_call(0, ":1}", "call_late")]})
        + _chunk({}, "tool_calls")
        + DONE
    )
    theirs, mine = _chat(data)
    assert _calls(mine) == [("call_late", '{"x":1}')]
    assert _deltas(mine) == '{"x":1}'
    assert _calls(theirs) == [("call_late", '{"x":1}')]
    assert _deltas(theirs) == ":1}"  # openai-agents: what came before the id is missing from its events


def test_calls_without_ids_get_unique_ids() -> None:
    data = (
        _chunk({"role": "assistant", "tool_calls": [_call(0, "{}")]})
        + _chunk({"tool_calls": [_call(1, '{"a":1}')]})
        + _chunk({}, "tool_calls")
        + DONE
    )
    theirs, mine = _chat(data)
    ids = [cid for cid, _ in _calls(mine)]
    assert len(ids) == 2
    assert all(ids)
    assert len(set(ids)) == 2
    added = [e["item"]["call_id"] for e in mine.events if e["type"] == "response.output_item.added"]
    assert added == ids  # the same id from the call's first event to the completed response
    assert [cid for cid, _ in _calls(theirs)] == ["", ""]  # openai-agents: no id at all


def test_calls_without_ids_get_unique_ids_not_streamed_too() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "", "type": "function", "function": {"name": "get", "arguments": "{}"}},
                        {"id": "", "type": "function", "function": {"name": "get", "arguments": "{}"}},
                    ],
                },
            }
        ],
    }

    async def go() -> Run:
        with LocalServer() as server:
            server.route("/chat/completions", Raw(body=_encode(body), headers={"content-type": "application/json"}))
            model, close = ours("openai", server.url(""))
            try:
                return await call(model, stream=False)
            finally:
                await close()

    run = asyncio.run(go())
    assert run.response is not None
    ids = [o["call_id"] for o in run.response["output"] if o["type"] == "function_call"]
    assert len(ids) == 2
    assert all(ids)
    assert len(set(ids)) == 2


@pytest.mark.parametrize("ending", ["incomplete", "failed", "error"])
def test_a_responses_stream_that_ends_without_completing_raises_after_its_event(ending: str) -> None:
    created = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-4o",
        "output": [],
        "status": "in_progress",
    }
    created |= {"tool_choice": "auto", "tools": [], "parallel_tool_calls": True}
    events = [
        {"type": "response.created", "sequence_number": 0, "response": created},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}},
    ]  # fmt: skip
    if ending == "error":
        events.append({"type": "error", "sequence_number": 2, "code": "server_error", "message": "boom", "param": None})
    else:
        details = {"reason": "max_output_tokens"} if ending == "incomplete" else None
        error = {"code": "server_error", "message": "boom"} if ending == "failed" else None
        ended = {**created, "status": ending, "incomplete_details": details, "error": error}
        events.append({"type": f"response.{ending}", "sequence_number": 2, "response": ended})
    data = b"".join(b"event: " + e["type"].encode() + b"\n" + _event(e) for e in events)
    theirs, mine = both("openai-responses", lambda: recorded(data, "openai-responses"), stream=True)
    assert isinstance(mine.error, ModelBehaviorError)
    assert f"terminal event `{'error' if ending == 'error' else 'response.' + ending}`" in str(mine.error)
    assert mine.types[-1] == events[-1]["type"]  # the event went out first, as openai-agents' own model
    assert mine.types == theirs.types
    assert str(mine.error) == str(theirs.error)


def test_an_error_inside_the_stream_raises_after_the_events_before_it() -> None:
    data = _chunk({"role": "assistant", "content": "It is"}) + _event(
        {"error": {"message": "overloaded", "type": "server_error", "code": 503}}
    )
    theirs, mine = _chat(data)
    assert isinstance(mine.error, ProviderError)
    assert mine.error.provider_message == "overloaded"
    assert mine.error.retryable
    assert _deltas(mine, "response.output_text.delta") == "It is"
    assert isinstance(theirs.error, APIError)
    assert mine.types == theirs.types


@pytest.mark.parametrize("dialect", ["openai", "openai-responses"])
def test_a_connection_cut_inside_a_tool_call_raises_with_no_half_call(dialect: str) -> None:
    if dialect == "openai":
        data = _chunk({"role": "assistant", "tool_calls": [_call(0, '{"x": 1, "y', "call_a")]})
    else:
        created = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "output": []}
        created |= {"status": "in_progress", "tool_choice": "auto", "tools": [], "parallel_tool_calls": True}
        item = {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_a",
            "name": "get",
            "arguments": "",
            "status": "in_progress",
        }
        data = b"".join(
            _event(e)
            for e in (
                {"type": "response.created", "sequence_number": 0, "response": created},
                {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
                {"type": "response.function_call_arguments.delta", "sequence_number": 2, "output_index": 0,
                 "item_id": "fc_1", "delta": '{"x": 1, "y'},
            )
        )  # fmt: skip
    theirs, mine = both(dialect, lambda: recorded(data, dialect, close_after=len(data)), stream=True)
    assert isinstance(mine.error, TransportError)
    assert mine.completed is None  # no completed response: the runner runs no half call
    assert _deltas(mine) == '{"x": 1, "y'
    assert isinstance(theirs.error, APIConnectionError)
    assert theirs.completed is None


def test_anthropic_usage_is_counted_once() -> None:
    counts = {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 7}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": []}
    start = {"type": "message_start", "message": {**message, "stop_reason": None, "usage": counts}}
    data = b"".join(
        b"event: " + e["type"].encode() + b"\n" + _event(e)
        for e in (
            start,
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
            {"type": "message_stop"},
        )
    )

    async def go() -> Run:
        with ScriptedServer([recorded(data, "anthropic")]) as server:
            model, close = ours("anthropic", server.url)
            try:
                return await call(model, stream=True, settings=ModelSettings(max_tokens=50))
            finally:
                await close()

    run = asyncio.run(go())
    assert run.completed is not None
    usage = run.completed["usage"]
    assert (usage["output_tokens"], usage["input_tokens_details"]["cached_tokens"]) == (9, 7)
    assert usage["input_tokens"] == 27  # msgwire counts cache reads in the input, as OpenAI does
    assert usage["total_tokens"] == 27 + 9


def _retried(first: Reply) -> tuple[Run, ScriptedServer]:
    async def go(server: ScriptedServer) -> Run:
        model, close = ours("openai", server.url, retry=Retry(max_retries=2, initial_delay=0.01, max_delay=0.02))
        try:
            return await call(model, stream=True)
        finally:
            await close()

    with ScriptedServer(
        [first, recorded(_chunk({"role": "assistant", "content": "hi"}) + _chunk({}, "stop") + DONE, "openai")]
    ) as server:
        return asyncio.run(go(server)), server


def test_a_call_cut_before_any_event_is_sent_again() -> None:
    run, server = _retried(recorded(_chunk({"role": "assistant", "content": "lost"}), "openai", close_after=10))
    assert run.error is None
    assert len(server.requests) == 2
    assert _deltas(run, "response.output_text.delta") == "hi"
    assert run.types.count("response.created") == 1


def test_a_call_that_failed_after_its_first_words_is_not_sent_again() -> None:
    run, server = _retried(stream_error("overloaded", partial="It is"))
    assert isinstance(run.error, ProviderError)
    assert run.error.retryable  # worth another try, but the caller saw "It is" already
    assert len(server.requests) == 1
    assert _deltas(run, "response.output_text.delta") == "It is"
