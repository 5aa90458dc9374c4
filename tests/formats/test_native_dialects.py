"""msgwire.formats: request bodies for Ollama's native ``/api/chat``, Gemini
``generateContent`` and OpenAI Responses, and back.

Responses bodies are validated with the OpenAI SDK's own param types (pydantic ``TypeAdapter``
over ``openai.types.responses.ResponseInputParam`` and ``FunctionToolParam``). The Ollama and
Gemini SDKs are not dependencies: bodies are checked against the shapes of ``ollama/ollama
api/types.go`` (``Message``: ``role``, ``content``, ``thinking``, ``images``, ``tool_calls``,
``tool_name``) and of ``google/genai types.py`` (``Content``: ``role``, ``parts``; ``Part``: one of
``text``, ``functionCall``, ``functionResponse``, ``inlineData``, ``fileData``, ... with
``thought`` and ``thoughtSignature``), each provider rule has its own test, and the fixture
corpus in ``tests/fixtures/requests/<dialect>/`` round-trips: ``to_request(from_request(body)) ==
body``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import example, given
from openai.types.responses import FunctionToolParam, ResponseInputParam
from pydantic import TypeAdapter

import msgwire
from msgwire import (
    AssistantMessage,
    Base64Source,
    DecodeError,
    ImageBlock,
    PathSource,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UrlSource,
    UserMessage,
    assistant,
    tool_result,
    user,
)
from msgwire.formats import MISSING_RESULT, convert_request, from_request, to_request
from msgwire.types import LossReport, Policy, Tool
from tests._support.strategies import examples, sessions

FIXTURES = Path(__file__).parents[1] / "fixtures" / "requests"
DIALECTS = ("ollama", "gemini", "openai-responses")

_OLLAMA_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content", "images"},
    "assistant": {"role", "content", "thinking", "tool_calls"},
    "tool": {"role", "content", "images", "tool_name"},
}


def _check_ollama(body: dict[str, Any]) -> None:
    assert set(body) <= {"messages", "tools"}
    for message in body["messages"]:
        assert set(message) <= _OLLAMA_KEYS[message["role"]], message
        assert isinstance(message["content"], str)
        assert all(isinstance(i, str) for i in message.get("images", []))
        assert isinstance(message.get("thinking", ""), str)
        for call in message.get("tool_calls", []):
            assert set(call) == {"function"}
            assert set(call["function"]) == {"name", "arguments"}
            assert isinstance(call["function"]["name"], str)
            assert isinstance(call["function"]["arguments"], dict)
        if message["role"] == "tool":
            assert isinstance(message["tool_name"], str)
    assert [m["role"] for m in body["messages"]].count("system") <= 1
    for tool in body.get("tools", []):
        assert tool["type"] == "function"
        assert set(tool["function"]) <= {"name", "description", "parameters"}


_GEMINI_DATA = {"text", "functionCall", "functionResponse", "inlineData", "fileData"}
_GEMINI_OTHER = {"executableCode", "codeExecutionResult"}


def _check_gemini_part(part: dict[str, Any], role: str) -> None:
    data = set(part) - {"thought", "thoughtSignature"}
    assert len(data) == 1, part
    assert data <= _GEMINI_DATA | _GEMINI_OTHER, part
    assert isinstance(part.get("thoughtSignature", ""), str)
    assert part.get("thought", True) is True
    if "thought" in part:
        assert "text" in part
    if "functionCall" in part:
        assert role == "model"
        call = part["functionCall"]
        assert set(call) <= {"name", "args", "id"}
        assert isinstance(call["name"], str)
        assert isinstance(call["args"], dict)
    if "functionResponse" in part:
        assert role == "user"
        response = part["functionResponse"]
        assert set(response) <= {"name", "id", "response"}
        assert isinstance(response["name"], str)
        assert isinstance(response["response"], dict)
    if "inlineData" in part:
        assert set(part["inlineData"]) == {"mimeType", "data"}
    if "fileData" in part:
        assert set(part["fileData"]) == {"mimeType", "fileUri"}


def _check_gemini(body: dict[str, Any]) -> None:
    assert set(body) <= {"systemInstruction", "contents", "tools"}
    if "systemInstruction" in body:
        parts = body["systemInstruction"]["parts"]
        assert all(set(p) == {"text"} for p in parts)
    roles = [c["role"] for c in body["contents"]]
    assert set(roles) <= {"user", "model"}
    assert all(a != b for a, b in itertools.pairwise(roles)), roles  # merged: roles alternate
    for content in body["contents"]:
        assert set(content) == {"role", "parts"}
        assert content["parts"]
        for part in content["parts"]:
            _check_gemini_part(part, content["role"])
    for group in body.get("tools", []):
        assert set(group) == {"functionDeclarations"}
        for decl in group["functionDeclarations"]:
            assert set(decl) <= {"name", "description", "parameters"}


_RESPONSES = TypeAdapter(ResponseInputParam)
_RESPONSES_TOOLS = TypeAdapter(list[FunctionToolParam])


def _drain(value: Any) -> Any:
    """Pydantic validates ``Iterable[...]`` fields lazily: iterate every one."""
    if isinstance(value, dict):
        return {k: _drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)):
        return [_drain(v) for v in value]
    return value


def _sdk_view(item: dict[str, Any]) -> dict[str, Any]:
    """The item as the SDK's output-item types describe it. msgwire keeps no item ids: the SDK
    marks ``id`` (and an output message's ``status``, an output text's ``annotations``) as
    required, where the API takes input items without them; fill placeholders to check the
    rest of the shape."""
    if item.get("type") == "reasoning" and "id" not in item:
        return {**item, "id": "rs_placeholder"}
    if item.get("type") == "message" and item.get("role") == "assistant" and "id" not in item:
        content = [{"annotations": [], **part} for part in item["content"]]
        return {**item, "id": "msg_placeholder", "status": "completed", "content": content}
    return item


def _check_responses(body: dict[str, Any]) -> None:
    assert set(body) <= {"instructions", "input", "tools"}
    assert isinstance(body.get("instructions", ""), str)
    _drain(_RESPONSES.validate_python([_sdk_view(item) for item in body["input"]]))
    if "tools" in body:
        _drain(_RESPONSES_TOOLS.validate_python(body["tools"]))


def check(body: dict[str, Any], dialect: str) -> dict[str, Any]:
    """Check a body against the provider's request shapes (the SDK's types for Responses);
    returns it."""
    if dialect == "ollama":
        _check_ollama(body)
    elif dialect == "gemini":
        _check_gemini(body)
    else:
        assert dialect == "openai-responses"
        _check_responses(body)
    return body


def convert(source: Any, dialect: str, **options: Any) -> tuple[dict[str, Any], LossReport]:
    converted = convert_request(source, dialect, **options)
    body, report = converted.dict(), converted.report
    return check(body, dialect), report


def kinds(report: LossReport) -> list[tuple[int, int | None, str, str]]:
    return [(e.message, e.block, e.kind, e.action) for e in report.entries]


CALL_A = ToolCallBlock(id="call_a", name="get_weather", arguments='{"city": "Paris"}')
CALL_B = ToolCallBlock(id="call_b", name="get_time", arguments='{"tz":"Europe/Paris"}')
PNG = Base64Source(media_type="image/png", data="iVBORw0KGgo=")


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
    msgwire.validate(session)
    again, report = convert(session, dialect)
    assert again == body
    assert not report
    assert to_request(from_request(path.read_bytes(), dialect), dialect) == body
    assert to_request(msgwire.loads(msgwire.dumps(session)), dialect) == body


@pytest.mark.parametrize("dialect", DIALECTS)
def test_fixture_corpus_is_present(dialect: str) -> None:
    assert len(list((FIXTURES / dialect).glob("*.json"))) >= 5


# --- Ollama rules -------------------------------------------------------------------------------


def test_ollama_system_prompt_is_the_first_message() -> None:
    body, _ = convert(Session(system_prompt="be brief", messages=[user("hi")]), "ollama")
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    body, _ = convert([user("hi")], "ollama", system_prompt="override")
    assert body["messages"] == [{"role": "system", "content": "override"}, {"role": "user", "content": "hi"}]


def test_ollama_tool_arguments_are_objects() -> None:
    empty = ToolCallBlock(id="call_e", name="noop", arguments="")
    body, report = convert([user("q"), assistant([CALL_A, empty])], "ollama")
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "noop", "arguments": {}}},
        ],
    }
    # no results: placeholders (tests/formats/test_wellformed.py)
    assert [e.action for e in report.entries] == ["placeholder", "placeholder"]


def test_ollama_malformed_arguments_are_wrapped_or_refused() -> None:
    bad = ToolCallBlock(id="call_x", name="f", arguments='{"q": ', malformed=True)
    listed = ToolCallBlock(id="call_y", name="f", arguments="[1, 2]")
    body, report = convert([assistant([bad, listed])], "ollama")
    calls = body["messages"][0]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == [{"_raw": '{"q": '}, {"_raw": "[1, 2]"}]
    assert [k for k in kinds(report) if k[2] == "arguments"] == [
        (0, 0, "arguments", "fallback"),
        (0, 1, "arguments", "fallback"),
    ]
    with pytest.raises(DecodeError, match="call_x"):
        to_request([assistant([bad])], "ollama", policy=Policy(malformed_arguments="error"))


def test_ollama_one_named_tool_message_per_result_right_after_the_call() -> None:
    messages = [
        user("weather and time?"),
        assistant([CALL_A, CALL_B]),
        user("hurry"),
        tool_result("call_b", "12:00"),
        ToolResultMessage(tool_call_id="call_a", tool_name="weather_v2", content=[TextBlock(text="rain")]),
    ]
    body, report = convert(messages, "ollama")
    assert body["messages"][2:] == [
        {"role": "tool", "content": "12:00", "tool_name": "get_time"},
        {"role": "tool", "content": "rain", "tool_name": "get_weather"},  # the call's: Ollama pairs by name
        {"role": "user", "content": "hurry"},
    ]
    assert not report


def test_ollama_tool_results_have_no_error_flag() -> None:
    failed = ToolResultMessage(tool_call_id="call_a", is_error=True, status="error", content=[TextBlock(text="boom")])
    body, report = convert([user("q"), assistant([CALL_A]), failed], "ollama")
    assert body["messages"][2] == {"role": "tool", "content": "boom", "tool_name": "get_weather"}
    assert kinds(report) == [(2, None, "is_error", "strip")]


def test_ollama_text_blocks_join_into_one_content_string() -> None:
    body, _ = convert([user([TextBlock(text="one"), TextBlock(text="two")])], "ollama")
    assert body["messages"] == [{"role": "user", "content": "one\n\ntwo"}]


def test_ollama_images_are_base64_only() -> None:
    blocks: list[Any] = [
        TextBlock(text="look"),
        ImageBlock(source=PNG),
        ImageBlock(source=UrlSource(url="https://example.com/a.jpg"), recognized_text="A CAT"),
        ImageBlock(source=UrlSource(url="https://example.com/b.jpg")),
        ImageBlock(source=PathSource(path="/home/me/scan.png"), recognized_text="INVOICE #42"),
    ]
    body, report = convert([user(blocks)], "ollama")
    assert body["messages"][0] == {
        "role": "user",
        "content": "\n\n".join(
            [
                "look",
                '<image url="https://example.com/a.jpg">\nA CAT\n</image>',
                '<image path="/home/me/scan.png">\nINVOICE #42\n</image>',
            ]
        ),
        "images": ["iVBORw0KGgo="],
    }
    assert kinds(report) == [(0, 2, "image", "to_text"), (0, 3, "image", "drop"), (0, 4, "image", "to_text")]
    body, report = convert([user(blocks)], "ollama", policy=Policy(images="drop"))
    assert body["messages"][0] == {"role": "user", "content": "look"}


def test_ollama_images_in_tool_results() -> None:
    result = ToolResultMessage(tool_call_id="call_a", content=[TextBlock(text="chart"), ImageBlock(source=PNG)])
    body, report = convert([user("q"), assistant([CALL_A]), result], "ollama")
    assert body["messages"][2] == {
        "role": "tool",
        "content": "chart",
        "images": ["iVBORw0KGgo="],
        "tool_name": "get_weather",
    }
    assert not report


def test_ollama_native_thinking_is_sent_without_signature() -> None:
    made = AssistantMessage(provider="ollama", content=[ThinkingBlock(thinking="hmm"), TextBlock(text="42")])
    body, report = convert([user("q"), made], "ollama")
    assert body["messages"][1] == {"role": "assistant", "content": "42", "thinking": "hmm"}
    assert not report


def test_ollama_foreign_thinking_follows_the_policy() -> None:
    made = AssistantMessage(
        provider="anthropic",
        content=[ThinkingBlock(thinking="plan", signature="SIG"), ThinkingBlock(redacted="R"), TextBlock(text="a")],
    )
    body, report = convert([user("q"), made], "ollama")
    assert body["messages"][1] == {"role": "assistant", "content": "a"}
    assert kinds(report) == [(1, 0, "thinking", "drop"), (1, 1, "redacted_thinking", "drop")]
    body, report = convert([user("q"), made], "ollama", policy=Policy(thinking="keep", redacted_thinking="keep"))
    assert body["messages"][1] == {"role": "assistant", "content": "a", "thinking": "plan"}
    assert kinds(report) == [(1, 0, "signature", "strip"), (1, 1, "redacted_thinking", "drop")]
    body, _ = convert([user("q"), made], "ollama", policy=Policy(thinking="to_text"))
    # marked text stands apart from the reply's text by a blank line
    assert body["messages"][1]["content"] == "<thinking>\nplan\n</thinking>\n\na"


def test_ollama_empty_messages_are_dropped_and_reported() -> None:
    body, report = convert([user("q"), assistant([ThinkingBlock(redacted="R")]), user("again")], "ollama")
    assert [m["role"] for m in body["messages"]] == ["user", "user"]
    assert kinds(report)[-1] == (1, None, "message", "drop")


def test_ollama_tools_declarations() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body, _ = convert(
        [user("hi")], "ollama", tools=[Tool(name="get_weather", description="Weather", parameters=schema)]
    )
    assert body["tools"] == [
        {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": schema}}
    ]


def test_ollama_provider_parts_of_another_dialect_are_dropped() -> None:
    part = UnknownBlock(b'{"type":"provider_part","dialect":"anthropic","part":{"type":"document"}}', "provider_part")
    body, report = convert([user([part, TextBlock(text="hi")])], "ollama")
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert kinds(report) == [(0, 0, "unknown_block", "drop")]


# --- reading Ollama requests --------------------------------------------------------------------


def test_ollama_from_request_makes_ids_and_matches_results_by_name() -> None:
    body = json.loads((FIXTURES / "ollama" / "tool_calls.json").read_bytes())
    session = from_request(body, "ollama")
    call_message = session.messages[1]
    assert isinstance(call_message, AssistantMessage)
    assert call_message.provider == "ollama"
    calls = [b for b in call_message.content if isinstance(b, ToolCallBlock)]
    assert [c.id for c in calls] == ["call_1_0", "call_1_1"]
    assert calls[0].parsed_arguments() == {"city": "Paris", "format": "celsius"}
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.tool_name) for r in results] == [
        ("call_1_0", "get_current_weather"),
        ("call_1_1", "get_current_weather"),
    ]
    msgwire.validate(session)


def test_ollama_from_request_keeps_given_ids_and_string_arguments() -> None:
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c9", "function": {"name": "f", "arguments": '{"a": 1}'}},
                    {"function": {"name": "g"}},
                ],
            },
            {"role": "tool", "content": "G", "tool_call_id": "call_0_1"},
            {"role": "tool", "content": "F", "tool_call_id": "c9"},
        ]
    }
    session = from_request(body, "ollama")
    calls = session.messages[0].content  # type: ignore[union-attr]
    assert [(c.id, c.arguments) for c in calls] == [("c9", '{"a": 1}'), ("call_0_1", "{}")]  # type: ignore[union-attr]
    results = session.messages[1:]
    assert [(r.tool_call_id, r.tool_name) for r in results] == [("call_0_1", "g"), ("c9", "f")]  # type: ignore[union-attr]
    assert to_request(session, "ollama")["messages"][0]["tool_calls"][0]["function"]["arguments"] == {"a": 1}


def test_ollama_from_request_guesses_image_media_types() -> None:
    body = json.loads((FIXTURES / "ollama" / "vision.json").read_bytes())
    session = from_request(body, "ollama")
    images = [b for m in session.messages if isinstance(m, UserMessage) for b in m.content if isinstance(b, ImageBlock)]
    assert [i.source.media_type for i in images] == ["image/png", "image/jpeg"]  # type: ignore[union-attr]
    odd = from_request({"messages": [{"role": "user", "content": "", "images": ["AAAA"]}]}, "ollama")
    assert odd.messages[0].content[0].source.media_type == "application/octet-stream"  # type: ignore[union-attr]


def test_ollama_from_request_thinking_and_system() -> None:
    body = json.loads((FIXTURES / "ollama" / "thinking_tool_use.json").read_bytes())
    session = from_request(body, "ollama")
    assert session.system_prompt == "You can call tools. Think before answering."
    first = session.messages[1]
    assert isinstance(first, AssistantMessage)
    assert [type(b).__name__ for b in first.content] == ["ThinkingBlock", "ToolCallBlock"]
    assert first.content[0] == ThinkingBlock(thinking="The user wants a product; I should call the calculator tool.")


def test_ollama_from_request_errors_have_offsets() -> None:
    with pytest.raises(DecodeError) as err:
        from_request(b'{"messages": [{"role": "critic", "content": "x"}]}', "ollama")
    assert err.value.offset == 14
    with pytest.raises(DecodeError):
        from_request(b'{"messages": [{"role": "user", "content": 3}]}', "ollama")


# --- any session --------------------------------------------------------------------------------


@examples(150)
@given(sessions)
def test_any_session_converts_for_each_new_dialect(session: Session) -> None:
    for dialect in DIALECTS:
        body, report = convert(session, dialect)
        for entry in report.entries:
            assert 0 <= entry.message < len(session.messages)
        sendable = [m for m in session.messages if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))]
        if not sendable and dialect == "ollama":
            assert len(body["messages"]) == (0 if session.system_prompt is None else 1)
        if not sendable and dialect == "gemini":
            assert body["contents"] == []
        if not sendable and dialect == "openai-responses":
            assert body["input"] == []


# found by hypothesis: an empty signed thinking block ends one Gemini model turn, text opens the next
_CARRIER_THEN_TEXT = Session(
    messages=[
        UserMessage(content=[]),
        UserMessage(content=[]),
        AssistantMessage(content=[ThinkingBlock(thinking="", signature="0")]),
        AssistantMessage(content=[TextBlock(text="0")]),
    ]
)


@examples(100)
@given(sessions)
@example(_CARRIER_THEN_TEXT)
def test_any_session_round_trips_through_its_own_request(session: Session) -> None:
    for dialect in DIALECTS:
        body = to_request(session, dialect)
        assert check(to_request(from_request(body, dialect), dialect), dialect) == body


# --- Gemini rules -------------------------------------------------------------------------------


def _gemini_session(name: str) -> Session:
    return from_request(json.loads((FIXTURES / "gemini" / name).read_bytes()), "gemini")


def test_gemini_system_instruction_and_roles() -> None:
    body, report = convert(Session(system_prompt="be brief", messages=[user("hi"), assistant("yo")]), "gemini")
    assert body == {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}],
    }
    assert not report
    body, _ = convert([user("hi")], "gemini")
    assert "systemInstruction" not in body


def test_gemini_consecutive_contents_are_merged() -> None:
    messages = [user("a"), user("b"), assistant("c"), assistant([CALL_A]), tool_result("call_a", "rain"), user("d")]
    body, _ = convert(messages, "gemini")
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][0]["parts"] == [{"text": "a"}, {"text": "b"}]
    assert body["contents"][1]["parts"] == [
        {"text": "c"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_a"}},
    ]
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "id": "call_a", "response": {"result": "rain"}}},
        {"text": "d"},
    ]


def test_gemini_call_args_are_objects() -> None:
    empty = ToolCallBlock(id="call_e", name="noop", arguments="")
    bad = ToolCallBlock(id="call_x", name="f", arguments='{"q": ', malformed=True)
    body, report = convert([assistant([empty, bad])], "gemini")
    assert [p["functionCall"]["args"] for p in body["contents"][0]["parts"]] == [{}, {"_raw": '{"q": '}]
    assert [k for k in kinds(report) if k[2] == "arguments"] == [(0, 1, "arguments", "fallback")]
    with pytest.raises(DecodeError, match="call_x"):
        to_request([assistant([bad])], "gemini", policy=Policy(malformed_arguments="error"))


def test_gemini_made_up_ids_are_not_sent() -> None:
    made_up = ToolCallBlock(id="call_9b2c4f1a8e01_0", name="ping", arguments="{}")
    body, _ = convert([user("q"), assistant([made_up]), tool_result("call_9b2c4f1a8e01_0", "pong")], "gemini")
    assert body["contents"][1]["parts"] == [{"functionCall": {"name": "ping", "args": {}}}]
    assert body["contents"][2]["parts"] == [{"functionResponse": {"name": "ping", "response": {"result": "pong"}}}]


def test_gemini_results_are_wrapped_as_result_or_error() -> None:
    failed = ToolResultMessage(tool_call_id="call_b", is_error=True, status="error", content=[TextBlock(text="boom")])
    named = ToolResultMessage(tool_call_id="call_a", tool_name="weather_v2", content=[TextBlock(text="x")])
    body, report = convert([user("q"), assistant([CALL_A, CALL_B]), failed, named], "gemini")
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "get_time", "id": "call_b", "response": {"error": "boom"}}},
        {"functionResponse": {"name": "get_weather", "id": "call_a", "response": {"result": "x"}}},  # the call's name
    ]
    assert not report


def test_gemini_structured_responses_are_kept_whole() -> None:
    session = _gemini_session("structured_response.json")
    result = session.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_name == "find_restaurants"
    assert isinstance(result.content[0], UnknownBlock)
    response = to_request(session, "gemini")["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response["count"] == 2
    # another dialect does not know the part: dropped, and the result sent empty
    report = convert_request(session, "anthropic").report
    assert (2, 0, "unknown_block", "drop") in kinds(report)


def test_gemini_images_inline_and_file_data() -> None:
    blocks: list[Any] = [
        ImageBlock(source=PNG),
        ImageBlock(source=UrlSource(url="https://example.com/a.webp?x=1")),
        ImageBlock(source=UrlSource(url="gs://bucket/photo")),
        ImageBlock(source=PathSource(path="/tmp/scan.png"), recognized_text="INVOICE"),
    ]
    body, report = convert([user(blocks)], "gemini")
    assert body["contents"][0]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"mimeType": "image/webp", "fileUri": "https://example.com/a.webp?x=1"}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/photo"}},
        {"text": '<image path="/tmp/scan.png">\nINVOICE\n</image>'},
    ]
    assert kinds(report) == [(0, 3, "image", "to_text")]


def test_gemini_images_in_tool_results_become_text() -> None:
    result = ToolResultMessage(
        tool_call_id="call_a", content=[ImageBlock(source=PNG, recognized_text="chart: up"), TextBlock(text="ok")]
    )
    body, report = convert([user("q"), assistant([CALL_A]), result], "gemini")
    response = body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {"result": '<image media_type="image/png">\nchart: up\n</image>\n\nok'}
    assert kinds(report) == [(2, 0, "image", "to_text")]


def test_gemini_signatures_go_on_the_next_part() -> None:
    made = AssistantMessage(
        provider="gemini",
        content=[
            ThinkingBlock(signature="S1"),
            TextBlock(text="checking"),
            ThinkingBlock(signature="S2"),
            CALL_A,
            ThinkingBlock(signature="S3"),
        ],
    )
    body, report = convert([user("q"), made], "gemini")
    assert body["contents"][1]["parts"] == [
        {"text": "checking", "thoughtSignature": "S1"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_a"}, "thoughtSignature": "S2"},
        {"text": "", "thoughtSignature": "S3"},
    ]
    # no result: a placeholder (tests/formats/test_wellformed.py)
    assert kinds(report) == [(1, 3, "tool_result", "placeholder")]


def test_gemini_thinking_text_only_by_policy() -> None:
    made = AssistantMessage(
        provider="gemini", content=[ThinkingBlock(thinking="plan", signature="T"), TextBlock(text="a")]
    )
    body, report = convert([user("q"), made], "gemini")
    assert body["contents"][1]["parts"] == [{"text": "a"}]
    assert kinds(report) == [(1, 0, "thinking", "drop")]
    body, report = convert([user("q"), made], "gemini", policy=Policy(thinking="keep"))
    assert body["contents"][1]["parts"] == [{"text": "plan", "thought": True, "thoughtSignature": "T"}, {"text": "a"}]
    assert not report


def test_gemini_foreign_signatures_are_never_sent() -> None:
    session = from_request(json.loads((FIXTURES / "anthropic" / "thinking_tool_use.json").read_bytes()), "anthropic")
    body, report = convert(session, "gemini")
    assert "thoughtSignature" not in json.dumps(body)
    assert (1, 0, "thinking", "drop") in kinds(report)
    assert (1, 1, "redacted_thinking", "drop") in kinds(report)
    body, report = convert(session, "gemini", policy=Policy(thinking="keep"))
    assert "thoughtSignature" not in json.dumps(body)
    assert body["contents"][1]["parts"][0]["thought"] is True
    assert (1, 0, "signature", "strip") in kinds(report)


def test_gemini_tools_declarations() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body, _ = convert(
        [user("hi")], "gemini", tools=[Tool(name="get_weather", description="W", parameters=schema), Tool(name="ping")]
    )
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "W", "parameters": schema},
                {"name": "ping", "parameters": {"type": "object", "properties": {}}},
            ]
        }
    ]


# --- reading Gemini requests --------------------------------------------------------------------


def test_gemini_from_request_signatures_become_empty_thinking_blocks() -> None:
    session = _gemini_session("function_calling_gemini3.json")
    model = session.messages[1]
    assert isinstance(model, AssistantMessage)
    assert model.provider == "gemini"
    assert [type(b).__name__ for b in model.content] == ["ThinkingBlock", "ToolCallBlock", "ToolCallBlock"]
    assert model.content[0] == ThinkingBlock(signature="EpIDCo8DAdHtim9aEw4DvTjPpXxbYv6nM+bl0s2Dj3KQlJ0a6Yv3X1gZf8o=")
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.tool_name, r.is_error) for r in results] == [
        ("96c1su3s", "get_current_weather", False),
        ("k2m9x7qa", "get_current_weather", True),
    ]
    assert results[1].status == "error"


def test_gemini_from_request_matches_results_without_ids_by_name() -> None:
    session = _gemini_session("function_calling_no_ids.json")
    calls = [b for m in session.messages if isinstance(m, AssistantMessage) for b in m.content]
    ids = [b.id for b in calls if isinstance(b, ToolCallBlock)]
    assert ids == ["call_1_0", "call_5_0"]
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ids
    assert results[1].content == []
    assert isinstance(session.messages[-1], UserMessage)


def test_gemini_from_request_keeps_unknown_parts_whole() -> None:
    session = _gemini_session("images.json")
    content = session.messages[0].content  # type: ignore[union-attr]
    assert [type(b).__name__ for b in content] == ["TextBlock", "ImageBlock", "ImageBlock", "UnknownBlock"]
    session = _gemini_session("executable_code.json")
    parts = [b for b in session.messages[1].content if isinstance(b, UnknownBlock)]  # type: ignore[union-attr]
    assert len(parts) == 2
    body, report = convert(session, "ollama")
    assert body["messages"][1] == {
        "role": "assistant",
        # a reply's texts run together, as a transcoded stream of it would
        "content": "I'll compute it with code.The sum of the first 50 primes is 5117.",
    }
    assert [k[2:] for k in kinds(report)] == [("unknown_block", "drop")] * 2


def test_gemini_from_request_errors_have_offsets() -> None:
    with pytest.raises(DecodeError) as err:
        from_request(b'{"contents": [{"role": "critic", "parts": []}]}', "gemini")
    assert err.value.offset == 14
    with pytest.raises(DecodeError):
        from_request(b'{"messages": []}', "gemini")


# --- OpenAI Responses rules ---------------------------------------------------------------------


def _responses_session(name: str) -> Session:
    return from_request(json.loads((FIXTURES / "openai-responses" / name).read_bytes()), "openai-responses")


def test_responses_instructions_and_input_messages() -> None:
    body, report = convert(
        Session(system_prompt="be brief", messages=[user("hi"), assistant("yo")]), "openai-responses"
    )
    assert body == {
        "instructions": "be brief",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            # no item id known: the easy form the SDK's EasyInputMessageParam takes
            {"role": "assistant", "content": "yo"},
        ],
    }
    assert not report
    body, _ = convert([user("hi")], "openai-responses")
    assert "instructions" not in body


def test_responses_assistant_items_follow_the_block_order() -> None:
    made = AssistantMessage(
        provider="openai",
        content=[
            TextBlock(text="a", item_id="msg_1"),
            TextBlock(text="b", item_id="msg_1"),
            msgspec.structs.replace(CALL_A, item_id="fc_1"),
            TextBlock(text="c"),
            CALL_B,
        ],
    )
    body, _ = convert([user("q"), made], "openai-responses")
    # the parts of one item are one output message, with its id; text without one is an easy message
    assert body["input"][1:] == [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "a", "annotations": []},
                {"type": "output_text", "text": "b", "annotations": []},
            ],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_a",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"role": "assistant", "content": "c"},
        {"type": "function_call", "call_id": "call_b", "name": "get_time", "arguments": '{"tz":"Europe/Paris"}'},
        {"type": "function_call_output", "call_id": "call_a", "output": MISSING_RESULT},
        {"type": "function_call_output", "call_id": "call_b", "output": MISSING_RESULT},
    ]


def test_responses_function_calls_keep_arguments_text_exactly() -> None:
    bad = ToolCallBlock(id="call_x", name="f", arguments='{"q": ', malformed=True)
    body, report = convert([user("q"), assistant([CALL_A, bad])], "openai-responses")
    assert body["input"][1:] == [
        {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "call_x", "name": "f", "arguments": '{"q": '},
        {"type": "function_call_output", "call_id": "call_a", "output": MISSING_RESULT},
        {"type": "function_call_output", "call_id": "call_x", "output": MISSING_RESULT},
    ]
    # no results: placeholders (tests/formats/test_wellformed.py)
    assert [e.action for e in report.entries] == ["placeholder", "placeholder"]


def test_responses_outputs_follow_their_call_without_error_flag() -> None:
    failed = ToolResultMessage(tool_call_id="call_a", is_error=True, status="error", content=[TextBlock(text="boom")])
    messages = [user("q"), assistant([CALL_A, CALL_B]), user("hurry"), tool_result("call_b", "12:00"), failed]
    body, report = convert(messages, "openai-responses")
    assert body["input"][3:5] == [
        {"type": "function_call_output", "call_id": "call_b", "output": "12:00"},
        {"type": "function_call_output", "call_id": "call_a", "output": "boom"},
    ]
    assert body["input"][5]["role"] == "user"
    assert kinds(report) == [(4, None, "is_error", "strip")]


def test_responses_images_are_input_images() -> None:
    blocks: list[Any] = [
        ImageBlock(source=UrlSource(url="https://example.com/a.jpg")),
        ImageBlock(source=PNG),
        ImageBlock(source=PathSource(path="/tmp/x.png")),
    ]
    body, report = convert([user(blocks)], "openai-responses")
    assert body["input"][0]["content"] == [
        {"type": "input_image", "image_url": "https://example.com/a.jpg", "detail": "auto"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
    ]
    assert kinds(report) == [(0, 2, "image", "drop")]


def test_responses_reasoning_items_from_native_thinking() -> None:
    made = AssistantMessage(
        provider="openai",
        content=[
            ThinkingBlock(thinking="plan", signature="ENC1", item_id="rs_1"),
            ThinkingBlock(signature="ENC2", item_id="rs_2"),
            ThinkingBlock(thinking="no id", signature="ENC3"),
            TextBlock(text="a"),
        ],
    )
    body, report = convert([user("q"), made], "openai-responses")
    assert body["input"][1:] == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "ENC1",
        },
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "ENC2"},
        {"role": "assistant", "content": "a"},
    ]
    # a reasoning item needs the id of the item it came in: without one, the policy decides
    assert kinds(report) == [(1, 2, "thinking", "drop")]
    body, report = convert([user("q"), made], "openai-responses", policy=Policy(thinking="to_text"))
    assert body["input"][3] == {"role": "assistant", "content": "<thinking>\nno id\n</thinking>"}
    assert kinds(report) == [(1, 2, "thinking", "to_text")]


def test_responses_foreign_thinking_follows_the_policy() -> None:
    session = from_request(json.loads((FIXTURES / "anthropic" / "thinking_tool_use.json").read_bytes()), "anthropic")
    body, report = convert(session, "openai-responses")
    assert not [i for i in body["input"] if i.get("type") == "reasoning"]
    assert (1, 0, "thinking", "drop") in kinds(report)
    # kept: a reasoning item needs an item id, which Anthropic's thinking has not: its text
    body, report = convert(session, "openai-responses", policy=Policy(thinking="keep"))
    assert not [i for i in body["input"] if i.get("type") == "reasoning"]
    assert (1, 0, "thinking", "to_text") in kinds(report)
    body, _ = convert(session, "openai-responses", policy=Policy(thinking="to_text"))
    texts = [i["content"] for i in body["input"] if i.get("role") == "assistant"]
    assert "<thinking>\nThe calculator returned 12231.\n</thinking>" in texts


def test_responses_tools_declarations() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body, _ = convert(
        [user("hi")], "openai-responses", tools=[Tool(name="get_weather", description="W", parameters=schema)]
    )
    assert body["tools"] == [
        {"type": "function", "name": "get_weather", "description": "W", "parameters": schema, "strict": False}
    ]


def test_responses_from_request_reads_reasoning_as_thinking() -> None:
    session = _responses_session("reasoning_encrypted.json")
    assert session.system_prompt == "Use the calculator for arithmetic."
    first = session.messages[1]
    assert isinstance(first, AssistantMessage)
    assert first.provider == "openai"
    assert [type(b).__name__ for b in first.content] == ["ThinkingBlock", "ToolCallBlock"]
    thinking = first.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.signature is not None
    assert thinking.signature.startswith("gAAAA")
    result = session.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_name == "calculator"
    msgwire.validate(session)


def test_responses_from_request_keeps_what_it_cannot_hold_whole() -> None:
    session = _responses_session("provider_items.json")
    user_blocks = session.messages[0].content  # type: ignore[union-attr]
    assert [type(b).__name__ for b in user_blocks] == ["TextBlock", "UnknownBlock", "ImageBlock"]
    assert user_blocks[2].detail == "high"  # type: ignore[union-attr]
    made = session.messages[1]
    assert isinstance(made, AssistantMessage)
    # the reasoning of two summaries is kept whole; the web search is a server tool call; the
    # message item is text with its item id and citation
    names = ["UnknownBlock", "ServerToolCallBlock", "TextBlock", "ToolCallBlock"]
    assert [type(b).__name__ for b in made.content] == names
    text = made.content[2]
    assert isinstance(text, TextBlock)
    assert text.item_id == "msg_68c1f2a7e1f08190c3"
    [citation] = text.citations
    assert (citation.kind, citation.url, citation.cited_text) == ("url_citation", "https://example.com/acme", "[1]")
    # to another dialect: what it cannot carry is dropped and reported
    _, report = convert(session, "gemini")
    dropped = [k[2] for k in kinds(report) if k[3] == "drop"]
    assert sorted(dropped) == ["citation", "server_tool_call"] + ["unknown_block"] * 3
    assert sum(1 for k in kinds(report) if k[2] == "image_detail") == 1


def test_responses_from_request_string_input_and_system_messages() -> None:
    session = from_request({"input": "hello"}, "openai-responses")
    assert session.messages[0].content == [TextBlock(text="hello")]  # type: ignore[union-attr]
    body = {
        "instructions": "a",
        "input": [
            {"role": "developer", "content": "b"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo"},
        ],
    }
    session = from_request(body, "openai-responses")
    assert session.system_prompt == "a\n\nb"
    assert session.messages[0].content == [TextBlock(text="hi")]  # type: ignore[union-attr]


def test_responses_from_request_errors_have_offsets() -> None:
    with pytest.raises(DecodeError) as err:
        from_request(b'{"input": [{"role": "critic", "content": "x"}]}', "openai-responses")
    assert err.value.offset == 11
    with pytest.raises(DecodeError):
        from_request(b'{"input": [{"type": "function_call_output", "output": "x"}]}', "openai-responses")
