"""The Rust core's JSON string writer (``rust/core/src/json_out.rs``) against msgspec.

The core escapes strings itself (a block-at-a-time scan, clean runs copied whole), so the
canonical JSON it hands to Python, and the bodies it writes, must keep msgspec's escaping byte
for byte: quotes, backslashes, ``\\b \\t \\n \\f \\r``, other control characters as
``\\u00XX``; DEL, non-ASCII and U+2028/U+2029 as UTF-8. Strings are drawn to put those bytes
at every distance from the scan's 32-byte blocks, and read from bodies both escaped
(``ensure_ascii``) and raw.
"""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import _core
from tests._support.strategies import examples

# every character class the escaper treats apart, and plain ASCII for the runs between them
_SPECIAL = st.sampled_from(['"', "\\", "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f", "\u2028", "é", "😀", "/"])
_CHAR = st.one_of(
    _SPECIAL,
    st.characters(codec="utf-8", exclude_categories=("Cs",)),
    st.sampled_from("abcdefghij "),
)
_RUN = st.integers(min_value=0, max_value=70).map(lambda n: "x" * n)
TEXTS = st.one_of(
    st.text(_CHAR, max_size=200),
    st.lists(st.tuples(_RUN, _CHAR), max_size=12).map(lambda parts: "".join(a + b for a, b in parts)),
)


def _encoded(text: str) -> bytes:
    return msgspec.json.encode(text)


def _chat_body(text: str, arguments: str, *, ensure_ascii: bool) -> bytes:
    message = {
        "role": "assistant",
        "content": text,
        "reasoning_content": text,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}],
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": text,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    return json.dumps(body, ensure_ascii=ensure_ascii).encode()


@given(text=TEXTS, ensure_ascii=st.booleans())
@examples(300)
def test_canonical_json_of_a_response_escapes_as_msgspec(text: str, ensure_ascii: bool) -> None:
    arguments = json.dumps({"q": text})
    canonical = _core.from_response_json(
        _chat_body(text, arguments, ensure_ascii=ensure_ascii), "openai", id="m", timestamp="2026-01-01T00:00:00Z"
    )
    message = msgspec.json.decode(canonical, type=msgwire.AssistantMessage)
    assert message.text == text
    # the whole canonical JSON is msgspec's encoding of what it holds
    assert canonical == msgspec.json.encode(message)
    assert b'"arguments":' + _encoded(arguments) in canonical


@given(text=TEXTS)
@examples(200)
def test_response_and_request_bodies_escape_as_msgspec(text: str) -> None:
    reply = msgwire.AssistantMessage(content=[msgwire.TextBlock(text=text)], model=text)
    body = msgwire.formats.to_response_json(reply, "openai")
    assert b'"content":' + _encoded(text) in body
    assert b'"model":' + _encoded(text) in body
    said = "a" + text  # an empty message is written as a placeholder
    session = msgwire.Session(messages=[msgwire.UserMessage(content=[msgwire.TextBlock(text=said)])])
    request = msgwire.formats.to_request_json(session, "anthropic")
    assert b'"content":' + _encoded(said) in request  # one text block: the content is its string
    assert json.loads(request)["messages"][0]["content"] == said
