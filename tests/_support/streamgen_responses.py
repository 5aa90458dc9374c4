"""Hypothesis strategy for OpenAI Responses API streams, as the bytes the server sends.

``responses_streams()`` draws a plan (what the message must turn out to be) and renders it the
way the API does (``event: <type>`` + ``data: {"type": <type>, ...}``, no ``[DONE]``):
``response.created`` and ``response.in_progress`` with an empty ``output``, then the output
items in order, each ``output_item.added`` -> parts and deltas -> ``output_item.done``:

- optionally a reasoning item: 0-3 summary parts (``reasoning_summary_part.added``,
  ``reasoning_summary_text.delta``s, ``reasoning_summary_text.done``,
  ``reasoning_summary_part.done``), ``encrypted_content`` that differs between ``.added`` and
  ``.done`` and again in ``response.completed`` (as it does on the wire), or none at all;
- a message item (optional when tools are called): 1-2 ``output_text`` content parts, each
  ``content_part.added``, ``output_text.delta``s, ``output_text.done``, ``content_part.done``;
- 0-3 function calls: ``arguments: ""`` on ``.added``, ``function_call_arguments.delta``
  fragments, ``function_call_arguments.done`` with the whole text, ``.done`` with the item;

then ``response.completed`` (status ``completed``) or ``response.incomplete`` (status
``incomplete``, ``incomplete_details.reason == "max_output_tokens"``), whose ``response`` carries
the finished items and the usage. ``sequence_number`` is on every event, or (as in recordings
from before mid-2025) on none. Text, JSON style, line endings and network chunking come from
``streamgen``.

Two variations, each off unless asked for:

- ``drop_optional``: each event that only announces or repeats a part
  (``reasoning_summary_part.added`` and ``.done``, ``content_part.added`` and ``.done``) is left
  out or kept at random, as some servers leave them out (LiteLLM's proxy); the message is the
  same either way.
- ``alter_final``: the terminal event's ``output`` says something other than the stream did, in
  one drawn place (``altered`` names it): a summary part or a text part longer by ``"!"``, a
  call's arguments with a trailing space, or an item no event streamed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests._support.streamgen import (
    _base64ish,
    _dumps,
    _ids,
    _json_style,
    _names,
    _sse,
    _tokens,
    fragment_text,
    json_arguments,
    network_chunks,
    split_text,
)

__all__ = ["ResponsesStream", "responses_streams"]


@dataclass(frozen=True)
class ResponsesCall:
    item_id: str
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ResponsesStream:
    """A generated Responses stream and what it must assemble to."""

    data: bytes
    chunks: list[bytes]
    response_id: str
    model: str
    #: Summary texts of the reasoning item (``None``: no reasoning item).
    summaries: list[str] | None
    #: ``encrypted_content`` of the reasoning item's ``output_item.done`` (``None``: absent).
    encrypted_content: str | None
    #: Texts of the message item's content parts (``None``: no message item).
    texts: list[str] | None
    calls: list[ResponsesCall]
    status: str  # "completed" | "incomplete"
    incomplete_reason: str | None
    usage: dict[str, Any]
    sequence_numbers: bool
    #: The ``response`` of the terminal event (what ``from_response`` reads).
    final: dict[str, Any] = field(default_factory=dict)
    #: Optional events left out (``drop_optional``).
    dropped: int = 0
    #: Where the terminal event's output differs from the stream (``alter_final``): ``"summary"``,
    #: ``"text"``, ``"arguments"``, ``"item"``, or ``None``.
    altered: str | None = None
    description: list[str] = field(default_factory=list)


_obfuscation = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", max_size=16)


@st.composite
def responses_streams(draw: st.DrawFn, *, drop_optional: bool = False, alter_final: bool = False) -> ResponsesStream:
    style = draw(_json_style())
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    sequence_numbers = draw(st.sampled_from([True, True, True, False]))
    obfuscation = draw(st.booleans())
    response_id = "resp_" + draw(_ids)
    model = draw(st.sampled_from(["gpt-5.5", "o3-mini-2025-01-31", "gpt-4o-2024-08-06", "gpt-4.1-nano", "m"]))
    created_at = draw(st.integers(1_600_000_000, 1_900_000_000))
    description: list[str] = []
    events: list[dict[str, Any]] = []

    dropped = 0

    def emit(kind: str, **body: Any) -> None:
        event: dict[str, Any] = {"type": kind}
        if sequence_numbers:
            event["sequence_number"] = len(events)
        event.update(body)
        events.append(event)

    def optional(kind: str, **body: Any) -> None:
        """An event that only announces or repeats a part: left out at random with ``drop_optional``."""
        nonlocal dropped
        if drop_optional and draw(st.booleans()):
            dropped += 1
        else:
            emit(kind, **body)

    def delta(kind: str, text: str, **where: Any) -> None:
        extra = {"obfuscation": draw(_obfuscation)} if obfuscation else {}
        emit(kind, **where, delta=text, **extra)

    def response(status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None, reason: str | None) -> dict:
        return {
            "id": response_id,
            "object": "response",
            "created_at": created_at,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None if reason is None else {"reason": reason},
            "instructions": None,
            "max_output_tokens": None,
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    emit("response.created", response=response("in_progress", [], None, None))
    emit("response.in_progress", response=response("in_progress", [], None, None))

    incomplete = draw(st.integers(0, 5)) == 0
    status = "incomplete" if incomplete else "completed"
    output: list[dict[str, Any]] = []

    summaries: list[str] | None = None
    encrypted: str | None = None
    if draw(st.booleans()):
        index, item_id = len(output), f"rs_{draw(_ids)}{len(output)}"  # ids are unique
        summaries = draw(st.lists(fragment_text, max_size=3))
        with_encrypted = draw(st.sampled_from([True, True, False]))
        added: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if with_encrypted:
            added["encrypted_content"] = "gAAAAA" + draw(_base64ish)
            encrypted = "gAAAAA" + draw(_base64ish)
        emit("response.output_item.added", output_index=index, item=added)
        for j, summary in enumerate(summaries):
            part = {"item_id": item_id, "output_index": index, "summary_index": j}
            optional("response.reasoning_summary_part.added", **part, part={"type": "summary_text", "text": ""})
            for piece in split_text(draw, summary):
                delta("response.reasoning_summary_text.delta", piece, **part)
            emit("response.reasoning_summary_text.done", **part, text=summary)
            optional("response.reasoning_summary_part.done", **part, part={"type": "summary_text", "text": summary})
        done: dict[str, Any] = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": s} for s in summaries],
        }
        if encrypted is not None:
            done["encrypted_content"] = encrypted
        emit("response.output_item.done", output_index=index, item=done)
        if encrypted is not None:  # the server encrypts again for response.completed
            done = {**done, "encrypted_content": "gAAAAA" + draw(_base64ish)}
        output.append(done)
        description.append(f"reasoning, {len(summaries)} summary part(s), encrypted={encrypted is not None}")

    call_count = draw(st.integers(0, 3))
    texts: list[str] | None = None
    if not call_count or draw(st.booleans()):
        index, item_id = len(output), f"msg_{draw(_ids)}{len(output)}"  # ids are unique
        texts = draw(st.lists(fragment_text, min_size=1, max_size=2))
        emit(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"},
        )
        parts = []
        for k, text in enumerate(texts):
            where = {"item_id": item_id, "output_index": index, "content_index": k}
            empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            optional("response.content_part.added", **where, part=empty)
            for piece in split_text(draw, text):
                delta("response.output_text.delta", piece, **where, logprobs=[])
            emit("response.output_text.done", **where, text=text, logprobs=[])
            part = {**empty, "text": text}
            optional("response.content_part.done", **where, part=part)
            parts.append(part)
        item = {
            "id": item_id,
            "type": "message",
            "status": "incomplete" if incomplete and not call_count else "completed",
            "content": parts,
            "role": "assistant",
        }
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
        description.append(f"message, {len(texts)} part(s)")

    calls: list[ResponsesCall] = []
    for _ in range(call_count):
        index, item_id = len(output), f"fc_{draw(_ids)}{len(output)}"  # ids are unique
        call = ResponsesCall(item_id, f"call_{draw(_ids)}{index}", draw(_names), _dumps(draw(json_arguments), style))
        head = {"id": item_id, "type": "function_call", "call_id": call.call_id, "name": call.name}
        emit("response.output_item.added", output_index=index, item={**head, "status": "in_progress", "arguments": ""})
        where = {"item_id": item_id, "output_index": index}
        for piece in split_text(draw, call.arguments, max_pieces=8):
            if piece:
                delta("response.function_call_arguments.delta", piece, **where)
        emit("response.function_call_arguments.done", **where, arguments=call.arguments)
        item = {**head, "status": "completed", "arguments": call.arguments}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
        calls.append(call)
    if calls:
        description.append(f"{len(calls)} function call(s)")

    input_tokens, output_tokens = draw(_tokens), draw(_tokens)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": draw(st.integers(0, input_tokens))},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": draw(st.integers(0, output_tokens))},
        "total_tokens": input_tokens + output_tokens,
    }
    reason = "max_output_tokens" if incomplete else None
    altered = None
    if alter_final and draw(st.booleans()):
        output, altered = _altered(draw, copy.deepcopy(output))
        description.append(f"terminal output altered: {altered}")
    final = response(status, output, usage, reason)
    emit(f"response.{status}", response=final)
    if not sequence_numbers:
        description.append("no sequence_number")
    if dropped:
        description.append(f"{dropped} optional event(s) dropped")

    data = _sse([(e["type"], _dumps(e, style), "") for e in events], eol)
    chunks = draw(network_chunks(data))
    description.append(f"eol {eol!r}, {len(chunks)} network chunks")
    return ResponsesStream(
        data=data,
        chunks=chunks,
        response_id=response_id,
        model=model,
        summaries=summaries,
        encrypted_content=encrypted,
        texts=texts,
        calls=calls,
        status=status,
        incomplete_reason=reason,
        usage=usage,
        sequence_numbers=sequence_numbers,
        final=final,
        dropped=dropped,
        altered=altered,
        description=description,
    )


def _altered(draw: st.DrawFn, output: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """``output`` (a copy) made to differ from the stream in one drawn place."""
    places: list[tuple[str, dict[str, Any], str]] = [("item", {}, "")]
    for item in output:
        if item["type"] == "reasoning":
            places += [("summary", part, "text") for part in item["summary"]]
        elif item["type"] == "message":
            places += [("text", part, "text") for part in item["content"]]
        elif item["type"] == "function_call":
            places.append(("arguments", item, "arguments"))
    kind, holder, key = draw(st.sampled_from(places))
    if kind == "item":
        part = {"type": "output_text", "annotations": [], "text": "late"}
        item = {"id": "msg_late", "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        output.append(item)
    else:
        holder[key] += " " if kind == "arguments" else "!"
    return output, kind
