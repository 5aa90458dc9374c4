"""msgwire <-> pydantic-ai message histories, proved by running pydantic-ai's own agent on the
converted history (a ``FunctionModel`` sees exactly what a real model would be sent)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from typing import Any

import msgspec
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
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
from pydantic_ai.usage import RequestUsage

import msgwire
from msgwire import (
    AssistantMessage,
    Base64Source,
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


def test_reasoning_tokens_cross_both_ways() -> None:
    """msgwire's ``reasoning_tokens`` is pydantic-ai's ``output_reasoning_tokens`` (the bench's own
    copy of this mapping carried it; the shipped one dropped it)."""
    if "output_reasoning_tokens" not in {f.name for f in dataclasses.fields(RequestUsage)}:
        pytest.skip("this pydantic-ai release counts no reasoning tokens (make test-oldest)")
    usage = Usage(input_tokens=10, output_tokens=50, reasoning_tokens=30)
    history = to_model_messages([msgwire.user("hi"), AssistantMessage(content=[TextBlock(text="ok")], usage=usage)])
    response = history[1]
    assert isinstance(response, ModelResponse)
    assert (response.usage.output_tokens, response.usage.output_reasoning_tokens) == (50, 30)
    back = from_model_messages(history).messages[1]
    assert isinstance(back, AssistantMessage)
    assert back.usage == usage


def test_parts_kept_from_pydantic_ai_go_back_as_they_were() -> None:
    """A part msgwire has no block for is kept whole on the way in; on the way out it is the same
    pydantic-ai part again, not its JSON as text for the model to read."""
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content=["Summarise this.", DocumentUrl(url="https://example.com/a.pdf")])]),
        ModelResponse(
            parts=[TextPart(content="Here:"), FilePart(content=BinaryContent(data=b"\x89PNG", media_type="image/png"))]
        ),
    ]
    session = from_model_messages(history)
    assert [b.type for b in session.messages[0].content] == ["text", "pydantic_ai_content"]  # type: ignore[union-attr]
    assert [b.type for b in session.messages[1].content] == ["text", "pydantic_ai_part"]  # type: ignore[union-attr]
    again = to_model_messages(session)
    user = again[0].parts[0]
    assert isinstance(user, UserPromptPart)
    assert user.content == ["Summarise this.", DocumentUrl(url="https://example.com/a.pdf")]
    response = again[1]
    assert isinstance(response, ModelResponse)
    # as pydantic-ai reads its own JSON back (its BinaryContent of an image comes back a BinaryImage)
    assert (
        response.parts == ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))[1].parts
    )


def test_another_providers_part_is_left_out_as_the_request_writers_leave_it() -> None:
    """An unknown block that is not pydantic-ai's (an Anthropic ``document`` read from a request)
    has no pydantic-ai part: it is left out, as the writers leave it out of another dialect's
    request, in user and assistant content alike (no raw JSON, no empty text part)."""
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Read it."},
                    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}},
                ],
            }
        ],
    }
    user = msgwire.from_request(body, "anthropic").messages[0]
    unknown = user.content[1]  # type: ignore[union-attr]
    assert isinstance(unknown, msgwire.UnknownBlock)
    assert msgwire.to_request([user], "openai")["messages"][0]["content"] == "Read it."
    answer = AssistantMessage(content=[TextBlock(text="Done."), unknown])
    history = to_model_messages([user, answer])
    assert history[0].parts[0] == UserPromptPart(content="Read it.", timestamp=user.timestamp)
    assert isinstance(history[1], ModelResponse)
    assert history[1].parts == [TextPart(content="Done.")]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def test_a_base64_images_detail_is_read_from_pydantic_ai_and_not_written_back() -> None:
    """A ``BinaryContent`` image's ``detail`` (its ``vendor_metadata``, as pydantic-ai's OpenAI
    models read it) is the msgwire block's ``detail``; ``to_model_messages`` writes none back:
    pydantic-ai's Gemini model sends a ``BinaryContent``'s metadata keys it does not know as the
    part's ``video_metadata`` (an ``ImageUrl``'s it leaves out, so a URL image keeps its detail
    both ways). Before: the detail was not read."""
    binary = BinaryContent(data=base64.b64decode(PNG), media_type="image/png", vendor_metadata={"detail": "high"})
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=["What is this?", binary])])]
    image = from_model_messages(history).messages[0].content[1]  # type: ignore[union-attr]
    assert image == ImageBlock(source=Base64Source(media_type="image/png", data=PNG), detail="high")
    written = to_model_messages(Session(messages=[msgwire.user([TextBlock(text="What is this?"), image])]))
    request = written[0]
    assert isinstance(request, ModelRequest)
    prompt = request.parts[0]
    assert isinstance(prompt, UserPromptPart)
    assert isinstance(prompt.content[1], BinaryContent)  # type: ignore[index]
    assert prompt.content[1].vendor_metadata is None  # type: ignore[index]
    assert prompt.content[1].data == binary.data  # type: ignore[index]
