"""A Responses stream restates each piece of its output: deltas, then the part's ``.done``, the
item's ``output_item.done`` and the terminal event's ``output``; and the events that announce
parts (``reasoning_summary_part.added``, ``content_part.added``, their ``.done``) may be missing.
The rule (docs/wire.md, section 5): assembled once, the message is what ``from_response`` reads
off the terminal event's ``response`` (the message the official SDK returns too), and any
difference between the stream and that final word is a diagnostic.

What differs by design, and is not compared: a thinking block's ``signature`` is the
``encrypted_content`` of ``output_item.done`` (the server encrypts anew for the terminal event),
and each message has its own ``id`` and ``timestamp``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import AssistantMessage, ThinkingBlock
from msgwire.sse import iter_sse
from tests._support.sdk import compare_response, ours, sdk_events, strip_identity
from tests._support.strategies import examples
from tests._support.streamgen_responses import ResponsesStream, responses_streams

DIALECT = "openai-responses"
FIXTURES = Path(__file__).parents[1] / "fixtures"
#: The events that only announce or repeat a part: servers may leave them out.
OPTIONAL = {
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.content_part.added",
    "response.content_part.done",
}


def _sse(events: list[dict[str, Any]]) -> bytes:
    """The events as a stream, written as ``from_response`` writes a body it is given as a dict (items
    kept whole compare byte for byte)."""
    return b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), msgspec.json.encode(e)) for e in events)


def _comparable(message: AssistantMessage) -> AssistantMessage:
    content = [
        msgspec.structs.replace(b, signature=None) if isinstance(b, ThinkingBlock) else b for b in message.content
    ]
    return msgspec.structs.replace(strip_identity(message), content=content)


def _final(message: AssistantMessage, response: dict[str, Any]) -> None:
    """``message`` is what ``from_response`` reads off the terminal event's ``response``."""
    assert _comparable(message) == _comparable(msgwire.from_response(response, DIALECT))


# --- issue 27, bug 6: the six events ------------------------------------------------------------

_HEAD = {"id": "resp_1", "object": "response", "model": "m", "status": "in_progress", "output": []}
_AT = {"item_id": "rs_1", "output_index": 0, "summary_index": 0}


def _reasoning(*summary: str) -> dict[str, Any]:
    return {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": t} for t in summary]}


def _six_events(*, part_added: bool) -> list[dict[str, Any]]:
    announce = [{"type": "response.reasoning_summary_part.added", **_AT, "part": {"type": "summary_text", "text": ""}}]
    return [
        {"type": "response.created", "response": _HEAD},
        {"type": "response.output_item.added", "output_index": 0, "item": _reasoning()},
        *(announce if part_added else []),
        {"type": "response.reasoning_summary_text.delta", **_AT, "delta": "abc"},
        {"type": "response.reasoning_summary_text.done", **_AT, "text": "abc"},
        {"type": "response.output_item.done", "output_index": 0, "item": _reasoning("abc")},
        {"type": "response.completed", "response": {**_HEAD, "status": "completed", "output": [_reasoning("abc")]}},
    ]


@pytest.mark.parametrize("part_added", [False, True], ids=["without part.added", "with part.added"])
def test_a_summary_streamed_without_part_added_is_read_once(part_added: bool) -> None:
    """LiteLLM's proxy sends no ``reasoning_summary_part.added``: the summary, streamed as one
    delta, was appended again from ``output_item.done`` ("abcabc"), with no diagnostic."""
    events = _six_events(part_added=part_added)
    data = _sse(events)
    message, codes = ours([data], DIALECT)
    assert message.thinking == "abc"
    assert codes == []
    _final(message, events[-1]["response"])
    # the SDK's final response says the same
    _, response = sdk_events([data])
    assert [item.type for item in response.output] == ["reasoning"]
    assert [part.text for part in response.output[0].summary] == ["abc"]


def test_the_sdk_cannot_read_text_without_content_part_added() -> None:
    """Why ``from_response`` is the oracle here, not the SDK: ``ResponseStreamState`` indexes the
    parts that ``content_part.added`` made, and raises on a text delta without one. msgwire reads
    the text."""
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events = [
        {"type": "response.created", "response": _HEAD},
        {"type": "response.output_item.added", "output_index": 0, "item": {**msg, "content": []}},
        {"type": "response.output_text.delta", **at, "delta": "hi"},
        {"type": "response.output_text.done", **at, "text": "hi"},
        {"type": "response.output_item.done", "output_index": 0, "item": msg},
        {"type": "response.completed", "response": {**_HEAD, "status": "completed", "output": [msg]}},
    ]
    data = _sse(events)
    with pytest.raises(IndexError):
        sdk_events([data])
    message, codes = ours([data], DIALECT)
    assert (message.text, codes) == ("hi", [])
    _final(message, events[-1]["response"])


# --- generated streams ----------------------------------------------------------------------------


@examples(100)
@given(responses_streams(drop_optional=True, alter_final=True))
def test_a_generated_stream_is_its_terminal_output_and_a_difference_is_a_diagnostic(plan: ResponsesStream) -> None:
    message, codes = ours(plan.chunks, DIALECT)
    if plan.altered is None:
        # optional events dropped or not, nothing differs: no diagnostic
        assert codes == []
        _final(message, plan.final)
        if plan.dropped == 0:  # the SDK reads these (not a text without content_part.added)
            compare_response(message, *sdk_events(plan.chunks))
        return
    # any difference is a diagnostic: text kept as it streamed (a later final word that differs
    # from an earlier one, or adds to a part before the last of its block), arguments kept as
    # the call ended, an item added
    assert codes, f"the terminal output differs ({plan.altered}) and no diagnostic says so"
    assert set(codes) <= {"final_text_differs", "tool_call_after_end", "item_only_in_output", "blocks_out_of_order"}
    if plan.altered == "item":  # an item the stream never had is added, at the end
        _final(message, plan.final)


# --- recorded streams -----------------------------------------------------------------------------


def _recordings() -> list[Path]:
    paths = sorted((FIXTURES / "realworld" / "openai-responses").glob("*.sse"))
    paths += sorted((FIXTURES / "wire" / "openai").glob("responses-*.sse"))
    return [p for p in paths if b'"output":[{' in p.read_bytes().replace(b" ", b"")]


RECORDINGS = _recordings()


def _events(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(event.data) for event in iter_sse([data]) if event.data.strip() != "[DONE]"]


def test_the_recordings_are_there() -> None:
    assert len(RECORDINGS) == 18
    assert sum(any(e["type"] in OPTIONAL for e in _events(p.read_bytes())) for p in RECORDINGS) == 12


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_a_recording_with_every_optional_event_dropped_is_its_terminal_output(path: Path) -> None:
    events = _events(path.read_bytes())
    terminal = events[-1]["response"]
    for kept in (events, [e for e in events if e["type"] not in OPTIONAL]):
        data = _sse(kept)
        for chunks in ([data], [data[i : i + 7] for i in range(0, len(data), 7)]):
            message, codes = ours(chunks, DIALECT)
            assert codes == []
            _final(message, terminal)


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
@examples(5)
@given(data=st.data())
def test_a_recording_with_optional_events_dropped_at_random_is_its_terminal_output(
    path: Path, data: st.DataObject
) -> None:
    events = _events(path.read_bytes())
    kept = [e for e in events if e["type"] not in OPTIONAL or data.draw(st.booleans(), label=e["type"])]
    message, codes = ours([_sse(kept)], DIALECT)
    assert codes == []
    _final(message, events[-1]["response"])
