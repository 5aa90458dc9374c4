"""msgwire.formats: request bodies for OpenAI Chat and Anthropic Messages, and back.

Every body written here is validated against the providers' own SDK param types (pydantic
``TypeAdapter`` over ``openai.types.chat.ChatCompletionMessageParam`` and
``anthropic.types.MessageParam``), each provider rule has its own test, and the fixture corpus
in ``tests/fixtures/requests/<dialect>/`` round-trips: ``to_request(from_request(body)) == body``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from anthropic.types import MessageParam, ToolParam
from hypothesis import given
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from pydantic import TypeAdapter

import msgwire
from msgwire import (
    AssistantMessage,
    Base64Source,
    DecodeError,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    PathSource,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UrlSource,
    UserMessage,
    assistant,
    system_control,
    tool_result,
    user,
)
from msgwire.formats import convert_request, from_request, to_request, to_request_json
from msgwire.types import LossReport, Policy, Tool
from tests._support.sdk import drain
from tests._support.strategies import examples, sessions

FIXTURES = Path(__file__).parents[1] / "fixtures" / "requests"
DIALECTS = ("openai", "anthropic")

_OPENAI = TypeAdapter(list[ChatCompletionMessageParam])
_ANTHROPIC = TypeAdapter(list[MessageParam])
_OPENAI_TOOLS = TypeAdapter(list[ChatCompletionFunctionToolParam])
_ANTHROPIC_TOOLS = TypeAdapter(list[ToolParam])


def check(body: dict[str, Any], dialect: str) -> dict[str, Any]:
    """Validate a body with the provider SDK's own types; returns it."""
    if dialect == "openai":
        assert set(body) <= {"messages", "tools"}
        drain(_OPENAI.validate_python(body["messages"]))
        if "tools" in body:
            drain(_OPENAI_TOOLS.validate_python(body["tools"]))
    else:
        assert set(body) <= {"system", "messages", "tools"}
        assert isinstance(body.get("system", ""), str)
        drain(_ANTHROPIC.validate_python(body["messages"]))
        if "tools" in body:
            drain(_ANTHROPIC_TOOLS.validate_python(body["tools"]))
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in itertools.pairwise(roles)), roles  # strict alternation
    return body


def convert(source: Any, dialect: str, **options: Any) -> tuple[dict[str, Any], LossReport]:
    converted = convert_request(source, dialect, **options)
    body, report = converted.dict(), converted.report
    return check(body, dialect), report


def kinds(report: LossReport) -> list[tuple[int, int | None, str, str]]:
    return [(e.message, e.block, e.kind, e.action) for e in report.entries]


CALL_A = ToolCallBlock(id="call_a", name="get_weather", arguments='{"city": "Paris"}')
CALL_B = ToolCallBlock(id="call_b", name="get_time", arguments='{"tz":"Europe/Paris"}')


# --- fixtures: provider -> canonical -> same provider ----------------------------------------


def _fixtures() -> list[Any]:
    return [
        pytest.param(dialect, path, id=f"{dialect}/{path.stem}")
        for dialect in DIALECTS
        for path in sorted((FIXTURES / dialect).glob("*.json"))
    ]


@pytest.mark.parametrize(("dialect", "path"), _fixtures())
def test_fixture_round_trips(dialect: str, path: Path) -> None:
    body = json.loads(path.read_bytes())
    check(body, dialect)
    session = from_request(body, dialect)
    role = "developer" if dialect == "openai" and body["messages"][0]["role"] == "developer" else "system"
    again, report = convert(session, dialect, system_role=role)
    assert again == body
    assert not report
    # the bytes form reads the same, and the session survives msgwire's own codec
    assert to_request(from_request(path.read_bytes(), dialect), dialect, system_role=role) == body
    assert to_request(msgwire.loads(msgwire.dumps(session)), dialect, system_role=role) == body


def test_fixture_corpus_is_present() -> None:
    for dialect in DIALECTS:
        assert len(list((FIXTURES / dialect).glob("*.json"))) >= 5


