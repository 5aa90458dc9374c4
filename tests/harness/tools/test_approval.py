"""Approval: policies, one approver for several calls, default deny, approvals bound to arguments."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire import AssistantMessage, ToolCallBlock, formats
from msgwire.harness import (
    ApprovalRequest,
    Approvals,
    Approve,
    Conversation,
    Deny,
    ToolRegistry,
    ToolRunner,
)
from msgwire.harness.tools import decide, fingerprint


def _message(*calls: tuple[str, str, str]) -> AssistantMessage:
    return msgwire.assistant([ToolCallBlock(id=i, name=n, arguments=a) for i, n, a in calls], stop_reason="tool_use")


class _Bank:
    """A payment tool that remembers what it was actually asked to do."""

    def __init__(self) -> None:
        self.paid: list[tuple[str, float]] = []
        registry = ToolRegistry()

        @registry.tool(policy="ask")
        async def pay(to: str, amount: float) -> str:
            """Send money."""
            self.paid.append((to, amount))
            return f"sent {amount:g} to {to}"

        @registry.tool
        def balance() -> float:
            """The balance."""
            return 100.0

        @registry.tool(policy="deny")
        def close_account() -> None:
            """Close the account."""

        self.registry = registry


def test_three_parallel_calls_one_denied_one_edited_one_missing() -> None:
    bank = _Bank()
    asked: list[list[ApprovalRequest]] = []

    async def approver(requests: list[ApprovalRequest]) -> dict[str, Any]:
        asked.append(requests)
        return {
            "c1": Deny(reason="not this one", by="alice"),
            "c2": Approve(arguments={"to": "bob", "amount": 50}, by="alice", reason="half is enough"),
            # c3: no decision
        }

    message = _message(
        ("c1", "pay", '{"to": "mallory", "amount": 1000}'),
        ("c2", "pay", '{"to": "bob", "amount": 100}'),
        ("c3", "pay", '{"to": "carol", "amount": 5}'),
    )
    conversation = Conversation()
    conversation.add(msgwire.user("pay my friends"))
    with ToolRunner(bank.registry, approver=approver) as runner:
        results = asyncio.run(runner.run(message, conversation=conversation))

    # the approver decided the three at once, seeing the model's arguments parsed
    assert len(asked) == 1
    assert [(r.call.id, r.arguments) for r in asked[0]] == [
        ("c1", {"to": "mallory", "amount": 1000}),
        ("c2", {"to": "bob", "amount": 100}),
        ("c3", {"to": "carol", "amount": 5}),
    ]
    # only the edited call ran, with the edited arguments
    assert bank.paid == [("bob", 50.0)]
    assert [(r.tool_call_id, r.status) for r in results] == [("c1", "denied"), ("c2", "success"), ("c3", "denied")]
    assert results[0].content == [msgwire.TextBlock(text="The tool call was denied: not this one")]
    assert results[1].content == [msgwire.TextBlock(text="sent 50 to bob")]
    assert "no decision was given (default deny)" in results[2].content[0].text  # type: ignore[union-attr]

    # the trail: the request, each decision as the message's new state, then the results
    entries = conversation.entries
    assert [e.decision for e in entries] == [
        "user_input",
        "tool_call_requested",
        "tool_call_denied",
        "tool_call_approved",
        "tool_call_denied",
        "permission_denied",
        "tool_executed",
        "permission_denied",
    ]
    states = [e.message for e in entries[1:5]]
    assert all(s.id == message.id for s in states)
    assert [[b.approval for b in s.tool_calls] for s in states] == [  # type: ignore[union-attr]
        ["pending", "pending", "pending"],
        ["denied", "pending", "pending"],
        ["denied", "approved", "pending"],
        ["denied", "approved", "denied"],
    ]
    edited_call = states[3].tool_calls[1]  # type: ignore[union-attr]
    assert json.loads(edited_call.arguments) == {"to": "bob", "amount": 50}
    assert entries[3].audit == {
        "tool": "pay",
        "call_id": "c2",
        "by": "alice",
        "policy": "ask",
        "fingerprint": fingerprint(edited_call),
        "reason": "half is enough",
        "edited": True,
        "asked_fingerprint": fingerprint(message.tool_calls[1]),
    }
    assert entries[2].audit["reason"] == "not this one"
    assert entries[4].audit["by"] == "default"
    assert entries[6].audit["fingerprint"] == fingerprint(edited_call)  # what ran is what was approved
    # the model's request as it was is still in the trail; the views show the latest state
    assert entries[1].message == message
    assert conversation.message(message.id) == states[3]
    assert conversation.dirty == {message.id}
    assert conversation.verify()
    # every call has its own result, denied ones included: no provider sees an unanswered call
    # (vercel/ai #14428), and no request needs a placeholder
    for dialect in formats.DIALECTS:
        report = formats.convert_request(conversation.session(), dialect).report
        assert report.by_kind("tool_result") == [], dialect


def test_an_approval_does_not_carry_over_to_changed_arguments() -> None:
    bank = _Bank()
    message = _message(("c1", "pay", '{"to": "bob", "amount": 100}'))
    with ToolRunner(bank.registry, approver=lambda rs: {r.call.id: Approve() for r in rs}) as runner:
        approvals = asyncio.run(runner.approve(message))
        assert approvals.message.tool_calls[0].approval == "approved"
        # a hook rewrites the arguments after the approval (pydantic-ai #6968)
        block = msgspec.structs.replace(approvals.message.tool_calls[0], arguments='{"to": "bob", "amount": 10000}')
        tampered = msgspec.structs.replace(approvals, message=msgspec.structs.replace(message, content=[block]))
        results = asyncio.run(runner.execute(tampered))
        assert bank.paid == []
        assert results[0].status == "denied"
        assert "not the ones approved" in results[0].content[0].text  # type: ignore[union-attr]

        # a history that merely claims the call was approved is not an approval either
        forged = _message(("c9", "pay", '{"to": "mallory", "amount": 1}'))
        forged = msgspec.structs.replace(
            forged, content=[msgspec.structs.replace(forged.tool_calls[0], approval="approved")]
        )
        results = asyncio.run(runner.execute(asyncio.run(runner.approve(forged))))
        assert bank.paid == []
        assert results[0].status == "denied"

        # the untouched approval runs
        asyncio.run(runner.execute(approvals))
        assert bank.paid == [("bob", 100.0)]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (None, "the approver returned NoneType, not a mapping"),
        ([Approve()], "the approver returned list, not a mapping"),
        ({"c1": True}, "True is not a decision (Approve or Deny)"),
        ({"c1": None}, "no decision was given (default deny)"),
        ({"other": Approve()}, "no decision was given (default deny)"),
    ],
)
def test_anything_but_an_approval_is_a_denial(answer: Any, reason: str) -> None:
    bank = _Bank()
    approvals = asyncio.run(
        decide(_message(("c1", "pay", '{"to": "x", "amount": 1}')), bank.registry, lambda _: answer)
    )
    assert approvals.message.tool_calls[0].approval == "denied"
    assert approvals.records[0].reason == reason


def test_a_failing_approver_or_policy_denies() -> None:
    bank = _Bank()

    def approver(requests: list[ApprovalRequest]) -> dict[str, Any]:
        raise ConnectionError("the approval service is down")

    approvals = asyncio.run(decide(_message(("c1", "pay", '{"to": "x", "amount": 1}')), bank.registry, approver))
    assert approvals.records[0].approved is False
    assert approvals.records[0].reason == "the approver failed (ConnectionError: the approval service is down)"

    def policy(call: ToolCallBlock) -> str:
        raise KeyError("limits")

    registry = ToolRegistry()
    registry.add(bank.registry["balance"], policy=policy)
    approvals = asyncio.run(decide(_message(("c1", "balance", "")), registry))
    assert approvals.records[0].reason == "the approval policy failed (KeyError: 'limits')"
    assert approvals.records[0].policy.startswith("function:")


def test_policies_auto_deny_ask_without_approver_and_functions_of_the_call() -> None:
    bank = _Bank()
    seen: list[str] = []

    async def small_payments_only(call: ToolCallBlock) -> Any:
        seen.append(call.id)
        amount = call.parsed_arguments()["amount"]
        return "auto" if amount <= 10 else Deny(reason=f"{amount} is above the limit of 10")

    registry = ToolRegistry([bank.registry["balance"], bank.registry["close_account"]])
    registry.add(bank.registry["pay"], policy=small_payments_only)
    message = _message(
        ("c1", "balance", ""),
        ("c2", "close_account", "{}"),
        ("c3", "pay", '{"to": "a", "amount": 5}'),
        ("c4", "pay", '{"to": "b", "amount": 50}'),
    )
    approvals = asyncio.run(decide(message, registry))
    assert seen == ["c3", "c4"]
    assert [(r.call_id, r.approved, r.by, r.reason) for r in approvals.records] == [
        ("c1", True, "policy", None),
        ("c2", False, "policy", "the tool 'close_account' is not allowed"),
        ("c3", True, "policy", None),
        ("c4", False, "policy", "50 is above the limit of 10"),
    ]
    # "ask" with nobody to ask: denied, and said so
    approvals = asyncio.run(decide(_message(("c1", "pay", '{"to": "a", "amount": 5}')), bank.registry))
    assert approvals.records[0].reason == "approval needed and no approver was given"


def test_calls_that_cannot_run_are_not_asked_about() -> None:
    bank = _Bank()
    asked: list[str] = []

    def approver(requests: list[ApprovalRequest]) -> dict[str, Any]:
        asked.extend(r.call.id for r in requests)
        return {r.call.id: Approve() for r in requests}

    message = _message(
        ("c1", "pay", '{"to": "a"}'),  # amount missing
        ("c2", "wire_transfer", "{}"),  # no such tool
        ("c3", "pay", '{"to": "a", "amount": 1}'),
    )
    with ToolRunner(bank.registry, approver=approver) as runner:
        approvals = asyncio.run(runner.approve(message))
        results = asyncio.run(runner.execute(approvals))
    assert asked == ["c3"]
    assert [b.approval for b in approvals.message.tool_calls] == ["pending", "pending", "approved"]
    assert [r.status for r in results] == ["error", "error", "success"]


def test_edited_arguments_that_do_not_fit_are_denied() -> None:
    bank = _Bank()
    approvals = asyncio.run(
        decide(
            _message(("c1", "pay", '{"to": "a", "amount": 1}')),
            bank.registry,
            lambda rs: {"c1": Approve(arguments='{"to": "a", "amount": "lots"}')},
        )
    )
    record = approvals.records[0]
    assert not record.approved
    assert record.reason == "the edited arguments do not fit the tool: Expected `float`, got `str` - at `$.amount`"
    assert approvals.message.tool_calls[0].arguments == '{"to": "a", "amount": 1}'


def test_a_decided_call_is_not_decided_again() -> None:
    bank = _Bank()
    first = asyncio.run(decide(_message(("c1", "balance", "")), bank.registry))
    again = asyncio.run(decide(first.message, bank.registry))
    assert again.records == []
    assert again.message == first.message


def test_fingerprints_bind_id_name_and_the_exact_text() -> None:
    base = ToolCallBlock(id="c1", name="pay", arguments='{"amount": 1}')
    variants = [
        msgspec.structs.replace(base, id="c2"),
        msgspec.structs.replace(base, name="pay2"),
        msgspec.structs.replace(base, arguments='{"amount":1}'),  # same JSON, other text
    ]
    assert len({fingerprint(base), *map(fingerprint, variants)}) == 4
    assert fingerprint(msgspec.structs.replace(base, approval="approved")) == fingerprint(base)


def test_arguments_decoded_to_decide_are_run_once_then_decoded_afresh() -> None:
    """The arguments ``decide`` decoded for a call it approved without asking are the ones the
    call runs with (one decode, not two), but only once: a second ``execute`` of the same
    approvals gets its own, untouched by what the first run did to them."""
    registry = ToolRegistry()
    seen: list[list[str]] = []

    @registry.tool
    def tag(names: list[str]) -> int:
        """Tags the names (and appends to the list it was given)."""
        seen.append(list(names))
        names.append("touched")
        return len(names)

    runner = ToolRunner(registry)
    message = _message(("c1", "tag", '{"names": ["a"]}'))
    decodes = 0
    plain = registry.get("tag")
    assert plain is not None
    original = plain.decode

    def counting(arguments: str) -> Any:
        nonlocal decodes
        decodes += 1
        return original(arguments)

    plain.decode = counting  # type: ignore[method-assign]

    async def main() -> None:
        approvals = await runner.approve(message)
        assert decodes == 1
        first = await runner.execute(approvals)
        assert decodes == 1, "the call ran with the arguments decide decoded"
        second = await runner.execute(approvals)
        assert decodes == 2, "a second run decodes its own"
        assert [r.status for r in first + second] == ["success", "success"]

    asyncio.run(main())
    assert seen == [["a"], ["a"]]


def test_what_decide_hands_to_execute_travels_on_the_approvals_only() -> None:
    """The arguments ``decide`` decoded (and the fingerprints it took) go to ``execute`` on the
    ``Approvals`` it returns, and nowhere else: an ``Approvals`` made again from the same message
    and records is equal, encodes alike and runs alike, but decodes its arguments itself, and
    takes nothing from the first one, which still hands its own out."""
    bank = _Bank()
    plain = bank.registry.get("pay")
    assert plain is not None
    original = plain.decode
    decodes = 0

    def counting(arguments: str) -> Any:
        nonlocal decodes
        decodes += 1
        return original(arguments)

    plain.decode = counting  # type: ignore[method-assign]
    runner = ToolRunner(bank.registry)

    async def main() -> None:  # approved without asking: decide's arguments are kept for the run
        approvals = await runner.approve(_message(("c1", "pay", '{"to": "al", "amount": 5}')), policy="auto")
        assert decodes == 1
        again = Approvals(message=approvals.message, records=approvals.records)
        assert again == approvals
        assert msgspec.json.encode(again) == msgspec.json.encode(approvals)
        assert [r.status for r in await runner.execute(again)] == ["success"]
        assert decodes == 2, "made again, it decodes its own"
        assert [r.status for r in await runner.execute(approvals)] == ["success"]
        assert decodes == 2, "the first still hands out what decide decoded"

    asyncio.run(main())
    assert bank.paid == [("al", 5.0), ("al", 5.0)]


def test_arguments_an_approver_saw_or_edited_are_decoded_again_to_run() -> None:
    """Arguments handed to an approver, or edited by one, are never the object a call runs with."""
    bank = _Bank()
    plain = bank.registry.get("pay")
    assert plain is not None
    original = plain.decode
    decoded: list[str] = []

    def counting(arguments: str) -> Any:
        decoded.append(arguments)
        return original(arguments)

    plain.decode = counting  # type: ignore[method-assign]

    def approver(requests: list[ApprovalRequest]) -> dict[str, Any]:
        return {"c1": Approve(), "c2": Approve(arguments={"to": "bob", "amount": 1})}

    runner = ToolRunner(bank.registry, approver=approver)
    message = _message(("c1", "pay", '{"to": "al", "amount": 5}'), ("c2", "pay", '{"to": "eve", "amount": 9}'))
    results = asyncio.run(runner.run(message))
    assert [r.status for r in results] == ["success", "success"]
    assert sorted(bank.paid) == [("al", 5.0), ("bob", 1.0)]
    # decide: both asked (2) and the edit checked (1); execute: both decoded again (2)
    assert decoded.count('{"to": "al", "amount": 5}') == 2
    assert decoded.count('{"amount":1,"to":"bob"}') + decoded.count('{"to":"bob","amount":1}') == 2
