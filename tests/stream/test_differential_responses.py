"""msgwire's ``openai-responses`` assembly against the ``openai`` SDK's ``ResponseStreamState``
(through ``client.responses.stream``), on the same bytes, driven over a mock HTTP transport
that streams them in the drawn network chunks (so the SDK's SSE decoder is under test too).

Two kinds of input: generated streams (``streamgen_responses``), where msgwire, the SDK and the
generator's plan must agree, and the recorded streams in ``tests/fixtures/wire/openai``.

Note what the SDK's final response is: the ``response`` object of ``response.completed``, not
what the deltas added up to (it rebuilds ``output`` from the ``output_item.done`` items only
when the terminal event has none). msgwire builds the message from the deltas; so this
compares the streamed parts against the server's own summary of them.

What differs by design (not compared):

- Reasoning: the SDK keeps the summary parts as a list; msgwire's thinking text is the parts
  joined by a blank line (``"\\n\\n"``), and the ``encrypted_content`` of ``output_item.done``
  is the thinking block's ``signature``. The server encrypts the reasoning anew for each
  event that carries the item (``.added``, ``.done``, ``response.completed``), so the SDK's
  final response has a different string than msgwire; we compare with the SDK's
  ``output_item.done`` event (``test_recorded_encrypted_content_differs_per_event``).
- Text: the SDK keeps one ``output_text`` part per content part, including empty ones; msgwire
  makes a text block per part that got text (``message.text`` is the same concatenation as the
  SDK's ``output_text``). Likewise a reasoning item with no summary text and no
  ``encrypted_content`` makes no thinking block. (Until this module found it, msgwire made an
  empty block for both that no event described, so ``assemble`` and the replayed events
  disagreed; fixed in ``openai_responses.rs``.)
- Stop reason: the SDK has ``status`` and ``incomplete_details.reason``; msgwire's
  ``raw_stop_reason`` is the reason when there is one, else the status.
- ``response.incomplete`` (``max_output_tokens``): the SDK's ``get_final_response()`` raises
  ``RuntimeError("Didn't receive a `response.completed` event.")`` although the stream ended
  normally; the response is only in the ``response.incomplete`` event it yielded. msgwire
  returns the message with ``stop_reason == "length"``. We compare against that event's
  ``response``, and ``test_incomplete_sdk_final_response_raises`` pins the SDK's behaviour.
- Ids: msgwire gives every message its own id; the provider's id is ``response_id``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import openai
import pytest
from hypothesis import given

import msgwire
from msgwire import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from tests._support.sdk import RESPONSES_FIXTURES, compare_response, cuts, http_client, ours, sdk_events
from tests._support.strategies import examples
from tests._support.streamgen_responses import ResponsesStream, responses_streams

WIRE = Path(__file__).parents[1] / "fixtures" / "wire" / "openai"
EXAMPLES = examples(100)
DIALECT = "openai-responses"


def check_plan(message: AssistantMessage, codes: list[str], plan: ResponsesStream) -> None:
    """msgwire's message against what the generated stream was made of."""
    expected: list[Any] = []
    thinking = ThinkingBlock(thinking="\n\n".join(plan.summaries or []), signature=plan.encrypted_content)
    if thinking != ThinkingBlock():
        expected.append(thinking)
    expected += [TextBlock(text=text) for text in plan.texts or [] if text]
    expected += [ToolCallBlock(id=c.call_id, name=c.name, arguments=c.arguments, item_id=c.item_id) for c in plan.calls]
    # each block keeps the id of its item (the plan names the calls' items; the others by prefix)
    prefixes = {TextBlock: "msg_", ThinkingBlock: "rs_"}
    content = []
    for block in message.content:
        if type(block) in prefixes:
            assert (block.item_id or "").startswith(prefixes[type(block)])
            block = msgspec.structs.replace(block, item_id=None)
        content.append(block)
    assert content == expected
    assert message.text == "".join(plan.texts or [])
    assert message.thinking == "\n\n".join(plan.summaries or [])
    if plan.status == "incomplete":
        assert (message.stop_reason, message.raw_stop_reason) == ("length", "max_output_tokens")
    else:
        assert message.stop_reason == ("tool_use" if plan.calls else "end_turn")
        assert message.raw_stop_reason == "completed"
    assert message.usage == msgwire.Usage(
        input_tokens=plan.usage["input_tokens"],
        output_tokens=plan.usage["output_tokens"],
        cache_read_tokens=plan.usage["input_tokens_details"]["cached_tokens"],
        reasoning_tokens=plan.usage["output_tokens_details"]["reasoning_tokens"],
    )
    assert (message.model, message.response_id, message.provider) == (plan.model, plan.response_id, "openai")
    assert codes == []


# --- 1. generated streams -------------------------------------------------------------------