def test_from_request_keeps_ids_signatures_and_order() -> None:
    body = json.loads((FIXTURES / "anthropic" / "thinking_tool_use.json").read_bytes())
    session = from_request(body, "anthropic")
    first = session.messages[1]
    assert isinstance(first, AssistantMessage)
    assert first.provider == "anthropic"
    assert [type(b).__name__ for b in first.content] == ["ThinkingBlock", "ThinkingBlock", "ToolCallBlock"]
    thinking, redacted, call = first.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.signature == body["messages"][1]["content"][0]["signature"]
    assert isinstance(redacted, ThinkingBlock)
    assert redacted.redacted
    assert not redacted.thinking
    assert isinstance(call, ToolCallBlock)
    assert call.id == "toolu_01NRLabsLyVHQPKP7eTGvE5P"
    assert call.parsed_arguments() == {"expression": "27 * 453"}
    result = session.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_name == "calculator"
    assert len({m.id for m in session.messages if not isinstance(m, UnknownMessage)}) == len(session.messages)
    msgwire.validate(session)


def test_from_request_openai_tool_messages() -> None:
    body = json.loads((FIXTURES / "openai" / "parallel_tool_calls.json").read_bytes())
    session = from_request(json.dumps(body), "openai")
    assert session.system_prompt == "You can call tools."
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.tool_name) for r in results] == [
        ("call_8Qh3fN2pLk1mZ0aV", "get_weather"),
        ("call_X7bT9wQe4RzY2uJc", "get_weather"),
    ]
    msgwire.validate(session)


def test_from_request_errors_have_offsets() -> None:
    with pytest.raises(DecodeError) as err:
        from_request(b'{"messages": [{"role": "critic", "content": "x"}]}', "anthropic")
    assert err.value.offset == 14
    with pytest.raises(DecodeError):
        from_request(b'{"messages": 3}', "openai")
    with pytest.raises(ValueError, match="unknown dialect"):
        from_request({"messages": []}, "cohere")


# --- OpenAI rules -------------------------------------------------------------------------------


def test_openai_system_prompt_first_as_system_or_developer() -> None:
    session = Session(system_prompt="be brief", messages=[user("hi")])
    body, _ = convert(session, "openai")
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    body, _ = convert(session, "openai", system_role="developer")
    assert body["messages"][0] == {"role": "developer", "content": "be brief"}
    body, _ = convert([user("hi")], "openai", system_prompt="other")
    assert body["messages"][0] == {"role": "system", "content": "other"}
    body, _ = convert([user("hi")], "openai")
    assert body == {"messages": [{"role": "user", "content": "hi"}]}


def test_openai_one_tool_message_per_result_right_after_the_call() -> None:
    messages = [
        user("weather and time?"),
        assistant([TextBlock(text="checking"), CALL_A, CALL_B]),
        user("quick please"),  # arrived before the results: they are moved up
        tool_result("call_b", "14:02"),
        tool_result("call_a", "rain"),
    ]
    body, report = convert(messages, "openai")
    assert body["messages"] == [
        {"role": "user", "content": "weather and time?"},
        {
            "role": "assistant",
            "content": "checking",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "content": "14:02"},
        {"role": "tool", "tool_call_id": "call_a", "content": "rain"},
        {"role": "user", "content": "quick please"},
    ]
    assert not report


def test_openai_arguments_text_kept_exactly_even_malformed() -> None:
    broken = ToolCallBlock(id="c", name="f", arguments='{"a": [1, ', malformed=True)
    body, report = convert([assistant([broken]), tool_result("c", "?")], "openai")
    assert body["messages"][0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": [1, '}}],
    }
    assert not report


def test_openai_tool_results_are_text_only_and_have_no_error_flag() -> None:
    image = ImageBlock(source=UrlSource(url="https://x/shot.png"), recognized_text="Login failed")
    messages = [
        assistant([CALL_A]),
        ToolResultMessage(tool_call_id="call_a", content=[TextBlock(text="screen:"), image], is_error=True),
    ]
    body, report = convert(messages, "openai")
    assert body["messages"][1] == {
        "role": "tool",
        "tool_call_id": "call_a",
        "content": [
            {"type": "text", "text": "screen:"},
            {"type": "text", "text": '<image url="https://x/shot.png">\nLogin failed\n</image>'},
        ],
    }
    assert kinds(report) == [(1, 1, "image", "to_text"), (1, None, "is_error", "strip")]


def test_openai_empty_result_sends_its_error_message() -> None:
    from msgwire import ToolError

    messages = [assistant([CALL_A]), ToolResultMessage(tool_call_id="call_a", error=ToolError(message="timeout"))]
    body, _ = convert(messages, "openai")
    assert body["messages"][1] == {"role": "tool", "tool_call_id": "call_a", "content": "timeout"}


# --- Anthropic rules ----------------------------------------------------------------------------


