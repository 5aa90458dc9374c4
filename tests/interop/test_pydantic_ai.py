"""msgwire <-> pydantic-ai message histories, proved by running pydantic-ai's own agent on the
converted history (a ``FunctionModel`` sees exactly what a real model would be sent)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import msgwire
from msgwire import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UrlSource,
    Usage,
)
from msgwire.interop.pydantic_ai import from_model_messages, to_model_messages

CALL = ToolCallBlock(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
SESSION = Session(
    system_prompt="Be brief.",
    messages=[
        msgwire.user(
            [
                TextBlock(text="Weather here?"),
                ImageBlock(source=UrlSource(url="https://example.com/sky.png"), detail="low"),
                FileReferenceBlock(path="notes.txt", resolved_content="sunny", status="resolved"),
            ]
        ),
        AssistantMessage(
            content=[ThinkingBlock(thinking="Look it up.", signature="sig"), CALL],
            provider="anthropic",
            model="claude",
            stop_reason="tool_use",
            usage=Usage(input_tokens=10, output_tokens=5),
        ),
        ToolResultMessage(tool_call_id="call_1", tool_name="get_weather", content=[TextBlock(text="14 C")]),
        msgwire.system_control("mode_change", old="plan", new="act"),
        msgwire.assistant("It is 14 C.", stop_reason="end_turn"),
    ],
)


def test_pydantic_ai_runs_with_the_converted_history() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart(content="Still 14 C.")])

    history = to_model_messages(SESSION)
    # asyncio.run, not run_sync: run_sync leaves an event loop set on the main thread, unclosed
    result = asyncio.run(Agent(FunctionModel(model)).run("And now?", message_history=history))
    assert result.output == "Still 14 C."
    sent = seen[0]
    first = sent[0]
    assert isinstance(first, ModelRequest)
    assert isinstance(first.parts[0], SystemPromptPart)
    assert first.parts[0].content == "Be brief."
    user = first.parts[1]
    assert isinstance(user, UserPromptPart)
    assert user.content[0] == "Weather here?"  # type: ignore[index]
    assert isinstance(user.content[1], ImageUrl)  # type: ignore[index]
    assert user.content[1].vendor_metadata == {"detail": "low"}  # type: ignore[index]
    assert "notes.txt" in user.content[2]  # type: ignore[index,operator]  # the file as the writers send it
    response = sent[1]
    assert isinstance(response, ModelResponse)
    assert isinstance(response.parts[0], ThinkingPart)
    assert response.parts[0].signature == "sig"
    assert isinstance(response.parts[1], ToolCallPart)
    assert response.parts[1].args_as_dict() == {"city": "Paris"}
    assert response.usage.input_tokens == 10
    returned = sent[2].parts[0]
    assert isinstance(returned, ToolReturnPart)
    assert (returned.tool_call_id, returned.content) == ("call_1", "14 C")
    # the system_control message is never sent; the last turn and the new prompt are
    assert len(sent) == 5
    # and pydantic-ai's whole run comes back as msgwire messages
    back = from_model_messages(result.all_messages())
    assert back.system_prompt == "Be brief."
    assert back.messages[-1].text == "Still 14 C."
    assert back.messages[-2].text == "And now?"
    assert back.messages[1].content == [ThinkingBlock(thinking="Look it up.", signature="sig"), CALL]  # type: ignore[union-attr]


def _comparable(session: Session) -> list[Any]:
    plain = msgspec.to_builtins(session.messages)
    for message in plain:
        message.pop("id", None)
        message.pop("timestamp", None)
    return plain


def test_a_conversation_round_trips() -> None:
    simple = Session(
        system_prompt="s",
        messages=[
            msgwire.user("hi"),
            AssistantMessage(content=[CALL], stop_reason="tool_use", usage=Usage(input_tokens=3)),
            ToolResultMessage(tool_call_id="call_1", tool_name="get_weather", content=[TextBlock(text="rain")]),
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="x",
                content=[TextBlock(text="boom")],
                is_error=True,
                status="error",
            ),
            msgwire.assistant("done", stop_reason="end_turn", usage=Usage()),
        ],
    )
    back = from_model_messages(to_model_messages(simple))
    assert back.system_prompt == "s"
    expected = _comparable(simple)
    got = _comparable(back)
    for message in got:  # pydantic-ai's finish reason comes back as the raw stop reason
        message.pop("raw_stop_reason", None)
    assert got == expected
