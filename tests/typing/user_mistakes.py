"""Mistakes mypy --strict must catch (tests/test_typing.py expects exactly these errors, one per
line marked `# error:`)."""

from __future__ import annotations

import msgwire
from msgwire.harness import AgentEvent, ApprovalRequest, Deny, ToolRegistry, ToolRunner, tool


def mistakes(body: bytes, event: msgwire.Event) -> None:
    msgwire.assemble(body, "opnai")  # error: arg-type
    msgwire.stream(body, "openai", partial_arg=True)  # error: call-arg
    if event.type == "usage":
        print(event.text)  # error: attr-defined
    msgwire.transcode(body, "openai", "antropic")  # error: arg-type


def agent_mistakes(event: AgentEvent) -> None:
    if event.type == "tool_started":
        print(event.result)  # error: attr-defined


tools = ToolRegistry()


@tools.tool
def add(a: int, b: int) -> int:
    return a + b


@tool(policy="ask")
def remove(path: str) -> None: ...


def tool_mistakes() -> None:
    add("x", None)  # error: arg-type
    remove(1)  # error: arg-type
    label: str = add(1, 2)  # error: assignment
    print(label)


@tools.tool(polcy="ask")  # error: call-overload, untyped-decorator
def misspelt(path: str) -> None: ...


def deny_in_order(requests: list[ApprovalRequest]) -> list[Deny]:
    return [Deny(reason="no") for _ in requests]


ToolRunner(tools, approver=deny_in_order)  # error: arg-type