def test_anthropic_system_is_top_level_and_optional() -> None:
    body, _ = convert(Session(system_prompt="be brief", messages=[user("hi")]), "anthropic")
    assert body == {"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}
    body, _ = convert([user("hi")], "anthropic")
    assert body == {"messages": [{"role": "user", "content": "hi"}]}


def test_anthropic_consecutive_results_merge_into_one_user_turn() -> None:
    messages = [
        user("weather and time?"),
        assistant([CALL_A, CALL_B]),
        tool_result("call_a", "rain"),
        ToolResultMessage(tool_call_id="call_b", content=[TextBlock(text="clock down")], is_error=True, status="error"),
    ]
    body, report = convert(messages, "anthropic")
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_b", "name": "get_time", "input": {"tz": "Europe/Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "rain"},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "clock down", "is_error": True},
            ],
        },
    ]
    assert not report


def test_anthropic_strict_alternation_merges_consecutive_messages() -> None:
    messages = [user("one"), user([TextBlock(text="two"), TextBlock(text="three")]), assistant("a"), assistant("b")]
    body, _ = convert(messages, "anthropic")
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {"type": "text", "text": "three"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]


def test_anthropic_user_text_after_results_joins_their_turn() -> None:
    messages = [assistant([CALL_A]), tool_result("call_a", "rain"), user("and tomorrow?")]
    body, _ = convert(messages, "anthropic")
    assert body["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "rain"},
            {"type": "text", "text": "and tomorrow?"},
        ],
    }


def test_anthropic_thinking_first_with_signature() -> None:
    message = AssistantMessage(
        provider="anthropic",
        content=[TextBlock(text="Let me check."), ThinkingBlock(thinking="need data", signature="SIG=="), CALL_A],
    )
    body, report = convert([user("q"), message, tool_result("call_a", "x")], "anthropic")
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "need data", "signature": "SIG=="},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert not report


