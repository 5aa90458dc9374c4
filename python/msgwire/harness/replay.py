"""Replay: a conversation's recorded model turns, run again against another model.

::

    replayed, report = replay(conversation, Anthropic(), model="claude-sonnet-4-5", tools=registry, max_tokens=1024)
    for turn in report.changed:
        print(turn.original_text, "->", turn.replayed_text)
    report.losses                     # what the target's dialect cannot carry of the recorded history

The recorded history is read in *segments*: the user input that opens one (a user message, or
several in a row: a direct message, an MCP resource as context, ...) and the model turns that
answered it, with their tool results. Replay adds each segment's input to a new conversation (the
same messages) and lets an ``Agent`` on the target answer it (replay is a client of the agent:
its ``tool_step`` is ``RecordedResults``), for as many model calls as the
recording made (plus ``extra_steps`` where the target needs more).

Tools: by default nothing runs again (no side effects): a call the target makes with the same
tool name and the same arguments (compared as JSON) as a recorded call of the segment gets that
call's recorded result (a copy answering the new call, its audit naming the recorded one); a call
with no recorded twin gets an error result saying so, which the target sees. With
``execute_tools=True`` the target's calls are approved and run by the agent as in a live run.
Either way the target must be told the tools: ``tools`` is a ``ToolRegistry`` or, when nothing
runs, the ``msgwire.Tool`` declarations.

The ``ReplayReport`` pairs the recorded turns with the replayed ones, segment by segment and in
order (``TurnReplay``: texts and calls of both, what changed, results reused / run / left
unanswered, an error), and holds ``losses``: the ``LossReport`` of the recorded history written in
the target's dialect (``formats.convert_request``: thinking of another provider dropped, images
it cannot carry, settings without a place...). The new conversation's metadata names the source
(``replay_of``); every entry of its trail is recorded as in a live run.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import msgspec

from msgwire.formats import convert_request
from msgwire.types import (
    AssistantMessage,
    LossReport,
    Message,
    Policy,
    Request,
    TextBlock,
    Tool,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    Usage,
    UserMessage,
    new_id,
    now,
)

from .agent import Agent, Emit
from .conversation import Conversation
from .events import ToolFinished
from .pipeline import ContextPipeline
from .tools import Approver, ToolRegistry

if TYPE_CHECKING:
    from .providers import Provider

__all__ = ["NOT_RECORDED", "RecordedResults", "ReplayOptions", "ReplayReport", "TurnReplay", "areplay", "replay"]

NOT_RECORDED = (
    "Not run: this is a replay, which reuses the recorded tool results, and no call to this tool with these "
    "arguments was recorded here."
)
"""The text of the result a call gets when it has no recorded twin (``execute_tools=False``)."""


class TurnReplay(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One recorded model turn beside its replayed counterpart (either may be missing: the target
    took fewer or more turns). Calls are written ``name(arguments)``."""

    segment: int
    original_id: str | None = None
    replayed_id: str | None = None
    original_text: str = ""
    replayed_text: str = ""
    original_calls: list[str] = msgspec.field(default_factory=list)
    replayed_calls: list[str] = msgspec.field(default_factory=list)
    original_stop: str | None = None
    replayed_stop: str | None = None
    reused: int = 0
    """Results reused from the recording."""
    executed: int = 0
    """Results of calls run again (``execute_tools=True``)."""
    unanswered: int = 0
    """Calls with no recorded twin, answered with ``NOT_RECORDED``."""
    error: str | None = None

    @property
    def text_changed(self) -> bool:
        return self.original_text != self.replayed_text

    @property
    def calls_changed(self) -> bool:
        return self.original_calls != self.replayed_calls

    @property
    def changed(self) -> bool:
        return self.text_changed or self.calls_changed or self.error is not None


class ReplayReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a replay did: the conversations (``source_id``, ``target_id``), the target
    (``dialect``, ``model``), every turn, the tokens the target used, and what the target's
    dialect could not carry of the recorded history (``losses``)."""

    source_id: str
    target_id: str
    dialect: str
    model: str | None
    turns: list[TurnReplay]
    losses: LossReport
    usage: Usage

    @property
    def changed(self) -> list[TurnReplay]:
        """The turns whose text or calls differ (or that failed)."""
        return [t for t in self.turns if t.changed]

    def summary(self) -> str:
        """One line per turn: ``= `` unchanged, ``~ `` changed, ``! `` failed."""
        lines = []
        for t in self.turns:
            mark = "!" if t.error else "~" if t.changed else "="
            calls = f" calls {t.original_calls} -> {t.replayed_calls}" if t.calls_changed else ""
            lines.append(f"{mark} segment {t.segment}: {t.original_text[:40]!r} -> {t.replayed_text[:40]!r}{calls}")
        return "\n".join(lines)


class _Segment:
    """The input that opens a segment and the recorded turns that answered it."""

    __slots__ = ("calls", "inputs", "results", "turns")

    def __init__(self) -> None:
        self.inputs: list[UserMessage] = []
        self.turns: list[AssistantMessage] = []
        self.results: list[ToolResultMessage] = []
        self.calls: dict[str, ToolCallBlock] = {}


def _segments(history: Sequence[Message]) -> list[_Segment]:
    segments = [_Segment()]
    for message in history:
        current = segments[-1]
        if isinstance(message, UserMessage):
            if current.turns:
                current = _Segment()
                segments.append(current)
            current.inputs.append(message)
        elif isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                continue  # a failed attempt: the turn that followed it is the one replayed
            current.turns.append(message)
            for call in message.tool_calls:
                current.calls[call.id] = call
        elif isinstance(message, ToolResultMessage):
            current.results.append(message)
    return [s for s in segments if s.inputs or s.turns]


def _key(name: str, arguments: str) -> tuple[str, str]:
    """A call by tool name and arguments, the arguments compared as JSON (key order ignored)."""
    try:
        canonical = msgspec.json.encode(msgspec.json.decode(arguments or "{}"), order="sorted").decode()
    except msgspec.DecodeError:
        canonical = arguments
    return name, canonical


def _signature(call: ToolCallBlock) -> str:
    return f"{call.name}({_key(call.name, call.arguments)[1]})"


class _Recorded:
    """The recorded results of a segment, by the call they answered; each is used once."""

    def __init__(self, segment: _Segment) -> None:
        self._by_call: dict[tuple[str, str], deque[ToolResultMessage]] = {}
        for result in segment.results:
            call = segment.calls.get(result.tool_call_id)
            if call is not None:
                self._by_call.setdefault(_key(call.name, call.arguments), deque()).append(result)

    def take(self, call: ToolCallBlock) -> ToolResultMessage | None:
        found = self._by_call.get(_key(call.name, call.arguments))
        return found.popleft() if found else None


class RecordedResults:
    """The tool step of a replay (an ``Agent``'s ``tool_step``): each call the target makes gets
    the recorded result of its twin in the current segment (``segment``), or ``NOT_RECORDED``;
    every result is recorded in ``conversation``."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.recorded: _Recorded | None = None

    async def __call__(self, message: AssistantMessage, step: int, emit: Emit | None) -> list[ToolResultMessage]:
        results = []
        for call in message.tool_calls:
            recorded = self.recorded.take(call) if self.recorded is not None else None
            audit: dict[str, Any] = {"tool": call.name, "call_id": call.id}
            if recorded is not None:
                result = msgspec.structs.replace(recorded, id=new_id(), tool_call_id=call.id, timestamp=now())
                audit |= {"status": result.status, "replayed_from": recorded.id}
            else:
                result = ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextBlock(text=NOT_RECORDED)],
                    is_error=True,
                    status="error",
                    error=ToolError(message=NOT_RECORDED),
                )
                audit |= {"status": "error", "replay": "no recorded result"}
            self.conversation.add(result, None, audit)
            if emit is not None:
                emit(ToolFinished(step=step, result=result))
            results.append(result)
        return results


class ReplayOptions(TypedDict, total=False):
    """The options of ``replay`` / ``areplay`` (see ``replay``)."""

    model: str | None
    tools: ToolRegistry | Sequence[Tool] | None
    execute_tools: bool
    extra_steps: int
    settings: Request | None
    max_tokens: int | None
    policy: Policy | None
    approver: Approver | None
    retries: int
    context: ContextPipeline | None


