"""msgwire.validate: each rule passing and failing, with the JSON path of every problem, and all
problems of one object collected in one ValidationError."""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec
import pytest
from hypothesis import given

import msgwire
from msgwire import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    PathSource,
    Request,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UrlSource,
    UserMessage,
    ValidationError,
)
from tests._support.strategies import examples, sessions


def errors(obj: Any, **options: Any) -> list[tuple[str, str]]:
    """The (path, message) pairs validate reports; [] when it passes."""
    try:
        msgwire.validate(obj, **options)
    except ValidationError as exc:
        found = exc
    else:
        return []
    assert found.path == found.errors[0][0]
    return found.errors


def paths(obj: Any, **options: Any) -> list[str]:
    return [path for path, _ in errors(obj, **options)]


def session(*messages: Any) -> Session:
    return Session(messages=list(messages))


def call(id: str = "c1", name: str = "f", **fields: Any) -> ToolCallBlock:  # noqa: A002
    return ToolCallBlock(id=id, name=name, **fields)


def reply(*blocks: Any, **fields: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), **fields)


def file(path: str = "src/a.py", **fields: Any) -> UserMessage:
    return UserMessage(content=[FileReferenceBlock(path=path, **fields)])


# --- text -------------------------------------------------------------------------------------


def test_text_must_not_be_empty_unless_allowed() -> None:
    empty = session(msgwire.user("hi"), UserMessage(content=[TextBlock(text="ok"), TextBlock(text="")]))
    assert errors(empty) == [("$.messages[1].content[1].text", "text must not be empty")]
    assert errors(empty, allow_empty_text=True) == []
    assert errors(session(msgwire.user(" "))) == []  # whitespace is text


# --- tool calls -------------------------------------------------------------------------------


def test_valid_tool_call_and_result() -> None:
    ok = session(
        msgwire.user("weather?"),
        reply(call(arguments='{"city": "Paris"}')),
        msgwire.tool_result("c1", "18°C"),
    )
    assert errors(ok) == []


@pytest.mark.parametrize(
    ("block", "path"),
    [(call(id=""), "$.messages[0].content[0].id"), (call(name=""), "$.messages[0].content[0].name")],
    ids=["id", "name"],
)
def test_tool_call_id_and_name_must_not_be_empty(block: ToolCallBlock, path: str) -> None:
    assert paths(session(reply(block))) == [path]


@pytest.mark.parametrize("arguments", ['{"a": 1', "{'a': 1}", "nope", '{"a": 1} x'])
def test_tool_call_arguments_must_be_json(arguments: str) -> None:
    ((path, message),) = errors(session(reply(call(arguments=arguments))))
    assert path == "$.messages[0].content[0].arguments"
    assert "not valid JSON" in message
    assert "malformed=True" in message
    assert errors(session(reply(call(arguments=arguments, malformed=True)))) == []  # kept as received


@pytest.mark.parametrize("arguments", ["", "  ", "{}", "[]", "1", '"x"', '{"a": [1, {"b": null}]}'])
def test_tool_call_arguments_that_pass(arguments: str) -> None:
    assert errors(session(reply(call(arguments=arguments)))) == []


def test_tool_result_must_answer_an_earlier_tool_call() -> None:
    assert paths(session(msgwire.tool_result("c1", "x"))) == ["$.messages[0].tool_call_id"]
    later = session(msgwire.user("go"), msgwire.tool_result("c1", "x"), reply(call()))
    ((path, message),) = errors(later)
    assert path == "$.messages[1].tool_call_id"
    assert "'c1'" in message
    other = session(reply(call(id="c1")), msgwire.tool_result("c2", "x"))
    assert paths(other) == ["$.messages[1].tool_call_id"]
    assert paths(session(reply(call()), msgwire.tool_result("", "x"))) == ["$.messages[1].tool_call_id"]


def test_one_call_may_be_answered_by_several_results() -> None:
    assert errors(session(reply(call()), msgwire.tool_result("c1", "a"), msgwire.tool_result("c1", "b"))) == []


def test_a_lone_tool_result_message_is_not_checked_against_calls() -> None:
    assert errors(msgwire.tool_result("c1", "x")) == []
    assert paths(msgwire.tool_result("", "x")) == ["$.tool_call_id"]


def test_tool_call_block_inside_a_user_message() -> None:
    ((path, message),) = errors(session(UserMessage(content=[TextBlock(text="hi"), call()])))
    assert path == "$.messages[0].content[1]"
    assert "tool_call" in message
    assert "user" in message


@pytest.mark.parametrize(
    ("message", "block"),
    [
        (UserMessage, ThinkingBlock(thinking="hm")),
        (ToolResultMessage, call()),
        (AssistantMessage, FileReferenceBlock(path="a")),
    ],
    ids=["thinking-in-user", "tool_call-in-tool_result", "file-in-assistant"],
)
def test_blocks_each_message_may_not_hold(message: type, block: Any) -> None:
    fields = {"tool_call_id": "c1"} if message is ToolResultMessage else {}
    found = paths(session(reply(call()), message(content=[block], **fields)))
    assert found == ["$.messages[1].content[0]"]