def test_anthropic_redacted_thinking_kept_when_native_dropped_when_foreign() -> None:
    redacted = ThinkingBlock(redacted="EmwKAhgB")
    native = AssistantMessage(provider="anthropic", content=[redacted, TextBlock(text="ok")])
    body, report = convert([user("q"), native], "anthropic")
    assert body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "EmwKAhgB"},
        {"type": "text", "text": "ok"},
    ]
    assert not report
    foreign = AssistantMessage(provider="gemini", content=[redacted, TextBlock(text="ok")])
    body, report = convert([user("q"), foreign], "anthropic")
    assert body["messages"][1]["content"] == "ok"
    assert kinds(report) == [(1, 0, "redacted_thinking", "drop")]
    body, report = convert([user("q"), foreign], "anthropic", policy=Policy(redacted_thinking="keep"))
    assert body["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "EmwKAhgB"}


def test_anthropic_thinking_without_signature_is_not_sent_as_thinking() -> None:
    cut = AssistantMessage(provider="anthropic", content=[ThinkingBlock(thinking="half a tho"), TextBlock(text="a")])
    body, report = convert([user("q"), cut], "anthropic")
    assert body["messages"][1]["content"] == "a"
    assert report.entries[0].reason == "thinking without a signature"


def test_anthropic_tool_input_is_an_object() -> None:
    calls = [
        ToolCallBlock(id="t0", name="f", arguments=""),
        ToolCallBlock(id="t1", name="f", arguments='  {"nested": {"k": [1, 2.5, null]}} '),
        ToolCallBlock(id="t2", name="f", arguments='{"cut": "mid', malformed=True),
        ToolCallBlock(id="t3", name="f", arguments="[1, 2]"),
    ]
    body, report = convert([assistant(list(calls))], "anthropic")
    inputs = [b["input"] for b in body["messages"][0]["content"]]
    assert inputs == [{}, {"nested": {"k": [1, 2.5, None]}}, {"_raw": '{"cut": "mid'}, {"_raw": "[1, 2]"}]
    assert [k for k in kinds(report) if k[2] == "arguments"] == [
        (0, 2, "arguments", "fallback"),
        (0, 3, "arguments", "fallback"),
    ]
    assert len(report.by_kind("tool_result")) == 4  # no results: placeholders (tests/formats/test_wellformed.py)
    with pytest.raises(DecodeError, match='"t2"'):
        to_request([assistant(list(calls))], "anthropic", policy=Policy(malformed_arguments="error"))


def test_anthropic_arguments_embedded_verbatim() -> None:
    call = ToolCallBlock(id="t", name="f", arguments='{"b": 1.50, "a": "\\u00e9"}')
    raw = to_request_json([assistant([call])], "anthropic")
    assert b'"input":{"b": 1.50, "a": "\\u00e9"}' in raw


# --- shared rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_system_control_messages_are_never_sent(dialect: str) -> None:
    messages = [user("a"), system_control("mode_change", old="plan", new="act"), assistant("b")]
    body, report = convert(messages, dialect)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert not report


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unknown_messages_and_blocks_are_dropped_and_reported(dialect: str) -> None:
    messages = [
        UnknownMessage(b'{"type":"hologram","z":1}', "hologram"),
        user([TextBlock(text="hi"), UnknownBlock(b'{"type":"smell","odor":"rose"}', "smell")]),
    ]
    body, report = convert(messages, dialect)
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert kinds(report) == [(0, None, "unknown_message", "drop"), (1, 1, "unknown_block", "drop")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_orphan_results_are_dropped_and_reported(dialect: str) -> None:
    body, report = convert([user("hi"), tool_result("nobody", "x"), assistant("ok")], dialect)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert kinds(report) == [(1, None, "tool_result", "drop")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_images_url_base64_and_recognized_text_only(dialect: str) -> None:
    png = Base64Source(media_type="image/png", data="iVBORw0KGgo=")
    blocks: list[Any] = [
        ImageBlock(source=UrlSource(url="https://example.com/a.jpg")),
        ImageBlock(source=png),
        ImageBlock(source=PathSource(path="/home/me/scan.png"), recognized_text="INVOICE #42"),
        ImageBlock(source=PathSource(path="/home/me/blank.png")),
    ]
    body, report = convert([user(blocks)], dialect)
    content = body["messages"][0]["content"]
    text = {"type": "text", "text": '<image path="/home/me/scan.png">\nINVOICE #42\n</image>'}
    if dialect == "openai":
        assert content == [
            {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            text,
        ]
    else:
        assert content == [
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            text,
        ]
    assert kinds(report) == [(0, 2, "image", "to_text"), (0, 3, "image", "drop")]
    # the policy can send recognized text instead of every image
    body, report = convert([user(blocks)], dialect, policy=Policy(images="to_text"))
    assert body["messages"][0]["content"] == '<image path="/home/me/scan.png">\nINVOICE #42\n</image>'


def test_anthropic_unsupported_image_type_becomes_text() -> None:
    bmp = ImageBlock(source=Base64Source(media_type="image/bmp", data="Qk0="), recognized_text="chart")
    body, report = convert([user([bmp])], "anthropic")
    assert body["messages"][0]["content"] == '<image media_type="image/bmp">\nchart\n</image>'
    assert kinds(report) == [(0, 0, "image", "to_text")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_file_references_and_mcp_resources_are_marked_text(dialect: str) -> None:
    blocks: list[Any] = [
        FileReferenceBlock(
            path="src/app.py", start_line=3, end_line=4, resolved_content="x = 1\ny = 2", status="resolved"
        ),
        FileReferenceBlock(path="missing.txt", status="error", error="not found"),
        MCPResourceBlock(
            server_name="github", resource_uri="repo://acme/README.md", content="# Acme", mime_type="text/markdown"
        ),
    ]
    body, report = convert([user(blocks)], dialect)
    assert [p["text"] for p in body["messages"][0]["content"]] == [
        '<file path="src/app.py" lines="3-4">\n3 | x = 1\n4 | y = 2\n</file>',
        '<file path="missing.txt" status="error" error="not found"/>',
        '<mcp_resource server="github" uri="repo://acme/README.md" mime_type="text/markdown">\n# Acme\n</mcp_resource>',
    ]
    assert [e.action for e in report.entries] == ["to_text"] * 3
    body, report = convert(
        [user(blocks), user("rest")], dialect, policy=Policy(file_reference="drop", mcp_resource="drop")
    )
    assert kinds(report)[-1] == (0, None, "message", "drop")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tools_declarations(dialect: str) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tools = [Tool(name="get_weather", description="Current weather", parameters=schema), Tool(name="ping")]
    body, _ = convert([user("hi")], dialect, tools=tools)
    if dialect == "openai":
        assert body["tools"] == [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "Current weather", "parameters": schema},
            },
            {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
        ]
    else:
        assert body["tools"] == [
            {"name": "get_weather", "description": "Current weather", "input_schema": schema},
            {"name": "ping", "input_schema": {"type": "object", "properties": {}}},
        ]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_to_request_json_is_the_same_content(dialect: str) -> None:
    session = Session(system_prompt="s", messages=[user("a"), assistant([CALL_A]), tool_result("call_a", "b")])
    raw = to_request_json(session, dialect)
    assert msgspec.json.decode(raw) == to_request(session, dialect)
    converted = convert_request(session, dialect)
    raw, report = converted.body, converted.report
    assert isinstance(raw, bytes)
    assert isinstance(report, LossReport)


def test_provider_parts_go_back_only_to_their_dialect() -> None:
    body = json.loads((FIXTURES / "anthropic" / "document_part.json").read_bytes())
    session = from_request(body, "anthropic")
    part = session.messages[0].content[0]  # type: ignore[union-attr]
    assert isinstance(part, UnknownBlock)
    assert part.type == "provider_part"
    openai_body, report = convert(session, "openai")
    assert openai_body["messages"][1] == {"role": "user", "content": "What color is the grass?"}
    assert kinds(report) == [(0, 0, "unknown_block", "drop")]
    assert "another dialect (anthropic)" in report.entries[0].reason


def test_unknown_dialects_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        to_request([user("a")], "cohere")
    with pytest.raises(ValueError, match="system_role"):
        to_request([user("a")], "openai", system_role="root")  # type: ignore[call-overload]


# --- across providers ---------------------------------------------------------------------------


def _anthropic_session() -> Session:
    body = json.loads((FIXTURES / "anthropic" / "thinking_tool_use.json").read_bytes())
    return from_request(body, "anthropic")


def test_anthropic_thinking_to_openai_dropped_by_default() -> None:
    body, report = convert(_anthropic_session(), "openai")
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "toolu_01NRLabsLyVHQPKP7eTGvE5P",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expression":"27 * 453"}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "assistant", "content": "27 \u00d7 453 = 12,231."}
    assert kinds(report) == [
        (1, 0, "thinking", "drop"),
        (1, 1, "redacted_thinking", "drop"),
        (3, 0, "thinking", "drop"),
    ]


def test_anthropic_thinking_to_openai_as_text_by_policy() -> None:
    body, report = convert(_anthropic_session(), "openai", policy=Policy(thinking="to_text"))
    assert body["messages"][3]["content"] == [
        {"type": "text", "text": "<thinking>\nThe calculator returned 12231.\n</thinking>"},
        {"type": "text", "text": "27 \u00d7 453 = 12,231."},
    ]
    assert kinds(report) == [
        (1, 0, "thinking", "to_text"),
        (1, 1, "redacted_thinking", "drop"),
        (3, 0, "thinking", "to_text"),
    ]
    assert "signature" not in json.dumps(body)


def test_openai_made_session_to_anthropic() -> None:
    body = json.loads((FIXTURES / "openai" / "parallel_tool_calls.json").read_bytes())
    anthropic_body, report = convert(from_request(body, "openai"), "anthropic")
    assert anthropic_body["system"] == "You can call tools."
    assert anthropic_body["messages"][2]["content"][1]["tool_use_id"] == "call_X7bT9wQe4RzY2uJc"
    assert not report


def test_foreign_thinking_to_anthropic_by_policy() -> None:
    made = AssistantMessage(
        provider="gemini", content=[ThinkingBlock(thinking="plan", signature="g-sig"), TextBlock(text="a")]
    )
    body, report = convert([user("q"), made], "anthropic")
    assert body["messages"][1]["content"] == "a"
    assert kinds(report) == [(1, 0, "thinking", "drop")]
    body, _ = convert([user("q"), made], "anthropic", policy=Policy(thinking="to_text"))
    assert body["messages"][1]["content"][0] == {"type": "text", "text": "<thinking>\nplan\n</thinking>"}
    body, _ = convert([user("q"), made], "anthropic", policy=Policy(thinking="keep"))
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "plan", "signature": "g-sig"}


# --- any session --------------------------------------------------------------------------------


@examples(150)
@given(sessions)
def test_any_session_converts_and_passes_the_sdk_types(session: Session) -> None:
    for dialect in DIALECTS:
        body, report = convert(session, dialect)
        for entry in report.entries:
            assert 0 <= entry.message < len(session.messages)
        sendable = [m for m in session.messages if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))]
        if not sendable:
            assert len(body["messages"]) == (1 if dialect == "openai" and session.system_prompt is not None else 0)


@examples(100)
@given(sessions)
def test_any_session_round_trips_through_its_own_request(session: Session) -> None:
    """What a dialect writes, it reads back into a session that writes the same body."""
    for dialect in DIALECTS:
        body = to_request(session, dialect)
        assert check(to_request(from_request(body, dialect), dialect), dialect) == body