@EXAMPLES
@given(responses_streams())
def test_generated_responses_stream_matches_openai_sdk(plan: ResponsesStream) -> None:
    message, codes = ours(plan.chunks, DIALECT)
    check_plan(message, codes, plan)
    events, response = sdk_events(plan.chunks)
    compare_response(message, events, response)
    assert response.status == plan.status
    # the SDK's streamed text deltas add up to the same text
    streamed = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert streamed == message.text


# --- 2. recorded streams --------------------------------------------------------------------


def test_recorded_responses_fixtures_exist() -> None:
    assert len(RESPONSES_FIXTURES) == 3


@pytest.mark.parametrize("name", RESPONSES_FIXTURES)
def test_recorded_responses_stream_matches_openai_sdk(name: str) -> None:
    for chunks in cuts((WIRE / name).read_bytes()):
        message, codes = ours(chunks, DIALECT)
        assert codes == []
        compare_response(message, *sdk_events(chunks))


def test_recorded_encrypted_content_differs_per_event() -> None:
    """gpt-5.5 encrypts the reasoning anew for ``output_item.added``, ``output_item.done`` and
    ``response.completed``: three different strings. msgwire's signature is ``.done``'s (the
    ``.added`` one is shorter: not the finished item); the SDK's final response has
    ``response.completed``'s, and its ``output_item.done`` event has msgwire's."""
    data = (WIRE / "responses-encrypted-reasoning-text-function-call.sse").read_bytes()
    message, _ = ours([data], DIALECT)
    events, response = sdk_events([data])
    added, done = (
        next(e.item for e in events if e.type == kind)
        for kind in ("response.output_item.added", "response.output_item.done")
    )
    [thinking] = [b for b in message.content if isinstance(b, ThinkingBlock)]
    assert thinking.signature == done.encrypted_content
    assert len({added.encrypted_content, done.encrypted_content, response.output[0].encrypted_content}) == 3


# --- 3. pinned SDK behaviour ----------------------------------------------------------------


def test_incomplete_sdk_final_response_raises() -> None:
    """A reply cut by ``max_output_tokens`` ends with ``response.incomplete``: the SDK's
    ``get_final_response()`` raises (see the module docstring); msgwire returns the message."""
    head = {"id": "resp_1", "object": "response", "model": "gpt-x", "output": []}
    part = {"type": "output_text", "annotations": [], "text": ""}
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    final = {**item, "status": "incomplete", "content": [{**part, "text": "Hel"}]}
    usage = {
        "input_tokens": 3,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 4,
    }
    incomplete = {
        **head,
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [final],
        "usage": usage,
    }
    events = [
        {"type": "response.created", "response": {**head, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **where, "part": part},
        {"type": "response.output_text.delta", **where, "delta": "Hel"},
        {"type": "response.output_item.done", "output_index": 0, "item": final},
        {"type": "response.incomplete", "response": incomplete},
    ]
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    with (
        openai.OpenAI(api_key="x", base_url="http://test", http_client=http_client([data]), max_retries=0) as client,
        client.responses.stream(model="m", input="hi") as stream,
        pytest.raises(RuntimeError, match=r"Didn't receive a `response\.completed` event"),
    ):
        stream.get_final_response()
    message, codes = ours([data], DIALECT)
    assert (message.text, message.stop_reason, message.raw_stop_reason, codes) == (
        "Hel",
        "length",
        "max_output_tokens",
        [],
    )
    compare_response(message, *sdk_events([data]))


def test_empty_parts_make_no_blocks() -> None:
    """Regression: a reasoning item with no summary and no ``encrypted_content``, and an
    ``output_text`` part that got no text, used to leave empty blocks in the assembled message
    that no event described (``assemble`` and the replayed events disagreed). Now neither makes
    a block; the SDK keeps both, empty."""
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    part = {"type": "output_text", "annotations": [], "text": ""}
    message = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [part]}
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}
    usage = {
        "input_tokens": 3,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 4,
    }
    head = {"id": "resp_1", "object": "response", "model": "gpt-x", "status": "in_progress", "output": []}
    where = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
    events = [
        {"type": "response.created", "response": head},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1, "item": {**message, "content": []}},
        {"type": "response.content_part.added", **where, "part": part},
        {"type": "response.output_text.delta", **where, "delta": ""},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.output_item.added", "output_index": 2, "item": {**call, "arguments": ""}},
        {"type": "response.output_item.done", "output_index": 2, "item": call},
        {
            "type": "response.completed",
            "response": {**head, "status": "completed", "output": [reasoning, message, call], "usage": usage},
        },
    ]
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    ours_message, codes = ours([data], DIALECT)  # checks the events add up to the message
    assert ours_message.content == [ToolCallBlock(id="call_1", name="f", arguments="{}", item_id="fc_1")]
    assert (ours_message.stop_reason, codes) == ("tool_use", [])
    sdk_events_, response = sdk_events([data])
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    compare_response(ours_message, sdk_events_, response)
