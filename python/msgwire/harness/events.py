"""The agent loop's own events, beside the model's.

``Agent.stream(prompt)`` yields the model's events as they arrive (``msgwire.Event``:
``message_start``, ``text_delta``, ``tool_call_begin``, ...) and these, in this order per step::

    step_start
      <the model's events>
      stream_failed                 (a failed stream: retried or not)
      approval_requested            (calls an approver is asked about, all at once)
      tool_decided    x calls       (approved or denied, by whom, why)
      tool_started    x approved    (as each starts running)
      tool_finished   x calls       (each result, in call order: denied ones too)
    step_end
    run_end                         (once, after the last step)

Every event is a frozen msgspec Struct tagged by ``"type"`` like the model's, so
``event.type`` (or ``isinstance``) tells them apart and ``msgwire.dumps``-style encoding works on
all of them. ``step`` numbers the agent's model calls, from 0, over its whole life.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, Union

import msgspec

from msgwire.types import AssistantMessage, Event, ToolCallBlock, ToolResultMessage, Usage

from .tools import ApprovalRequest, DecisionRecord

__all__ = [
    "AgentEvent",
    "ApprovalRequested",
    "LoopEvent",
    "RunEnd",
    "StepEnd",
    "StepStart",
    "StopReason",
    "StreamFailed",
    "ToolDecided",
    "ToolFinished",
    "ToolStarted",
]

StopReason = Literal["end_turn", "max_steps", "idle", "error"]
"""Why a run ended: no tool call left (``end_turn``), ``max_steps`` model calls made, the
context builder reported the agent idle (``idle``: its third synthetic nudge in a row was sent),
or a failed stream with ``on_error="stop"`` (``error``)."""


class _Loop(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type"):
    """Base of the loop's events: ``type`` is the ``"type"`` tag, which type checkers see as each
    class's own ``Literal`` (as for the model's events), so ``if event.type == "tool_decided":``
    narrows an ``AgentEvent`` to ``ToolDecided``."""

    if not TYPE_CHECKING:

        @property
        def type(self) -> str:
            return self.__struct_config__.tag


class StepStart(_Loop, tag="step_start", frozen=True, kw_only=True):
    """A model call is about to be made: ``messages`` is how many messages it sends,
    ``synthetic`` whether the context builder added a synthetic user message."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["step_start"]]

    step: int
    messages: int
    synthetic: bool = False


class StreamFailed(_Loop, tag="stream_failed", frozen=True, kw_only=True):
    """The model's stream failed (or never started): ``partial`` is what arrived (kept in the
    conversation with an ``error`` entry), ``retrying`` whether the loop sends the request
    again (``attempt`` counts from 1)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["stream_failed"]]

    step: int
    error: str
    kind: str
    partial: AssistantMessage
    attempt: int
    retrying: bool


class ApprovalRequested(_Loop, tag="approval_requested", frozen=True, kw_only=True):
    """The approver is about to be asked about these calls (their policy is ``"ask"``)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["approval_requested"]]

    step: int
    requests: list[ApprovalRequest]


class ToolDecided(_Loop, tag="tool_decided", frozen=True, kw_only=True):
    """One call was approved or denied (``record.approved``, ``by``, ``reason``, ``policy``,
    and the fingerprint of the arguments that will run)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_decided"]]

    step: int
    record: DecisionRecord


class ToolStarted(_Loop, tag="tool_started", frozen=True, kw_only=True):
    """An approved call started running (with the arguments approved)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_started"]]

    step: int
    call: ToolCallBlock


class ToolFinished(_Loop, tag="tool_finished", frozen=True, kw_only=True):
    """A call's result, recorded (every call gets one: denied, failed and interrupted too)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_finished"]]

    step: int
    result: ToolResultMessage


class StepEnd(_Loop, tag="step_end", frozen=True, kw_only=True):
    """A step is over: the model's ``message`` (the partial one when ``error`` is set) and the
    results of its calls. ``idle``: the context was the builder's idle one (the run stops after
    this step). ``Agent.step()`` returns this."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["step_end"]]

    step: int
    message: AssistantMessage
    results: list[ToolResultMessage] = msgspec.field(default_factory=list)
    synthetic: bool = False
    idle: bool = False
    error: str | None = None

    @property
    def done(self) -> bool:
        """No tool call left to answer: the model gave its answer (or the step failed)."""
        return self.error is not None or not self.message.tool_calls


class RunEnd(_Loop, tag="run_end", frozen=True, kw_only=True):
    """The run is over: its last model message, how many steps it took, why it stopped and the
    tokens its model calls used."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["run_end"]]

    message: AssistantMessage
    steps: int
    reason: StopReason
    usage: Usage = msgspec.field(default_factory=Usage)


LoopEvent = Union[StepStart, StreamFailed, ApprovalRequested, ToolDecided, ToolStarted, ToolFinished, StepEnd, RunEnd]
AgentEvent = Union[Event, LoopEvent]
"""What ``Agent.stream`` yields: the model's events and the loop's."""
