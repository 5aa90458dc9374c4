"""Every way reading can fail, one test each: the exception class, and where it points (a byte
offset into the input or a JSON path). The Rust core fails the same way on hostile input: a
DecodeError with an offset, never a PanicException (which `except Exception` would not catch)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable

import pytest

import msgwire
from msgwire import ContentBlock, DecodeError, Message, MsgwireError, Session, TextBlock, Usage, ValidationError

STAMP = "2025-01-01T00:00:00Z"


def envelope(*messages: object, **fields: object) -> bytes:
    doc = {"version": 1, "id": "s", "system_prompt": None, "created_at": STAMP, "updated_at": STAMP, "metadata": {}}
    doc.update(fields)
    doc["messages"] = list(messages)
    return json.dumps(doc, separators=(",", ":")).encode()


def user(text: str = "hi", **fields: object) -> dict[str, object]:
    return {"type": "user", "id": "u", "timestamp": STAMP, "content": [{"type": "text", "text": text}], **fields}


def validation_error(data: bytes | str, type: object = Session) -> ValidationError:  # noqa: A002
    with pytest.raises(ValidationError) as info:
        msgwire.loads(data, type=type)
    return info.value


# --- malformed JSON: DecodeError at a byte offset ---------------------------------------------


def test_error_hierarchy() -> None:
    assert issubclass(DecodeError, MsgwireError)
    assert issubclass(DecodeError, ValueError)
    assert issubclass(ValidationError, DecodeError)


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b'{"version":1,\n"id": }', 20),  # the `}` where a value should be
        (b'{"version":1,"messages":[{"type":"user","x":[1,}]}', 47),  # deep inside a message
        (b'{"version":1,"id":"s",}', 22),  # a trailing comma
        (b'[{"role":"user","content":"hi"} {}]', 32),  # a missing comma in a legacy list
        (b'{"version":1,"id":', 18),  # truncated: the offset is the end of the input
        (b"", 0),
        (b'{"version":1,"id":"ab\xff"}', 21),  # invalid UTF-8 in a known field
        (b'{"messages":[{"type":"hologram","a":"\xc3("}]}', 37),  # ... and inside an unknown object
    ],
    ids=[
        "missing-value",
        "nested",
        "trailing-comma",
        "legacy-missing-comma",
        "truncated",
        "empty",
        "utf8",
        "utf8-unknown",
    ],
)
def test_malformed_json_has_the_byte_offset(data: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        msgwire.loads(data)
    error = info.value
    assert type(error) is DecodeError  # not a ValidationError: the JSON itself is broken
    assert isinstance(error, ValueError)
    assert error.offset == offset
    assert f"(byte {offset})" in str(error)
    assert error.path is None


def test_malformed_json_offset_counts_bytes_of_str_input() -> None:
    with pytest.raises(DecodeError) as info:
        msgwire.loads('{"system_prompt":"é😀", }')  # 2 + 4 bytes of non-ASCII before the error
    assert info.value.offset == 27


def test_truncated_str_input_offset_counts_bytes() -> None:
    with pytest.raises(DecodeError) as info:
        msgwire.loads('{"system_prompt":"é😀')
    assert info.value.offset == 24


def test_trailing_characters_offset() -> None:
    with pytest.raises(DecodeError, match="trailing characters") as info:
        msgwire.loads(b'{"version":1} x')
    assert info.value.offset in (14, 15)  # msgspec counts the byte after the stray one


@pytest.mark.parametrize("type", [Session, Message, list[Message], ContentBlock, TextBlock, Usage])
def test_malformed_json_is_a_decode_error_for_every_target(type: object) -> None:  # noqa: A002
    with pytest.raises(DecodeError) as info:
        msgwire.loads(b'{"a": ]}', type=type)
    assert info.value.offset == 6


@pytest.mark.parametrize(
    "data",
    [b"[" * 100_000, b'{"a":' * 100_000, envelope(metadata=0).replace(b'"metadata":0', b'"metadata":' + b"[" * 50_000)],
    ids=["arrays", "objects", "in-metadata"],
)
def test_deep_nesting_is_a_decode_error_not_a_recursion_error(data: bytes) -> None:
    for target in (Session, Message, list[Message]):
        with pytest.raises(DecodeError, match="nested too deeply"):
            msgwire.loads(data, type=target)


# --- wrong shape: ValidationError at a JSON path ---------------------------------------------


def test_wrong_type_at_a_nested_path() -> None:
    result = {"type": "tool_result", "id": "t", "timestamp": STAMP, "tool_call_id": 7}
    error = validation_error(envelope(user(), user(), user(), result))
    assert error.path == "$.messages[3].tool_call_id"
    assert "Expected `str`, got `int`" in str(error)
    assert error.errors == [("$.messages[3].tool_call_id", "Expected `str`, got `int`")]


def test_missing_required_field_names_the_field_in_the_path() -> None:
    result = {"type": "tool_result", "id": "t", "timestamp": STAMP}
    error = validation_error(envelope(user(), user(), user(), result))
    assert error.path == "$.messages[3].tool_call_id"
    assert "missing required field `tool_call_id`" in str(error)


def test_wrong_type_inside_a_block() -> None:
    bad = user()
    bad["content"] = [{"type": "text", "text": "ok"}, {"type": "text", "text": None}]
    assert validation_error(envelope(user(), bad)).path == "$.messages[1].content[1].text"


def test_wrong_type_next_to_an_unknown_block() -> None:
    """The slow path (taken for the unknown block) reports the same path as the fast one."""
    bad = user()
    bad["content"] = [{"type": "hologram"}, {"type": "tool_call", "id": "c", "name": 5}]
    with_unknown = envelope(bad)
    assert validation_error(with_unknown).path == "$.messages[0].content[1].name"


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"created_at": "yesterday"}, "$.created_at"),
        ({"metadata": []}, "$.metadata"),
        ({"system_prompt": 1}, "$.system_prompt"),
        ({"messages": 5}, "$.messages"),
    ],
    ids=["created_at", "metadata", "system_prompt", "messages"],
)
def test_wrong_type_in_the_envelope(fields: dict[str, object], path: str) -> None:
    doc = json.loads(envelope())
    doc.update(fields)
    assert validation_error(json.dumps(doc)).path == path


def test_content_that_is_not_a_list() -> None:
    assert validation_error(envelope(user() | {"content": "hi"})).path == "$.messages[0].content"


def test_message_that_is_not_an_object() -> None:
    assert validation_error(envelope(user(), 5)).path == "$.messages[1]"


def test_legacy_list_whose_first_item_is_not_an_object() -> None:
    assert validation_error(b"[1]").path == "$[0]"


def test_bad_enum_value() -> None:
    reply = {"type": "assistant", "id": "a", "timestamp": STAMP, "stop_reason": "meh"}
    error = validation_error(envelope(user(), reply))
    assert error.path == "$.messages[1].stop_reason"
    assert "Invalid enum value 'meh'" in str(error)
    call = {"type": "tool_call", "id": "c", "name": "f", "approval": "maybe"}
    reply = {"type": "assistant", "id": "a", "timestamp": STAMP, "content": [call]}
    assert validation_error(envelope(reply)).path == "$.messages[0].content[0].approval"


def test_newer_version() -> None:
    error = validation_error(envelope(version=2))
    assert error.path == "$.version"
    assert "newer" in str(error)


def test_single_message_where_a_session_is_expected() -> None:
    error = validation_error(json.dumps(user()))
    assert error.path == "$"
    assert "single message" in str(error)
    assert "single message" in str(validation_error(b'{"role": "user", "content": "hi"}'))
    assert msgwire.loads(json.dumps(user()), type=Message).text == "hi"  # as the message says


def test_a_list_where_a_message_is_expected() -> None:
    assert "Expected `object`, got `array`" in str(validation_error(b"[]", type=Message))


def test_a_block_of_the_wrong_class() -> None:
    error = validation_error(b'{"type":"tool_call","id":"c","name":"f"}', type=TextBlock)
    assert error.path == "$.type"
    assert "tool_call" in str(error)


def test_a_legacy_system_entry_is_no_message() -> None:
    assert validation_error(b'{"role":"system","content":"x"}', type=Message).path == "$.role"


def test_other_types_report_their_own_error() -> None:
    assert validation_error(b'{"input_tokens":"x"}', type=Usage).path == "$.input_tokens"


def test_bad_legacy_role() -> None:
    error = validation_error(b'[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]')
    assert error.path == "$[1].role"
    assert "wizard" in str(error)


def test_bad_legacy_content() -> None:
    assert validation_error(b'[{"role":"user","content":5}]').path == "$[0].content"


@pytest.mark.parametrize(
    "tool_calls", ['"f"', '["f"]', '[{"id": "c", "function": "f"}]'], ids=["string", "item", "function"]
)
def test_bad_legacy_tool_calls(tool_calls: str) -> None:
    error = validation_error(f'[{{"role":"assistant","content":"","tool_calls":{tool_calls}}}]')
    assert error.path is not None
    assert error.path.startswith("$[0].tool_calls")


@pytest.mark.parametrize(
    ("rows", "path"),
    [
        ([{"kind": "user", "content": "a"}, {"kind": "telepathy", "content": "b"}], "$[1].kind"),
        ([{"kind": "user"}, {"content": "no kind"}], "$[1]"),
        ([{"kind": "user", "data_json": "{not json"}], "$[0].data_json"),
        ([{"kind": "user", "data_json": '"just text"'}], "$[0].data_json"),
        ([{"kind": "tool_call", "data_json": '{"name": "f"}'}], "$[0].data_json"),
        ([{"kind": "tool_result", "data_json": '{"output": "x"}'}], "$[0].data_json.tool_call_id"),
        ([{"kind": "tool_result", "data_json": "[1]"}], "$[0].data_json"),
        ([{"kind": "user", "data_json": '{"content": 5}'}], "$[0].data_json.content"),
    ],
    ids=["kind", "no-kind", "data-not-json", "data-not-object", "call-no-id", "result-no-id", "result-list", "content"],
)
def test_bad_database_rows(rows: list[dict[str, object]], path: str) -> None:
    assert validation_error(json.dumps(rows)).path == path
    with pytest.raises(ValidationError) as info:
        Session.from_rows(rows)
    assert info.value.path == path


def test_validation_error_shows_the_first_errors_and_counts_the_rest() -> None:
    error = ValidationError([(f"$.a[{i}]", "bad") for i in range(5)])
    assert str(error) == "bad - at `$.a[0]`; bad - at `$.a[1]`; bad - at `$.a[2]` (and 2 more)"
    assert error.path == "$.a[0]"


# --- unknown tags: kept, and one warning per tag -------------------------------------------------


def test_unknown_tag_warning_logged_once_per_tag(caplog: pytest.LogCaptureFixture) -> None:
    hologram, smell = f"hologram-{uuid.uuid4().hex}", f"smell-{uuid.uuid4().hex}"
    first = {"type": hologram, "n": 1}
    inner = user()
    inner["content"] = [{"type": smell}, {"type": smell, "again": True}]
    doc = envelope(first, {"type": hologram, "n": 2}, inner)
    with caplog.at_level(logging.WARNING, logger="msgwire"):
        session = msgwire.loads(doc)
        msgwire.loads(doc)  # a second read warns no more
    records = [r for r in caplog.records if r.name == "msgwire"]
    assert len(records) == 2
    assert {r.levelno for r in records} == {logging.WARNING}
    messages = [r.getMessage() for r in records]
    assert any(hologram in m and "message" in m for m in messages)
    assert any(smell in m and "block" in m for m in messages)
    assert msgwire.dumps(session) == doc


def test_unknown_tag_that_is_not_a_string() -> None:
    assert validation_error(envelope({"type": 5})).path == "$.messages[0].type"


# --- the Rust core: DecodeError with an offset, never a panic --------------------------------


def normalize(data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:  # a PanicException is no Exception: it would escape
        msgwire._core.normalize_session(data)
    assert isinstance(info.value, ValueError)
    assert info.value.offset is not None
    assert 0 <= info.value.offset <= len(data)
    return info.value


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b'{"version":1,\n"id": }', 20),
        (b"", 0),
        (b'{"version":1,"id":', 18),  # the end of the input, as on the Python side
        (b'{"version":1,"id":"\xff"}', 19),
        (b'{"version":2,"id":"s"}', 11),  # the version number
    ],
    ids=["missing-value", "empty", "truncated", "utf8", "newer-version"],
)
def test_rust_malformed_json_has_the_byte_offset(data: bytes, offset: int) -> None:
    error = normalize(data)
    assert error.offset == offset
    assert f"(byte {offset})" in str(error)


HOSTILE = {
    "arrays-100000": b"[" * 100_000,
    "objects-100000": b'{"a":' * 100_000,
    "messages-100000": envelope().replace(b'"messages":[]', b'"messages":[' + b"[" * 100_000),
    "closed-arrays-in-message": envelope(0).replace(b"[0]", b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]"),
    "nul": b"\x00",
    "whitespace": b" \n\t ",
    "lone-surrogate": envelope(system_prompt="X").replace(b'"X"', b'"\\ud800"'),
    "bad-escape": envelope(system_prompt="X").replace(b'"X"', b'"\\x41"'),
    "raw-control-char": envelope(system_prompt="X").replace(b'"X"', b'"a\x01b"'),
    "invalid-utf8-top": b"\xff\xfe",
    "overlong-utf8": envelope(system_prompt="X").replace(b'"X"', b'"\xc0\xaf"'),
    "version-huge": envelope().replace(b'"version":1', b'"version":' + b"9" * 400),
    "version-1e400": envelope().replace(b'"version":1', b'"version":1e400'),
    "version-negative": envelope().replace(b'"version":1', b'"version":-1'),
    "duration-1e400": envelope(
        {"type": "tool_result", "id": "t", "timestamp": STAMP, "tool_call_id": "c", "duration_ms": 0}
    ).replace(b'"duration_ms":0', b'"duration_ms":1e400'),
    "start-line-2**70": envelope(user() | {"content": [{"type": "file_reference", "path": "a", "start_line": 2**70}]}),
    "usage-2**64": envelope({"type": "assistant", "id": "a", "timestamp": STAMP, "usage": {"input_tokens": 2**64}}),
    "usage-negative": envelope({"type": "assistant", "id": "a", "timestamp": STAMP, "usage": {"input_tokens": -1}}),
    "newer-version": envelope(version=2),
    "older-version": envelope(version=0),
    "not-an-envelope": b"[]",
    "message-not-object": envelope(5),
    "message-without-type": envelope({"id": "x"}),
    "type-not-string": envelope({"type": 5}),
}


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
def test_rust_hostile_input_is_a_decode_error(data: bytes) -> None:
    normalize(data)


# What Python reads of HOSTILE, and what it must find there: a version below 1 migrates (a
# negative one too), a big int fits a Python int, ``[]`` is the legacy list shape, empty.
PYTHON_READS: dict[str, Callable[[Session], object]] = {
    "version-negative": lambda s: (s.version, s.id, s.messages) == (1, "s", []),
    "older-version": lambda s: (s.version, s.id, s.messages) == (1, "s", []),
    "usage-2**64": lambda s: [m.usage.input_tokens for m in s.messages] == [2**64],  # type: ignore[union-attr]
    "not-an-envelope": lambda s: (s.version, s.messages) == (1, []),
}
TOO_DEEP = {"arrays-100000", "objects-100000", "messages-100000", "closed-arrays-in-message"}


@pytest.mark.parametrize("name", HOSTILE)
def test_python_hostile_input_is_a_decode_error_or_a_session(name: str) -> None:
    """Python reads a few of these (``PYTHON_READS``) and writes back what it read; every other
    one is a DecodeError (a ValueError) saying where: a byte offset inside the input or a JSON
    path, or, for nesting too deep to read, that it is."""
    data = HOSTILE[name]
    if name in PYTHON_READS:
        session = msgwire.loads(data)
        assert PYTHON_READS[name](session), session
        assert msgwire.loads(msgwire.dumps(session)) == session
        return
    with pytest.raises(DecodeError) as info:
        msgwire.loads(data)
    error = info.value
    assert isinstance(error, ValueError)
    if name in TOO_DEEP:
        assert str(error) == "JSON is malformed: nested too deeply"
    elif error.offset is not None:
        assert 0 <= error.offset <= len(data)
        assert f"(byte {error.offset})" in str(error)
    else:
        assert error.path is not None
        assert error.path.startswith("$")
        assert f"`{error.path}`" in str(error)


def test_rust_schema_error_points_into_the_offending_message() -> None:
    first = json.dumps(user(), separators=(",", ":"))
    data = envelope(user(), {"type": "tool_result", "id": "t", "timestamp": STAMP})
    error = normalize(data)
    assert "missing field `tool_call_id`" in str(error)
    start = data.index(first.encode()) + len(first) + 1  # the second message starts after `,`
    assert start < error.offset <= len(data)  # inside or at the end of it, not relative to it
    assert "line 1 column" not in str(error)


def test_rust_keeps_deep_nesting_inside_opaque_json() -> None:
    """Deep nesting where the core does not look (metadata, an unknown object) is kept as is."""
    deep = b"[" * 10_000 + b"]" * 10_000
    data = envelope({"type": "hologram", "x": 0}, metadata=0)
    data = data.replace(b'"metadata":0', b'"metadata":' + deep).replace(b'"x":0', b'"x":' + deep)
    assert msgwire._core.normalize_session(data) == data