def test_duration_must_not_be_negative() -> None:
    result = ToolResultMessage(tool_call_id="c1", duration_ms=-1.0)
    assert paths(session(reply(call()), result)) == ["$.messages[1].duration_ms"]


# --- file references ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [{}, {"start_line": 1}, {"start_line": 1, "end_line": 1}, {"start_line": 3, "end_line": 90}],
    ids=["no-lines", "start", "one-line", "range"],
)
def test_file_reference_that_passes(fields: dict[str, int]) -> None:
    assert errors(session(file(**fields))) == []
    assert errors(session(file("/abs/path.txt", **fields))) == []


@pytest.mark.parametrize(
    ("path", "problems"),
    [
        ("", ["must not be empty"]),
        ("a/./b", ["normalized (as 'a/b')"]),
        ("a//b", ["normalized"]),
        ("a/", ["normalized"]),
        ("./a", ["normalized"]),
        ("a\\b", ["normalized"]),
        ("..", ["escape"]),
        ("../secret", ["escape"]),
        ("a/../../secret", ["normalized", "escape"]),
    ],
)
def test_file_reference_path_rules(path: str, problems: list[str]) -> None:
    found = errors(session(file(path)))
    assert [p for p, _ in found] == ["$.messages[0].content[0].path"] * len(problems)
    for (_, message), expected in zip(found, problems, strict=True):
        assert expected in message


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"start_line": 0}, "start_line"),
        ({"start_line": -3, "end_line": 4}, "start_line"),
        ({"start_line": 5, "end_line": 4}, "end_line"),
        ({"end_line": 4}, "end_line"),
    ],
    ids=["zero", "negative", "end-before-start", "end-alone"],
)
def test_file_reference_line_rules(fields: dict[str, int], path: str) -> None:
    assert paths(session(file(**fields))) == [f"$.messages[0].content[0].{path}"]


# --- other blocks and messages --------------------------------------------------------------------


def test_image_confidence_within_0_and_1() -> None:
    for confidence in (0.0, 0.5, 1.0):
        assert errors(ImageBlock(source=UrlSource(url="u"), confidence=confidence)) == []
    for confidence in (-0.1, 1.5, math.nan):
        assert paths(ImageBlock(source=UrlSource(url="u"), confidence=confidence)) == ["$.confidence"]


def test_mcp_resource_names_must_not_be_empty() -> None:
    assert paths(MCPResourceBlock(server_name="", resource_uri="")) == ["$.server_name", "$.resource_uri"]
    assert errors(MCPResourceBlock(server_name="docs", resource_uri="docs://a")) == []


def test_message_id_and_control_must_not_be_empty() -> None:
    assert paths(msgwire.user("hi", id="")) == ["$.id"]
    assert paths(SystemControlMessage(control="")) == ["$.control"]
    assert errors(msgwire.system_control("mode_change", old="a", new="b")) == []


def test_unknown_objects_are_opaque_and_pass() -> None:
    unknown = UnknownMessage(b'{"type":"hologram"}', "hologram")
    assert errors(session(unknown, UserMessage(content=[UnknownBlock(b'{"type":"smell"}', "smell")]))) == []
    assert errors(unknown) == []
    assert errors(UnknownBlock(b'{"type":"smell"}', "smell")) == []


def test_something_that_is_no_block() -> None:
    assert errors(UserMessage(content=["just a string"])) == [  # type: ignore[list-item]
        ("$.content[0]", "a str block cannot be part of a user message"),
        ("$.content[0]", "expected a content block, got str"),
    ]


# --- enums (Literal fields) in range ----------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        (AssistantMessage(stop_reason="meh"), "$.stop_reason"),  # type: ignore[arg-type]
        (UserMessage(source="telepathy"), "$.source"),  # type: ignore[arg-type]
        (ToolResultMessage(tool_call_id="c", status="maybe"), "$.status"),  # type: ignore[arg-type]
        (call(approval="perhaps"), "$.approval"),  # type: ignore[arg-type]
        (FileReferenceBlock(path="a", status="lost"), "$.status"),  # type: ignore[arg-type]
        (ImageBlock(source=UrlSource(url="u"), recognition_mode="smell"), "$.recognition_mode"),  # type: ignore[arg-type]
        (ImageBlock(source=UrlSource(url="u"), mode_used="auto"), "$.mode_used"),  # type: ignore[arg-type]
    ],
    ids=["stop_reason", "source", "status", "approval", "file-status", "recognition_mode", "mode_used"],
)
def test_enum_value_out_of_range(obj: Any, path: str) -> None:
    ((found, message),) = errors(obj)
    assert found == path
    assert "is not one of" in message


