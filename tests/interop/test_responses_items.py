"""Responses input items one at a time as msgwire messages and back (``msgwire.interop.responses_items``):
any JSON object comes back equal, as JSON; the message form is told apart from a loss; what
msgwire's message does not carry is named."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given

from msgwire import AssistantMessage, ToolResultMessage, UnknownMessage, UserMessage
from msgwire.interop.responses_items import FORMS, PROVIDER_ITEM, items_of, read_item
from tests._support.openai_agents import CALL, items
from tests._support.strategies import examples

_sorted = msgspec.json.Encoder(order="sorted")


def _round_trip(item: dict[str, Any]) -> list[dict[str, Any]]:
    read = read_item(item)
    return items_of(read.message, kept=read.kept, form=read.form)


@examples(300)
@given(items())
def test_any_item_comes_back_equal_as_json(item: dict[str, Any]) -> None:
    (back,) = _round_trip(item)
    assert _sorted.encode(back) == _sorted.encode(item)


def test_a_message_the_writer_gives_in_the_other_form_is_carried_with_its_form() -> None:
    cases = {
        '{"role": "user", "content": "hi"}': ["text", "untyped"],
        '{"type": "message", "role": "user", "content": "hi"}': ["text"],
        '{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}': ["untyped"],
        '{"type": "message", "role": "assistant", "content": "hi"}': ["typed"],
        '{"role": "assistant", "content": "hi"}': None,
    }
    for text, form in cases.items():
        item = msgspec.json.decode(text)
        read = read_item(item)
        assert (read.form, read.kept, read.losses) == (form, None, []), text
        assert _round_trip(item) == [item]
    assert set(FORMS) == {"text", "untyped", "typed"}


def test_a_field_the_message_does_not_carry_is_named_and_the_item_kept() -> None:
    item = {**CALL, "status": "completed"}
    read = read_item(item, index=7)
    assert isinstance(read.message, AssistantMessage)
    assert read.message.tool_calls[0].arguments == CALL["arguments"]
    assert read.kept == item
    (loss,) = read.losses
    assert (loss.message, loss.block, loss.kind, loss.action) == (7, None, "item", "fallback")
    assert "'function_call' item: $.status not carried" in loss.reason


def test_each_item_is_a_new_message() -> None:
    first, second = read_item({"role": "user", "content": "yes"}), read_item({"role": "user", "content": "yes"})
    assert isinstance(first.message, UserMessage)
    assert isinstance(second.message, UserMessage)
    assert first.message.id != second.message.id


def test_a_result_names_its_tool_when_asked() -> None:
    result = {"call_id": "call_1", "output": "5", "type": "function_call_output"}
    read = read_item(result, tool_name={"call_1": "add"}.get)
    assert isinstance(read.message, ToolResultMessage)
    assert read.message.tool_name == "add"
    assert read.kept is None
    assert _round_trip(result) == [result]


def test_an_item_with_no_message_is_an_unknown_message_of_its_own() -> None:
    item = {"role": "developer", "content": "Be brief."}
    read = read_item(item, index=2)
    assert isinstance(read.message, UnknownMessage)
    assert read.message.type == PROVIDER_ITEM
    data = read.message.data()
    assert (data["dialect"], data["item"]) == ("openai-responses", item)
    assert data["id"]
    assert [(x.message, x.kind) for x in read.losses] == [(2, "item")]


def test_what_is_no_item_is_refused() -> None:
    with pytest.raises(TypeError, match=r"items\[3\] is list, not a Responses input item"):
        read_item([1, 2], index=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"items\[0\] is not JSON"):
        read_item({"role": "user", "content": object()})