class _Replay:
    """One replay's state and its walk over the segments, shared by ``replay`` and ``areplay``."""

    def __init__(self, conversation: Conversation, provider: Provider, options: ReplayOptions) -> None:
        tools = options.get("tools")
        execute_tools = options.get("execute_tools", False)
        if execute_tools and not isinstance(tools, ToolRegistry):
            raise TypeError("execute_tools=True runs the tools: give them as a ToolRegistry")
        self.source = conversation
        self.provider = provider
        self.history = conversation.messages_for_model()
        self.segments = _segments(self.history)
        self.extra_steps = options.get("extra_steps", 2)
        settings = options.get("settings")
        template = settings if settings is not None else Request()
        declared: list[Tool] = []
        registry = None
        if isinstance(tools, ToolRegistry):
            registry = tools
        elif tools is not None:
            declared = list(tools)
            template = msgspec.structs.replace(template, tools=declared)
        self.target = Conversation(
            system_prompt=conversation.system_prompt,
            mode=conversation.mode,
            modes=conversation.modes,
            metadata={**conversation.metadata, "replay_of": conversation.id},
        )
        self.recorded = RecordedResults(self.target)
        self.agent = Agent(
            provider,
            model=options.get("model"),
            tools=registry,
            conversation=self.target,
            settings=template,
            max_tokens=options.get("max_tokens"),
            approver=options.get("approver"),
            retries=options.get("retries", 0),
            context=options.get("context"),
            on_error="stop",
            tool_step=None if execute_tools else self.recorded,
        )
        specs = registry.specs if registry is not None else declared
        policy = options.get("policy") or provider.policy
        whole = Request(messages=self.history, system_prompt=conversation.system_prompt, tools=specs)
        self.losses = convert_request(whole, provider.dialect, policy=policy).report
        self.turns: list[TurnReplay] = []
        self.usage = Usage()

    def close(self) -> None:
        self.agent.close()

    def walk(self) -> Iterator[None]:
        """Each segment's input added to the target; a pause (one ``yield``) wherever the target
        is to answer, for the caller to run the agent; the turns compared after it."""
        for index, segment in enumerate(self.segments):
            for message in segment.inputs:
                self.target.add(message, None, {"replayed_from": message.id})
            if not segment.turns:
                continue
            self.recorded.recorded = _Recorded(segment)
            self.agent.max_steps = len(segment.turns) + self.extra_steps
            start = len(self.target.messages())
            yield
            new = [m for m in self.target.messages()[start:] if isinstance(m, AssistantMessage)]
            for old, made in itertools.zip_longest(segment.turns, new):
                self.turns.append(self._turn(index, old, made))
                if made is not None and made.usage is not None:
                    self.usage += made.usage

    def _turn(self, index: int, old: AssistantMessage | None, made: AssistantMessage | None) -> TurnReplay:
        reused, executed, unanswered = self._tally(made) if made is not None else (0, 0, 0)
        failed = made is not None and made.stop_reason in ("error", "aborted")
        return TurnReplay(
            segment=index,
            original_id=old.id if old is not None else None,
            replayed_id=made.id if made is not None else None,
            original_text=old.text if old is not None else "",
            replayed_text=made.text if made is not None else "",
            original_calls=[_signature(c) for c in old.tool_calls] if old is not None else [],
            replayed_calls=[_signature(c) for c in made.tool_calls] if made is not None else [],
            original_stop=old.stop_reason if old is not None else None,
            replayed_stop=made.stop_reason if made is not None else None,
            reused=reused,
            executed=executed,
            unanswered=unanswered,
            error=self._error(made) if failed and made is not None else None,
        )

    def _tally(self, made: AssistantMessage) -> tuple[int, int, int]:
        """How the calls of ``made`` were answered, read off the target's trail: results reused
        from the recording, run again, left unanswered."""
        calls = {c.id for c in made.tool_calls}
        reused = executed = unanswered = 0
        for entry in self.target.entries:
            result = entry.message
            if type(result) is not ToolResultMessage or result.tool_call_id not in calls:
                continue
            if "replayed_from" in entry.audit:
                reused += 1
            elif entry.audit.get("replay") == "no recorded result":
                unanswered += 1
            else:
                executed += 1
        return reused, executed, unanswered

    def _error(self, made: AssistantMessage) -> str:
        for entry in reversed(self.target.entries):
            if entry.decision == "error" and getattr(entry.message, "id", None) == made.id:
                return str(entry.audit.get("error", "the model call failed"))
        return "the model call failed"

    def report(self) -> tuple[Conversation, ReplayReport]:
        return self.target, ReplayReport(
            source_id=self.source.id,
            target_id=self.target.id,
            dialect=self.provider.dialect,
            model=self.agent.model or self.provider.model,
            turns=self.turns,
            losses=self.losses,
            usage=self.usage,
        )


def replay(
    conversation: Conversation, provider: Provider, **options: Unpack[ReplayOptions]
) -> tuple[Conversation, ReplayReport]:
    """Re-run the recorded model turns of ``conversation`` against ``provider``; see the module
    docs. Options: ``model`` (else the provider's default); ``tools`` (a ``ToolRegistry``, or the
    ``msgwire.Tool`` declarations when nothing runs); ``execute_tools`` (run the target's calls
    instead of serving the recorded results); ``extra_steps`` (model calls the target may make
    beyond the recording's, per segment: 2); ``settings`` / ``max_tokens`` (the requests');
    ``policy`` (how blocks the target cannot carry are replayed, else the provider's);
    ``approver``, ``retries``, ``context`` (the agent's). Returns the new conversation and the
    ``ReplayReport``."""
    state = _Replay(conversation, provider, options)
    with contextlib.closing(state):
        for _ in state.walk():
            state.agent.run(None)
    return state.report()


async def areplay(
    conversation: Conversation, provider: Provider, **options: Unpack[ReplayOptions]
) -> tuple[Conversation, ReplayReport]:
    """``replay`` for asyncio (``provider.astream``)."""
    state = _Replay(conversation, provider, options)
    with contextlib.closing(state):
        for _ in state.walk():
            await state.agent.arun(None)
    return state.report()
