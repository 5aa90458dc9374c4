"""Legacy shapes load transparently as a v1 Session: bare role/content lists, database rows,
object-valued tool arguments, older envelopes; and Session.to_rows()/from_rows() both ways."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given

import msgwire
from msgwire import (
    AssistantMessage,
    Message,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
)
from tests._support.strategies import examples, sessions

ROOT = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2025, 5, 6, 7, 8, 9, tzinfo=dt.UTC)


def load(doc: object) -> Session:
    """What loads makes of a legacy document given as Python data."""
    return msgwire.loads(json.dumps(doc))


def test_role_content_list_with_system_entry_becomes_system_prompt() -> None:
    session = load(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
        ]
    )
    assert session.system_prompt == "be brief"
    assert session.version == 1
    user, reply = session.messages
    assert type(user) is UserMessage
    assert user.content == [TextBlock(text="hi")]
    assert type(reply) is AssistantMessage
    assert reply.text == "hello"
    assert user.id != reply.id  # fresh ids and timestamps for entries that had none
    assert user.timestamp.tzinfo is not None


def test_several_system_and_developer_entries_are_joined() -> None:
    session = load(
        [
            {"role": "system", "content": "one"},
            {"role": "developer", "content": [{"type": "text", "text": "two"}]},
            {"role": "user", "content": "hi"},
        ]
    )
    assert session.system_prompt == "one\n\ntwo"
    assert len(session.messages) == 1


def test_role_content_as_a_list_of_text_parts() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
    (user,) = load([{"role": "user", "content": ["plain", {"type": "text", "text": "typed"}, image]}]).messages
    assert user.content[:2] == [TextBlock(text="plain"), TextBlock(text="typed")]
    other = user.content[2]
    assert type(other) is UnknownBlock  # kept, not dropped: it is written back as it was
    assert other.type == "image_url"
    assert other.data() == image


def test_empty_and_null_content_give_no_blocks() -> None:
    session = load([{"role": "user", "content": ""}, {"role": "assistant", "content": None}])
    assert [m.content for m in session.messages] == [[], []]


def test_assistant_tool_calls_in_openai_shape_and_tool_role() -> None:
    session = load(
        [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"city": "Paris"}'}},
                    {"id": "c2", "type": "function", "function": {"name": "now", "arguments": {"tz": "UTC", "n": 1}}},
                    {"id": "c3", "function": {"name": "noop"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "get", "content": "18°C"},
        ]
    )
    _, reply, result = session.messages
    assert reply.tool_calls == [
        ToolCallBlock(id="c1", name="get", arguments='{"city": "Paris"}'),  # text kept verbatim
        ToolCallBlock(id="c2", name="now", arguments='{"tz":"UTC","n":1}'),  # an object: compact JSON text
        ToolCallBlock(id="c3", name="noop"),  # no arguments: "{}"
    ]
    assert type(result) is ToolResultMessage
    assert (result.tool_call_id, result.tool_name, result.text) == ("c1", "get", "18°C")
    msgwire.validate(session)  # the migrated conversation is a valid one


def test_legacy_entries_keep_their_own_id_and_timestamp() -> None:
    (user, reply) = load(
        [
            {"role": "user", "content": "a", "id": "u-1", "timestamp": "2025-05-06T07:08:09Z"},
            {"role": "assistant", "content": "b", "id": "", "created_at": "not a time"},
        ]
    ).messages
    assert (user.id, user.timestamp) == ("u-1", T0)
    assert reply.id  # an empty id is replaced, an unreadable timestamp dropped for a fresh one
    assert reply.timestamp.year >= 2025


def test_role_entries_inside_a_v1_envelope_are_migrated_too() -> None:
    session = load({"version": 1, "messages": [{"role": "user", "content": "hi"}]})
    assert session.messages[0].content == [TextBlock(text="hi")]


def test_role_list_read_as_a_list_of_messages() -> None:
    messages = msgwire.loads(json.dumps([{"role": "user", "content": "hi"}]), type=list[Message])
    assert [m.text for m in messages] == ["hi"]


# --- database rows ----------------------------------------------------------------------------


def test_database_rows_of_every_kind() -> None:
    rows = [
        {"kind": "system", "content": "be brief"},
        {"kind": "user", "content": "weather in Paris?", "id": "r1", "timestamp": "2025-05-06T07:08:09Z"},
        {"kind": "assistant", "data_json": json.dumps({"content": "checking"})},
        {"kind": "tool_call", "data_json": json.dumps({"tool_call_id": "c1", "name": "get", "arguments": '{"q":1}'})},
        {"kind": "tool_call", "data_json": {"tool_call_id": "c2", "name": "now"}},  # data_json already an object
        {"kind": "tool_result", "data_json": json.dumps({"tool_call_id": "c1", "output": "18°C", "success": True})},
        {"kind": "tool_result", "data_json": json.dumps({"tool_call_id": "c2", "output": "boom", "success": False})},
    ]
    session = Session.from_rows(rows)
    assert session.system_prompt == "be brief"
    user, reply, ok, failed = session.messages
    assert (user.id, user.timestamp, user.text) == ("r1", T0, "weather in Paris?")
    # both tool_call rows joined the assistant message right before them
    assert type(reply) is AssistantMessage
    assert reply.text == "checking"
    assert reply.tool_calls == [
        ToolCallBlock(id="c1", name="get", arguments='{"q":1}'),
        ToolCallBlock(id="c2", name="now"),
    ]
    assert (ok.tool_call_id, ok.tool_name, ok.text, ok.is_error, ok.status) == ("c1", "get", "18°C", False, "success")
    assert (failed.is_error, failed.status, failed.tool_name) == (True, "error", "now")
    msgwire.validate(session)
    # the same rows as JSON read through loads
    again = msgwire.loads(json.dumps(rows))
    assert again.messages[0] == user  # it had its own id and timestamp; the others get fresh ones
    assert [(m.type, m.content) for m in again.messages] == [(m.type, m.content) for m in session.messages]


def test_tool_call_row_without_an_assistant_before_it_starts_one() -> None:
    rows = [
        {"kind": "user", "content": "go"},
        {"kind": "tool_call", "data_json": json.dumps({"id": "c1", "name": "f", "arguments": {"a": [1, 2]}})},
    ]
    _, reply = Session.from_rows(rows).messages
    assert type(reply) is AssistantMessage
    assert reply.content == [ToolCallBlock(id="c1", name="f", arguments='{"a":[1,2]}')]


def test_tool_result_row_output_that_is_not_text_becomes_json_text() -> None:
    rows = [{"kind": "tool_result", "data_json": json.dumps({"tool_call_id": "c", "output": {"t": 18}})}]
    (result,) = Session.from_rows(rows).messages
    assert result.text == '{"t":18}'
    assert (result.is_error, result.status) == (False, "success")  # success defaults to true


def test_tool_call_row_whose_data_has_a_type_of_its_own() -> None:
    """OpenAI-style call data carries "type": "function"; it is still a legacy tool_call row,
    not a canonical message of an unknown type."""
    data = {"type": "function", "tool_call_id": "c", "name": "f", "arguments": "{}"}
    rows = [{"kind": "assistant", "content": ""}, {"kind": "tool_call", "data_json": data}]
    (reply,) = Session.from_rows(rows).messages
    assert reply.tool_calls == [ToolCallBlock(id="c", name="f")]


def test_legacy_example_file() -> None:
    session = msgwire.loads((ROOT / "python" / "msgwire" / "examples" / "legacy-rows.json").read_bytes())
    assert session.system_prompt == "You are a helpful assistant."
    kinds = [m.type for m in session.messages]
    assert kinds == ["user", "assistant", "tool_result", "assistant"]
    assert session.messages[1].tool_calls == [
        ToolCallBlock(id="call_1", name="get_weather", arguments='{"city":"Paris"}')
    ]
    assert session.messages[2].tool_name == "get_weather"


# --- object arguments and older envelopes --------------------------------------------------------


def test_tool_call_with_object_arguments_becomes_compact_json_text() -> None:
    block = msgwire.loads(
        b'{"type":"tool_call","id":"c","name":"f","arguments": {"b" : [1, 2.5, "\\u00e9"], "a": {}}}',
        type=msgwire.ContentBlock,
    )
    assert block == ToolCallBlock(id="c", name="f", arguments='{"b":[1,2.5,"é"],"a":{}}')
    empty = msgwire.loads(b'{"type":"tool_call","id":"c","name":"f","arguments":{}}', type=ToolCallBlock)
    assert msgwire.dumps(empty) == b'{"type":"tool_call","id":"c","name":"f"}'  # "{}" is the default
    listed = msgwire.loads(b'{"type":"tool_call","id":"c","name":"f","arguments":[1]}', type=ToolCallBlock)
    assert listed.arguments == "[1]"


def test_object_arguments_inside_a_session() -> None:
    doc = {
        "version": 1,
        "messages": [
            {"type": "assistant", "id": "a", "timestamp": "2025-05-06T07:08:09Z", "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_call", "id": "c", "name": "f", "arguments": {"x": 1}},
            ]},
        ],
    }  # fmt: skip
    (reply,) = load(doc).messages
    assert reply.content == [TextBlock(text="calling"), ToolCallBlock(id="c", name="f", arguments='{"x":1}')]


@pytest.mark.parametrize("version", [0, None], ids=["version-0", "no-version"])
def test_older_envelope_loads_as_v1(version: int | None) -> None:
    doc: dict[str, object] = {"id": "s", "system_prompt": "p", "metadata": {"k": 1}, "messages": []}
    if version is not None:
        doc["version"] = version
    session = load(doc)
    assert (session.version, session.id, session.system_prompt, session.metadata) == (1, "s", "p", {"k": 1})
    assert b'"version":1' in msgwire.dumps(session)


# --- to_rows / from_rows ------------------------------------------------------------------------


def test_to_rows_writes_one_row_per_message_and_a_system_row() -> None:
    session = Session(system_prompt="p").append(msgwire.user("hi", id="u", timestamp=T0), msgwire.assistant("yo"))
    rows = session.to_rows()
    assert rows[0] == {"kind": "system", "content": "p"}
    assert [r["kind"] for r in rows] == ["system", "user", "assistant"]
    assert rows[1]["id"] == "u"
    assert rows[1]["timestamp"] == T0
    assert msgspec.json.decode(rows[1]["data_json"])["type"] == "user"


@examples(60)
@given(sessions)
def test_to_rows_from_rows_round_trip(session: Session) -> None:
    envelope = {
        "id": session.id,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "metadata": session.metadata,
    }
    rows = session.to_rows()
    assert Session.from_rows(rows, **envelope) == session
    # the rows stored as JSON (as a database would give them back) read the same through loads
    back = msgwire.loads(msgspec.json.encode(rows))
    assert (back.system_prompt, back.messages) == (session.system_prompt, session.messages)


def test_unknown_message_survives_rows_byte_for_byte() -> None:
    raw = b'{ "type" : "hologram",\n  "z": [1,  2] }'
    session = Session().append(UnknownMessage(raw, "hologram"))
    (back,) = Session.from_rows(session.to_rows()).messages
    assert type(back) is UnknownMessage
    assert back.raw == raw


# --- a provider's own messages, and ids that do not change on re-import -----------------------


def test_provider_shaped_lists_are_read_by_their_provider_reader(caplog: pytest.LogCaptureFixture) -> None:
    openai_list = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
            ],
        }
    ]
    anthropic_list = [
        {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": "S"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
    ]
    gemini_list = [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"a": 1}, "id": "g1"}}]},
    ]
    with caplog.at_level("WARNING", logger="msgwire"):
        openai = msgwire.loads(json.dumps(openai_list))
        anthropic = msgwire.loads(json.dumps(anthropic_list))
        gemini = msgwire.loads(json.dumps(gemini_list))
    assert caplog.records == []  # no "unknown block" anywhere
    assert [type(b).__name__ for b in openai.messages[0].content] == ["TextBlock", "ImageBlock"]  # type: ignore[union-attr]
    assert [type(m).__name__ for m in anthropic.messages] == ["UserMessage", "AssistantMessage", "ToolResultMessage"]
    assert [type(b).__name__ for b in anthropic.messages[1].content] == ["ThinkingBlock", "ToolCallBlock"]  # type: ignore[union-attr]
    assert anthropic.messages[2].tool_call_id == "t1"  # type: ignore[union-attr]
    assert gemini.messages[1].content[0].id == "g1"  # type: ignore[union-attr]
    # the same as the provider's request reader
    assert [m.content for m in gemini.messages] == [  # type: ignore[union-attr]
        m.content
        for m in msgwire.from_request({"contents": gemini_list}, "gemini").messages  # type: ignore[union-attr]
    ]


def test_imports_give_the_same_ids_twice() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    first, again = msgwire.from_request(body, "openai"), msgwire.from_request(json.dumps(body), "openai")
    assert [m.id for m in first.messages] == [m.id for m in again.messages]
    assert len({m.id for m in first.messages}) == 2
    assert [m.id for m in msgwire.read_request(body, "openai").messages] == [m.id for m in first.messages]
    # a conversation that grew keeps the ids of its first messages
    longer = {"messages": [*body["messages"], {"role": "user", "content": "more"}]}
    assert [m.id for m in msgwire.from_request(longer, "openai").messages][:2] == [m.id for m in first.messages]
    # the same messages at other places are other messages
    swapped = {"messages": list(reversed(body["messages"]))}
    assert not {m.id for m in msgwire.from_request(swapped, "openai").messages} & {m.id for m in first.messages}
    # a legacy list without ids
    log = json.dumps([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert [m.id for m in msgwire.loads(log).messages] == [m.id for m in msgwire.loads(log).messages]
    # an id of the entry's own is kept
    kept = msgwire.loads(json.dumps([{"role": "user", "content": "a", "id": "mine"}]))
    assert kept.messages[0].id == "mine"


def test_validate_flags_a_call_id_still_unanswered() -> None:
    call = msgwire.ToolCallBlock(id="c1", name="f")
    twice = [msgwire.assistant([call, call])]
    with pytest.raises(msgwire.ValidationError, match="also an earlier call's"):
        msgwire.validate(twice)
    # reused once answered: fine (Gemini and Kimi reuse ids turn after turn)
    msgwire.validate([msgwire.assistant([call]), msgwire.tool_result("c1", "ok"), msgwire.assistant([call])])
