"""Approval: which tool calls may run, decided call by call, bound to the exact arguments.

Per tool, an ``ApprovalPolicy``:

- ``"auto"``: approved without asking; ``"deny"``: denied without asking;
- ``"ask"``: the *approver* decides;
- a function of the call, ``policy(call: ToolCallBlock)`` (sync or async), returning one of the
  three, or a decision (``Approve`` / ``Deny``) itself.

The approver is one callable (sync or async) that gets every call to ask about at once, as a list
of ``ApprovalRequest`` (the call, the tool's declaration, the parsed arguments, the fingerprint),
and returns a mapping ``{call_id: Approve(...) | Deny(reason=...)}``. ``Approve(arguments=...)``
approves *edited* arguments: those are what runs and what is recorded.

Default deny: a call the approver leaves out, a value that is not a decision, an approver or a
policy that raises, and any ``"ask"`` with no approver are denials, with the reason recorded.

Binding: each decision records the *fingerprint* of the call, ``sha256`` over the call id, the
tool name and the exact arguments text (``fingerprint()``). The runner executes a call only when
an approval with that very fingerprint exists, so arguments changed after approval (by a hook,
a bug, a forged history) are not run: an approval never carries over to other arguments.

Calls to tools that do not exist, or whose arguments do not fit the schema, are not asked about
(they stay ``pending``): the runner answers them with an error result the model can act on.

Every decision is recorded: when ``decide`` is given a conversation (a ``Recorder``), the
assistant message is recorded first if it is not there yet (``tool_call_requested``), then each
decision, in call order, as an entry ``tool_call_approved`` / ``tool_call_denied`` whose message
is the assistant message's new state (``ToolCallBlock.approval`` set) and whose audit holds who,
why, the policy and the fingerprint (and, for edited arguments, the fingerprint of those asked).
"""

from __future__ import annotations

import hashlib
import inspect
import operator
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, Union

import msgspec

from msgwire import AssistantMessage, Message, Tool, ToolCallBlock

from .policy import ApprovalPolicy
from .registry import BaseTool, ToolRegistry

__all__ = [
    "ApprovalRequest",
    "Approvals",
    "Approve",
    "Approver",
    "Decision",
    "DecisionRecord",
    "Deny",
    "Recorder",
    "decide",
    "fingerprint",
]


class Approve(msgspec.Struct, frozen=True, kw_only=True):
    """Run the call; with ``arguments`` (JSON text, or a JSON object given as a dict), run it
    with those instead of the model's."""

    arguments: str | dict[str, Any] | None = None
    by: str | None = None
    reason: str | None = None


class Deny(msgspec.Struct, frozen=True, kw_only=True):
    """Do not run the call; ``reason`` is sent to the model."""

    reason: str = ""
    by: str | None = None


Decision = Union[Approve, Deny]


class ApprovalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One call the approver decides: ``arguments`` parsed (as JSON values), ``tool`` the
    declaration the model saw, ``fingerprint`` what an approval will be bound to."""

    call: ToolCallBlock
    tool: Tool
    arguments: Any
    fingerprint: str


Approver = Callable[[list[ApprovalRequest]], Union[Mapping[str, Decision], Awaitable[Mapping[str, Decision]]]]
"""``approver(requests) -> {call_id: Approve | Deny}`` (or an awaitable of it). Typed so that a
checker catches an approver that returns something else; at run time such a value, like a call
left out, is a denial."""


class DecisionRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One decided call: who decided, why, under which policy, bound to which arguments."""

    call_id: str
    tool: str
    approved: bool
    by: str
    reason: str | None = None
    policy: str
    fingerprint: str
    """Of the call as decided (with the edited arguments when they were edited)."""
    asked_fingerprint: str | None = None
    """Of the call as the approver saw it, when it approved other arguments."""

    def audit(self) -> dict[str, Any]:
        """The audit metadata of the decision's entry."""
        out: dict[str, Any] = {
            "tool": self.tool,
            "call_id": self.call_id,
            "by": self.by,
            "policy": self.policy,
            "fingerprint": self.fingerprint,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        if self.asked_fingerprint is not None:
            out["edited"] = True
            out["asked_fingerprint"] = self.asked_fingerprint
        return out


class _Kept(msgspec.Struct):
    """What ``decide`` knew of one block it decided: its fingerprint and, for a call it approved
    without asking anyone, the tool and the arguments it decoded (handed out once: ``take``)."""

    block: ToolCallBlock
    fingerprint: str
    tool: BaseTool | None = None
    arguments: Any = None

    def take(self, tool: BaseTool) -> tuple[bool, Any]:
        """``(True, arguments)`` the first time, for the tool that decoded them; else ``(False, None)``."""
        if self.tool is not tool:
            return False, None
        arguments = self.arguments
        self.tool = self.arguments = None
        return True, arguments


class _Carried(msgspec.Struct, dict=True):
    """What ``decide`` hands to ``execute`` beside the decisions, by call id, for the very blocks
    it decided (frozen: an identical object has identical text): a ``_Kept`` each. Part of no
    decision: equal to any other, encoded as ``{}``; a block that is not the one decided gets
    nothing."""

    def __post_init__(self) -> None:
        self.calls: dict[str, _Kept] = {}


class Approvals(msgspec.Struct, frozen=True, kw_only=True):
    """What ``decide`` returns: the assistant message's new state and one record per decided
    call (in call order). ``ToolRunner.execute`` runs the calls it grants."""

    message: AssistantMessage
    records: list[DecisionRecord]
    _carried: _Carried = msgspec.field(default_factory=_Carried)

    def grant(self, call: ToolCallBlock) -> DecisionRecord | None:
        """The approval that covers ``call`` exactly as it is (same id, tool, arguments), if any."""
        if call.approval != "approved":
            return None
        print_ = decided_fingerprint(call, self)
        return next((r for r in self.records if r.approved and r.fingerprint == print_), None)

    def record_for(self, call_id: str) -> DecisionRecord | None:
        return next((r for r in reversed(self.records) if r.call_id == call_id), None)


class Recorder(Protocol):
    """Where decisions and results are recorded (``Conversation`` is one)."""

    def __contains__(self, message_id: object, /) -> bool: ...
    def record(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None, /) -> object: ...


def fingerprint(call: ToolCallBlock) -> str:
    """``sha256`` (hex) over the call id, the tool name and the exact arguments text."""
    data = msgspec.json.encode(["msgwire-tool-call-v1", call.id, call.name, call.arguments])
    return hashlib.sha256(data).hexdigest()


def carried(call: ToolCallBlock, approvals: Approvals) -> _Kept | None:
    """What ``decide`` kept for ``call`` on ``approvals``, if ``call`` is the very block it decided."""
    kept = approvals._carried.calls.get(call.id)
    return kept if kept is not None and kept.block is call else None


def decided_fingerprint(call: ToolCallBlock, approvals: Approvals) -> str:
    """``fingerprint(call)``, taken from ``approvals`` when ``call`` is the very block decided."""
    kept = carried(call, approvals)
    return kept.fingerprint if kept is not None else fingerprint(call)


def decoded_arguments(call: ToolCallBlock, tool: BaseTool, approvals: Approvals) -> Any:
    """The arguments of ``call`` as ``tool`` decodes them: those ``decide`` decoded when it
    approved this very block without asking anyone (handed out once: a second run of the same
    approvals decodes its own, which no earlier run has changed), else decoded now."""
    kept = carried(call, approvals)
    if kept is not None:
        handed, arguments = kept.take(tool)
        if handed:
            return arguments
    return tool.decode(call.arguments)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


async def decide(
    message: AssistantMessage,
    registry: ToolRegistry,
    approver: Approver | None = None,
    *,
    conversation: Recorder | None = None,
    policy: ApprovalPolicy | None = None,
) -> Approvals:
    """Decide every pending call of ``message`` (see the module docstring); ``policy``, when
    given, decides every tool instead of each tool's own."""
    if conversation is not None and message.id not in conversation:
        conversation.record(message, "tool_call_requested", {"calls": len(message.tool_calls)})

    content = list(message.content)
    # (block index, decision, policy label, the tool and arguments decoded for a call decided
    # without asking: the ones it runs with if approved), in call order
    decided: list[tuple[int, Decision, str, BaseTool | None, Any]] = []
    asks: list[tuple[int, ApprovalRequest]] = []
    for index, block in enumerate(content):
        if type(block) is not ToolCallBlock or block.approval != "pending":
            continue
        tool = registry.get(block.name)
        if tool is None:
            continue
        try:
            arguments = tool.decode(block.arguments)
        except (msgspec.DecodeError, ValueError):
            continue
        rule = tool.policy if policy is None else policy
        verdict: Any
        label: str
        if isinstance(rule, str):
            label, verdict = rule, rule
        else:
            label, verdict = f"function:{_name(rule)}", await _policy_verdict(rule, block)
        if verdict == "auto":
            decided.append((index, _BY_POLICY, label, tool, arguments))
            continue
        if verdict == "ask":
            request = ApprovalRequest(
                call=block, tool=tool.spec, arguments=tool.to_builtins(arguments), fingerprint=fingerprint(block)
            )
            asks.append((index, request))
            continue
        if verdict == "deny":
            verdict = Deny(by="policy", reason=f"the tool {block.name!r} is not allowed")
        elif not isinstance(verdict, (Approve, Deny)):
            verdict = Deny(by="policy", reason=f"the approval policy gave {verdict!r}, not a decision")
        decided.append((index, verdict, label, tool, arguments))

    if asks:
        answers = await _ask(approver, [r for _, r in asks])
        decided += [(index, answer, "ask", None, None) for (index, _), answer in zip(asks, answers, strict=True)]
        decided.sort(key=_first)

    records: list[DecisionRecord] = []
    carry = _Carried()
    for index, decision, how, tool, arguments in decided:
        block = content[index]
        assert type(block) is ToolCallBlock
        new_block, record = _apply(block, decision, how, registry)
        content[index] = new_block
        if record.approved and tool is not None and new_block.arguments is block.arguments:
            carry.calls[new_block.id] = _Kept(new_block, record.fingerprint, tool, arguments)
        else:
            carry.calls[new_block.id] = _Kept(new_block, record.fingerprint)
        records.append(record)
        if conversation is not None:
            state = msgspec.structs.replace(message, content=list(content))
            entry_decision = "tool_call_approved" if record.approved else "tool_call_denied"
            conversation.record(state, entry_decision, record.audit())
    return Approvals(message=msgspec.structs.replace(message, content=content), records=records, _carried=carry)


_first = operator.itemgetter(0)
_BY_POLICY = Approve(by="policy")


async def _policy_verdict(policy: Callable[[ToolCallBlock], Any], call: ToolCallBlock) -> Any:
    try:
        return await _maybe_await(policy(call))
    except Exception as exc:
        return Deny(by="policy", reason=f"the approval policy failed ({type(exc).__name__}: {exc})")


async def _ask(approver: Approver | None, requests: list[ApprovalRequest]) -> list[Decision]:
    """The approver's decision for each request, a denial wherever there is none."""
    if approver is None:
        return [Deny(by="default", reason="approval needed and no approver was given")] * len(requests)
    by = f"approver:{_name(approver)}"
    try:
        answer = await _maybe_await(approver(requests))
    except Exception as exc:
        return [Deny(by=by, reason=f"the approver failed ({type(exc).__name__}: {exc})")] * len(requests)
    if not isinstance(answer, Mapping):
        return [Deny(by=by, reason=f"the approver returned {type(answer).__name__}, not a mapping")] * len(requests)
    out: list[Decision] = []
    for request in requests:
        decision = answer.get(request.call.id)
        if decision is None:
            out.append(Deny(by="default", reason="no decision was given (default deny)"))
        elif not isinstance(decision, (Approve, Deny)):
            out.append(Deny(by=by, reason=f"{decision!r} is not a decision (Approve or Deny)"))
        elif decision.by is None:
            out.append(msgspec.structs.replace(decision, by=by))
        else:
            out.append(decision)
    return out


def _apply(
    block: ToolCallBlock, decision: Decision, label: str, registry: ToolRegistry
) -> tuple[ToolCallBlock, DecisionRecord]:
    """The call's new state and the record of the decision."""
    by = decision.by or "policy"
    if isinstance(decision, Deny):
        denied = msgspec.structs.replace(block, approval="denied")
        return denied, _record(denied, False, by, decision.reason or None, label)
    arguments = block.arguments
    if decision.arguments is not None:
        given = decision.arguments
        arguments = given if isinstance(given, str) else msgspec.json.encode(given).decode()
    if arguments == block.arguments:
        approved = msgspec.structs.replace(block, approval="approved")
        return approved, _record(approved, True, by, decision.reason, label)
    tool = registry.get(block.name)
    try:
        if tool is not None:
            tool.decode(arguments)
    except (msgspec.DecodeError, ValueError) as exc:
        return _apply(block, Deny(by=by, reason=f"the edited arguments do not fit the tool: {exc}"), label, registry)
    approved = msgspec.structs.replace(block, arguments=arguments, approval="approved")
    return approved, _record(approved, True, by, decision.reason, label, asked=block)


def _record(
    call: ToolCallBlock, approved: bool, by: str, reason: str | None, label: str, asked: ToolCallBlock | None = None
) -> DecisionRecord:
    return DecisionRecord(
        call_id=call.id,
        tool=call.name,
        approved=approved,
        by=by,
        reason=reason,
        policy=label,
        fingerprint=fingerprint(call),
        asked_fingerprint=fingerprint(asked) if asked is not None else None,
    )
