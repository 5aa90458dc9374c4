"""Code as a user writes it: it must type-check under mypy --strict with no error (run by
tests/test_typing.py). Each narrowing below is what the guide (docs/guide/) shows."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Literal

import msgwire
from msgwire import formats
from msgwire.harness import Agent, ApprovalRequest, Approve, Deny, ToolRegistry, ToolRunner, tool


def read(body: bytes) -> str:
    out = []
    with msgwire.stream(body, "openai", partial_args=True) as events:
        for event in events:
            if event.type == "text_delta":
                out.append(event.text)
            elif event.type == "tool_call_end":
                out.append(event.block.name + event.block.arguments)
            elif event.type == "tool_call_delta":
                out.append(event.fragment)
            elif event.type == "message_end":
                out.append(event.stop_reason or "")
        message: msgwire.AssistantMessage = events.message()
    return "".join(out) + message.text


def blocks(message: msgwire.AssistantMessage) -> list[str]:
    names = []
    for block in message.content:
        if isinstance(block, msgwire.ToolCallBlock):
            names.append(block.name)
        elif isinstance(block, msgwire.TextBlock):
            names.append(block.text)
    return names


def failure(body: bytes) -> str:
    try:
        return msgwire.assemble(body, "anthropic").text
    except msgwire.StreamError as error:
        partial = error.partial_message
        return partial.text if partial is not None else ""


def requests(session: msgwire.Session) -> int:
    request = msgwire.Request(model="m", messages=session.messages, tool_choice="required")
    body = msgwire.to_request(request, "anthropic")
    converted = formats.convert_request(session, "gemini")
    losses = [loss.kind for loss in converted.report.entries if loss.message is None]
    again = msgwire.read_request(body, "anthropic")
    return len(losses) + len(again.messages) + len(converted.dict())


def dialects() -> list[msgwire.Dialect]:
    return list(formats.DIALECTS)


def agent_events(agent: Agent) -> str:
    """The agent's events narrow by their tag, the model's and the loop's alike."""
    shown = []
    for event in agent.stream("hi"):
        if event.type == "text_delta":
            shown.append(event.text)
        elif event.type == "tool_decided":
            shown.append(f"{event.record.tool}: {event.record.approved}")
        elif event.type == "run_end":
            shown.append(event.reason)
    return "".join(shown)


tools = ToolRegistry()


@tools.tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, object]:
    """Current weather for a city."""
    return {"city": city, "unit": unit}


@tools.tool(policy="ask", concurrency_safe=False, timeout=30)  # the guide's form (docs/guide/tools.md)
async def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


@tool(describe_returns=False)
def add(a: int, b: int = 0) -> int:
    """Add.

    Returns:
        The sum.
    """
    return a + b


def tools_keep_their_signatures() -> None:
    """A decorated tool is called as the function is, and is a registered tool too."""
    report: dict[str, object] = get_weather("Oslo", unit="f")
    sent: Coroutine[Any, Any, str] = send_email("team@example.com", "Hi")
    sent.close()
    total: int = add(1) + add(1, b=2)
    spec: msgwire.Tool = send_email.spec
    print(report, total, spec.name, get_weather.policy, tools.specs)


def ask_alice(requests: list[ApprovalRequest]) -> dict[str, Approve | Deny]:
    return {r.call.id: Approve(by="alice") if r.tool.name == "get_weather" else Deny(reason="no") for r in requests}


async def deny_all(requests: list[ApprovalRequest]) -> dict[str, Deny]:
    return {r.call.id: Deny(reason="not today") for r in requests}


def approvers() -> None:
    """An approver is sync or async and returns a mapping of call ids to decisions."""
    with ToolRunner(tools, approver=ask_alice), ToolRunner(tools, approver=deny_all):
        pass
