"""A wrong argument to the document API is a ``TypeError`` that says what it got and what to
pass, and provider bodies are never called "canonical documents" in error texts."""

from __future__ import annotations

from typing import Any

import pytest

import msgwire
from msgwire import DecodeError, formats


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ([{"role": "user", "content": "hi"}], "role/content message"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "got a dict"),
        (msgwire.user("hi"), "got one UserMessage"),
        ("hi", "got str"),
        ([msgwire.user("hi"), 3], r"messages\[1\] is int"),
        (None, "got NoneType"),
    ],
)
def test_to_request_names_a_wrong_source(source: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        formats.to_request(source, "openai")


@pytest.mark.parametrize(("body", "words"), [([{"role": "user"}], "got a list"), (3, "got int")])
def test_from_request_names_a_wrong_body(body: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        formats.from_request(body, "openai")


def test_dumps_refuses_role_content_dicts() -> None:
    with pytest.raises(TypeError, match="not dicts"):
        msgwire.dumps([{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match="not dicts"):
        msgwire.dumps({"role": "user", "content": "hi"})
    assert msgwire.dumps([msgwire.user("hi")]).startswith(b'[{"type":"user"')


def test_provider_body_errors_name_the_body_not_a_canonical_document() -> None:
    failures = []
    with pytest.raises(DecodeError) as raised:
        formats.from_request({"messages": [{"role": "tool", "content": "x"}]}, "openai")
    failures.append(raised.value)
    with pytest.raises(DecodeError) as raised:
        formats.from_response({"choices": [{"message": {"content": 3}}]}, "openai")
    failures.append(raised.value)
    with pytest.raises(DecodeError) as raised:
        msgwire.assemble(b'data: {"choices":[{"delta":{"content":3}}]}\n\n', "openai")
    failures.append(raised.value)
    for failure in failures:
        assert "canonical" not in str(failure)
        assert failure.kind == "body_shape"
    assert "request body" in str(failures[0])
    assert "openai response body" in str(failures[1])
    assert failures[1].path == "$.choices[0].message.content"
    assert "stream payload" in str(failures[2])


def test_a_canonical_document_error_says_so() -> None:
    with pytest.raises(DecodeError, match="invalid canonical document") as raised:
        msgwire._core.to_request_json(b'[{"type":"user","id":"u","timestamp":"t","content":3}]', "openai")
    assert raised.value.kind == "schema"


def test_every_exception_has_a_kind() -> None:
    for cls in (
        msgwire.MsgwireError,
        msgwire.DecodeError,
        msgwire.ValidationError,
        msgwire.StreamError,
        msgwire.ProviderError,
        msgwire.TruncatedStreamError,
        msgwire.TransportError,
        msgwire.MalformedStreamError,
        msgwire.LimitExceededError,
        msgwire.UsageError,
    ):
        assert isinstance(cls.kind, str)
        assert cls.kind


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: msgwire.user(123), r"content is text, a content block or a list of blocks, got int"),
        (lambda: msgwire.user(None), r"content is .* got NoneType"),
        (lambda: msgwire.assistant(3.5), r"content is .* got float"),
        (lambda: msgwire.tool_result("call_1", {"a": 1}), r"content is .* got dict"),
        (lambda: msgwire.tool_result(None, "x"), r"tool_call_id is the id of the tool call \(a str\), got NoneType"),
        (lambda: msgwire.tool_result(7, "x"), r"tool_call_id .* got int"),
    ],
)
def test_the_short_constructors_name_a_wrong_argument(make: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        make()


def test_the_short_constructors_take_text_a_block_or_blocks() -> None:
    block = msgwire.TextBlock(text="hi")
    assert msgwire.user("hi").content == msgwire.user(block).content == msgwire.user([block]).content == [block]
    assert msgwire.tool_result("call_1", "42").tool_call_id == "call_1"
    assert msgwire.assistant().content == []