def test_enum_values_in_range_pass() -> None:
    for stop in ("end_turn", "length", "tool_use", "content_filter", "refusal", "pause", "error", "aborted", "unknown"):
        assert errors(AssistantMessage(stop_reason=stop)) == []  # type: ignore[arg-type]
    assert errors(ImageBlock(source=PathSource(path="a.png"), recognition_mode="ocr", mode_used="ocr")) == []


# --- requests -------------------------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [0, 0.0, 1, 2.0, None])
def test_request_temperature_in_range(temperature: float | None) -> None:
    assert errors(Request(model="m", temperature=temperature)) == []


@pytest.mark.parametrize("temperature", [-0.01, 2.01, math.nan, math.inf])
def test_request_temperature_out_of_range(temperature: float) -> None:
    assert paths(Request(model="m", temperature=temperature)) == ["$.temperature"]


@pytest.mark.parametrize(("max_tokens", "ok"), [(1, True), (100_000, True), (0, False), (-5, False)])
def test_request_max_tokens_positive(max_tokens: int, ok: bool) -> None:
    assert paths(Request(model="m", max_tokens=max_tokens)) == ([] if ok else ["$.max_tokens"])


def test_request_other_rules_and_its_messages() -> None:
    assert paths(Request(model="")) == ["$.model"]
    assert paths(Request(model="m", top_p=1.5)) == ["$.top_p"]
    assert paths(Request(model="m", messages=[msgwire.user("")])) == ["$.messages[0].content[0].text"]
    assert paths(Request(model="m", messages=[msgwire.user("")]), messages=False) == []  # settings only
    assert paths(Request(model="m", stop=["END", ""])) == ["$.stop"]
    assert paths(Request(model="m", reasoning=msgwire.Reasoning(budget_tokens=0))) == ["$.reasoning.budget_tokens"]


def test_request_tools_and_tool_choice() -> None:
    grep = msgwire.Tool(name="grep")
    assert paths(Request(model="m", tools=[grep, grep, msgwire.Tool(name="")])) == [
        "$.tools[1].name",
        "$.tools[2].name",
    ]
    assert paths(Request(model="m", tools=[grep], tool_choice=msgwire.NamedTool(name="grep"))) == []
    assert paths(Request(model="m", tools=[grep], tool_choice=msgwire.NamedTool(name="sed"))) == ["$.tool_choice"]
    assert paths(Request(model="m", tool_choice="required")) == ["$.tool_choice"]
    assert paths(Request(model="m", tool_choice="none")) == []
    assert paths(Request(model="m", tools=[grep], tool_choice="grep")) == ["$.tool_choice"]  # type: ignore[arg-type]


# --- what validate accepts, and every error at once ----------------------------------------------


def test_list_of_messages_and_single_block() -> None:
    assert paths([msgwire.user(""), msgwire.tool_result("c9", "x")]) == ["$[0].content[0].text", "$[1].tool_call_id"]
    assert paths(TextBlock(text="")) == ["$.text"]
    assert errors(TextBlock(text="")) == [("$.text", "text must not be empty")]


def test_all_problems_are_collected_in_one_error() -> None:
    bad = Session(
        messages=[
            UserMessage(content=[TextBlock(text=""), call(id="", name="", arguments="{")]),
            reply(FileReferenceBlock(path="../x", start_line=0), stop_reason="meh"),  # type: ignore[arg-type]
            msgwire.tool_result("nope", "x"),
        ]
    )
    with pytest.raises(ValidationError) as info:
        msgwire.validate(bad)
    error = info.value
    assert isinstance(error, msgwire.DecodeError)
    assert [path for path, _ in error.errors] == [
        "$.messages[0].content[0].text",
        "$.messages[0].content[1]",
        "$.messages[0].content[1].id",
        "$.messages[0].content[1].name",
        "$.messages[0].content[1].arguments",
        "$.messages[1].stop_reason",
        "$.messages[1].content[0]",
        "$.messages[1].content[0].path",
        "$.messages[1].content[0].start_line",
        "$.messages[2].tool_call_id",
    ]
    assert error.path == "$.messages[0].content[0].text"
    assert str(error).endswith("(and 7 more)")


_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _resolve(doc: Any, path: str) -> bool:
    """Whether a JSON path of validate names a place that exists in the written document."""
    assert path.startswith("$")
    node = doc
    for key, index in _STEP.findall(path[1:]):
        if key:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        else:
            if not isinstance(node, list) or int(index) >= len(node):
                return False
            node = node[int(index)]
    return True


@examples(80)
@given(sessions)
def test_every_reported_path_points_into_the_written_document(value: Session) -> None:
    """On arbitrary sessions validate only ever raises ValidationError, and each of its paths
    leads to a value that dumps writes."""
    doc = msgspec.json.decode(msgwire.dumps(value))
    for path, message in errors(value):
        assert message
        assert _resolve(doc, path), path
