"""The agent loop: a model, tools and a conversation, step by step, every decision recorded.

::

    agent = Agent(provider, model="gpt-4o", tools=registry, approver=ask_the_user, max_tokens=1024)
    answer = agent.run("What does notes.txt say?")          # an AssistantMessage
    for event in agent.stream("And todo.txt?"):              # the model's events and the loop's
        ...
    agent.conversation.export_audit("trail.json")            # every step, hash-chained

One step (``step()``; ``run()`` repeats it until no tool call is left, the context builder says
the agent is idle, or ``max_steps`` model calls were made):

1. *resolve*: pending file references, images and MCP resources of the messages not resolved
   yet (``msgwire.harness.resources.resolve``, when the agent has resolvers); a message that
   changed is recorded again (``resources_resolved``);
2. *context*: ``build_context(conversation)``: by default ``msgwire.context.build(
   conversation.session(), window=context_window)`` with the agent's encouragement counter, the
   failed turns (assistant messages stopped by ``error`` or ``aborted``) left out; then the token
   ``budget``, when given, prunes MCP resources from what is sent;
3. *request*: a ``msgwire.Request``: the context's messages and system prompt, the tools'
   declarations, the agent's model and ``settings``;
4. *stream*: ``provider.stream`` (sync calls) or ``provider.astream`` (async), the events passed
   on as they arrive, the message assembled by the wire layer; a failed stream keeps its partial
   message in the conversation with an ``error`` entry, and is sent again (``retries``, for
   failures worth it: the network, a cut stream, a retryable provider error) or raised
   (``on_error="raise"``) or ends the run (``on_error="stop"``);
5. *record*: the message, decision ``planning`` (no call) or ``tool_call_requested``, its audit
   the step, the model call's duration and how many lossy steps its request had;
6. *approve and run*: ``ToolRunner``: each call decided (``tool_call_approved`` /
   ``tool_call_denied``: the tool's ``ApprovalPolicy``, or the agent's ``policy`` for every tool;
   ``"ask"`` goes to the ``approver``, none means denied), approved calls run concurrently, every
   call gets a result (``tool_executed``, ``tool_failed``, ``permission_denied``, ...).

Sync and async: ``run`` / ``step`` / ``stream`` run the loop on the agent's own event loop in the
calling thread and call ``provider.stream``; ``arun`` / ``astep`` / ``astream`` run in the
caller's loop and call ``provider.astream``. Cancelling (``Ctrl-C``, closing the ``stream()``
generator, cancelling the task) closes the HTTP response at once; the partial message is kept
(``stop_reason="aborted"``, an ``error`` entry) and running tools get ``interrupted`` results.

The swarm's hook: ``build_context`` decides what the model sees each step, and ``run(None)``
(``step(None)``, ``arun(None)``) takes a step without new user input: with the default builder
that is the synthetic "continue" of ``msgwire.context.build`` while no real user message exists,
counted by ``agent.counter``; ``agent.idle`` turns true on the third in a row, and the run that
sent it stops after that step (``RunEnd.reason == "idle"``).

Replay: ``replay(conversation, provider, model=...)`` re-runs the recorded model turns against
another model (see its docstring).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import msgspec

from msgwire import context as wire_context
from msgwire.errors import ProviderError, StreamError, TransportError, TruncatedStreamError, UsageError
from msgwire.formats import RequestCache
from msgwire.types import (
    AssistantMessage,
    ContentBlock,
    Context,
    EncouragementCounter,
    FileReferenceBlock,
    ImageBlock,
    LossReport,
    MCPResourceBlock,
    Message,
    Request,
    TextBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .conversation import Conversation
from .events import (
    AgentEvent,
    ApprovalRequested,
    RunEnd,
    StepEnd,
    StepStart,
    StopReason,
    StreamFailed,
    ToolDecided,
    ToolFinished,
    ToolStarted,
)
from .tools import ApprovalPolicy, ApprovalRequest, Approver, BaseTool, ToolRegistry, ToolRunner
from .tools.approval import check_policy

if TYPE_CHECKING:
    from .providers import Provider
    from .replay import ReplayReport
    from .resources import FileResolver, ImageRecognizer, TokenBudget

__all__ = ["Agent", "BuildContext", "Prompt", "ProviderVision", "replay"]

Prompt = str | UserMessage | list[ContentBlock]
"""What ``run`` takes as new user input: text, a user message, or its blocks."""
BuildContext = Callable[[Conversation], Context]
"""``build_context(conversation) -> msgwire.Context``: what the model sees each step."""
_T = TypeVar("_T")
_FAILED = ("error", "aborted")


class _Resolver(Protocol):
    def resolve_message(self, message: Message, /) -> Message: ...


class _IO:
    """How one run talks to its caller: ``emit`` (``None``: nobody listens, no loop event is
    made), ``sync`` (call ``provider.stream``, not ``astream``), ``pump`` (give the loop a turn
    after each model event, so a ``stream()`` reader sees it at once)."""

    __slots__ = ("emit", "pump", "sync")

    def __init__(self, emit: Callable[[AgentEvent], None] | None, *, sync: bool, pump: bool = False) -> None:
        self.emit = emit
        self.sync = sync
        self.pump = pump


class _Pending:
    """The events a running step emits, and the wake-up of whoever waits to read them
    (``stream`` on its own loop, ``astream`` on the caller's)."""

    def __init__(self) -> None:
        self.events: collections.deque[AgentEvent] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def emit(self, event: AgentEvent) -> None:
        self.events.append(event)
        self.wake()

    def wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def wait(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done at the next event or at the end of the run."""
        self._waiter = loop.create_future()
        return self._waiter


class _Recording:
    """The conversation as the tool runner's recorder, telling the caller each result."""

    __slots__ = ("conversation", "emit", "step")

    def __init__(self, conversation: Conversation, emit: Callable[[AgentEvent], None], step: int) -> None:
        self.conversation = conversation
        self.emit = emit
        self.step = step

    def __contains__(self, message_id: object, /) -> bool:
        return message_id in self.conversation

    def record(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None, /) -> object:
        entry = self.conversation.record(message, decision, audit)
        if type(message) is ToolResultMessage:
            self.emit(ToolFinished(step=self.step, result=message))
        return entry


def _takes_cache(provider: Provider) -> bool:
    """Whether ``provider.stream`` takes a ``formats.RequestCache`` (``cache=``)."""
    try:
        return "cache" in inspect.signature(provider.stream).parameters
    except (TypeError, ValueError):  # no signature to read
        return False


class Agent:
    """The loop (see the module docs). Keyword options:

    - ``model``: the model of every request (else the provider's default); ``settings``: a
      ``msgwire.Request`` whose settings every request takes (``temperature``, ``reasoning``,
      ``tool_choice``, ``stop``, ``extra``...), ``max_tokens`` a shortcut for its own;
    - ``tools``: a ``ToolRegistry`` (or tools to make one); ``policy``: an ``ApprovalPolicy`` for
      every tool instead of each tool's own; ``approver``: asked about ``"ask"`` calls (none:
      they are denied); ``tool_limit`` / ``tool_timeout`` / ``deps``: the ``ToolRunner``'s;
    - ``conversation``: the ``Conversation`` to continue (a new one with ``system_prompt``
      otherwise);
    - ``max_steps``: model calls per run (25); ``retries``: how many times a failed stream worth
      it is sent again (0); ``on_error``: ``"raise"`` the stream's error after its retries, or
      ``"stop"`` the run with the partial message;
    - ``context_window`` (50 messages) or ``build_context`` (the swarm's hook);
    - ``files`` / ``images`` / ``mcp``: resolvers of file references (``@path:10-20`` mentions
      in prompts are parsed when ``files`` is given), images and MCP resources; ``role``: whose
      permissions file references are read with (a tool result's: the tool's name); ``budget``:
      a ``TokenBudget`` for what is sent.

    Close it (``close()``, or ``with``) to stop its event loop and tool threads.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        model: str | None = None,
        tools: ToolRegistry | Iterable[BaseTool | Callable[..., Any]] | None = None,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
        conversation: Conversation | None = None,
        system_prompt: str | None = None,
        max_steps: int = 25,
        max_tokens: int | None = None,
        settings: Request | None = None,
        context_window: int | None = 50,
        build_context: BuildContext | None = None,
        files: FileResolver | None = None,
        images: ImageRecognizer | None = None,
        mcp: _Resolver | None = None,
        budget: TokenBudget | None = None,
        role: str = "user",
        retries: int = 0,
        on_error: Literal["raise", "stop"] = "raise",
        tool_limit: int = 16,
        tool_timeout: float | None = None,
        deps: Any = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if retries < 0:
            raise ValueError(f"retries must not be negative, got {retries}")
        if on_error not in ("raise", "stop"):
            raise ValueError(f"on_error is 'raise' or 'stop', got {on_error!r}")
        if conversation is not None and system_prompt is not None:
            raise ValueError("give the system prompt to the conversation, or no conversation")
        self.provider = provider
        #: The requests of this conversation (``formats.RequestCache``), kept between steps so
        #: that each step's body is written from where the history changed (for a provider whose
        #: ``stream`` takes one: ``HTTPProvider`` and its subclasses).
        self.request_cache = RequestCache()
        self._sends = {"cache": self.request_cache} if _takes_cache(provider) else {}
        self.model = model
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools or ())
        self._policy = check_policy(policy) if policy is not None else None
        self.approver = approver
        self.conversation = conversation if conversation is not None else Conversation(system_prompt=system_prompt)
        self.max_steps = max_steps
        template = settings if settings is not None else Request()
        if max_tokens is not None:
            template = msgspec.structs.replace(template, max_tokens=max_tokens)
        self.settings = template
        self.context_window = context_window
        self.build_context: BuildContext = build_context if build_context is not None else self.default_context
        self.files = files
        self.images = images
        self.mcp = mcp
        self.budget = budget
        self.role = role
        self.retries = retries
        self.on_error = on_error
        self.counter = EncouragementCounter()
        """The encouragement counter of the last context built (``msgwire.context``)."""
        self.context: Context | None = None
        """The last context built."""
        self.steps = 0
        """Model calls made so far (the next step's number)."""
        self.tool_limit = tool_limit
        self.tool_timeout = tool_timeout
        self.deps = deps
        self._runner: ToolRunner | None = None
        self._runner_key: tuple[int, int, object] | None = None
        self._resolved: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._busy = False
        self._closed = False

    def __repr__(self) -> str:
        return f"Agent({self.provider!r}, model={self.model!r}, tools={self.tools.names}, steps={self.steps})"

    # --- settings -----------------------------------------------------------------------------

    @property
    def policy(self) -> ApprovalPolicy | None:
        """The approval policy of every tool (``None``: each tool's own)."""
        return self._policy

    @policy.setter
    def policy(self, value: ApprovalPolicy | None) -> None:
        self._policy = check_policy(value) if value is not None else None

    @property
    def idle(self) -> bool:
        """The last context built was the builder's idle one (``agent.counter.idle``)."""
        return self.counter.idle

    def default_context(self, conversation: Conversation) -> Context:
        """The default ``build_context``: ``msgwire.context.build`` over the conversation
        (``context_window`` messages, the agent's counter), failed turns left out."""
        session = conversation.session()
        messages = session.messages
        if any(type(m) is AssistantMessage and m.stop_reason in _FAILED for m in messages):
            session.messages = [m for m in messages if not (type(m) is AssistantMessage and m.stop_reason in _FAILED)]
        return wire_context.build(session, window=self.context_window, counter=self.counter)

    # --- sync calls -----------------------------------------------------------------------------

    def run(self, prompt: Prompt | None = None) -> AssistantMessage:
        """Add ``prompt`` (``None``: no new input) and step until the model answers without a
        tool call, the agent is idle, or ``max_steps``: the last model message."""
        return self._sync("run", self._run(prompt, _IO(None, sync=True)))

    def step(self, prompt: Prompt | None = None) -> StepEnd:
        """One step: add ``prompt`` (if any), one model call, its tools run."""
        return self._sync("step", self._one(prompt, _IO(None, sync=True)))

    def stream(self, prompt: Prompt | None = None) -> Iterator[AgentEvent]:
        """``run``, yielding the model's events and the loop's as they happen
        (``msgwire.harness.events``). Closing the generator cancels the run."""
        loop = self._event_loop()
        self._not_in_a_loop("stream")
        queue = _Pending()
        task = loop.create_task(self._run(prompt, _IO(queue.emit, sync=True, pump=True)))
        task.add_done_callback(lambda _: queue.wake())
        try:
            while True:
                while queue.events:
                    yield queue.events.popleft()
                if task.done():
                    break
                loop.run_until_complete(queue.wait(loop))
            task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)

    # --- async calls ----------------------------------------------------------------------------

    async def arun(self, prompt: Prompt | None = None) -> AssistantMessage:
        """``run`` for asyncio (``provider.astream``)."""
        return await self._run(prompt, _IO(None, sync=False))

    async def astep(self, prompt: Prompt | None = None) -> StepEnd:
        """``step`` for asyncio."""
        return await self._one(prompt, _IO(None, sync=False))

    async def astream(self, prompt: Prompt | None = None) -> AsyncIterator[AgentEvent]:
        """``stream`` for asyncio; cancelling the reading task (or ``aclose()``) cancels the run."""
        loop = asyncio.get_running_loop()
        queue = _Pending()
        task = loop.create_task(self._run(prompt, _IO(queue.emit, sync=False)))
        task.add_done_callback(lambda _: queue.wake())
        try:
            while True:
                while queue.events:
                    yield queue.events.popleft()
                if task.done():
                    break
                await queue.wait(loop)
            task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    # --- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the agent's event loop and its tool threads (the provider and the resolvers are
        yours to close)."""
        self._closed = True
        if self._runner is not None:
            self._runner.close()
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    # --- the loop ------------------------------------------------------------------------------

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._closed:
            raise UsageError("this agent is closed")
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    @staticmethod
    def _not_in_a_loop(name: str) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        raise UsageError(f"Agent.{name}() is for synchronous code: inside an event loop use Agent.a{name}()")

    def _sync(self, name: str, work: Coroutine[Any, Any, _T]) -> _T:
        try:
            self._not_in_a_loop(name)
            loop = self._event_loop()
        except UsageError:
            work.close()
            raise
        return loop.run_until_complete(work)

    def _claim(self) -> None:
        if self._busy:
            raise UsageError("this agent is already running: one run (or step) at a time")
        self._busy = True

    async def _run(self, prompt: Prompt | None, io: _IO) -> AssistantMessage:
        self._claim()
        try:
            if prompt is not None:
                self._add_prompt(prompt)
            usage = Usage()
            reason: StopReason = "max_steps"
            taken = 0
            while taken < self.max_steps:
                taken += 1
                step = await self._step(io)
                if step.message.usage is not None:
                    usage += step.message.usage
                if step.error is not None:
                    reason = "error"
                    break
                if step.idle:
                    reason = "idle"
                    break
                if step.done:
                    reason = "end_turn"
                    break
            if io.emit is not None:
                io.emit(RunEnd(message=step.message, steps=taken, reason=reason, usage=usage))
            return step.message
        finally:
            self._busy = False

    async def _one(self, prompt: Prompt | None, io: _IO) -> StepEnd:
        self._claim()
        try:
            if prompt is not None:
                self._add_prompt(prompt)
            return await self._step(io)
        finally:
            self._busy = False

    def _add_prompt(self, prompt: Prompt) -> None:
        if isinstance(prompt, UserMessage):
            message = prompt
        elif isinstance(prompt, str):
            message = UserMessage(content=[TextBlock(text=prompt)])
        elif isinstance(prompt, list):
            message = UserMessage(content=list(prompt))
        else:
            raise TypeError(f"a prompt is text, a UserMessage or a list of blocks, got {type(prompt).__name__}")
        if self.files is not None:
            from .resources import parse_mentions  # the resources package is imported by who uses it

            message = parse_mentions(message, exists=self.files.exists)
        self.conversation.add(message)

    async def _step(self, io: _IO) -> StepEnd:
        number = self.steps
        self.steps += 1
        if self.files is not None or self.images is not None or self.mcp is not None:
            if io.sync:
                self._resolve_new()
            else:
                await asyncio.to_thread(self._resolve_new)
        context = self.build_context(self.conversation)
        self.context, self.counter = context, context.counter
        messages = context.messages
        pruned: list[Any] = []
        if self.budget is not None:
            kept = self.budget.prune(messages)
            messages, pruned = kept.messages, kept.removed
        request = self._request(context, messages)
        synthetic = context.synthetic is not None
        emit = io.emit
        if emit is not None:
            emit(StepStart(step=number, messages=len(messages), synthetic=synthetic))
        message, failure, audit = await self._call(request, number, io)
        if pruned:
            audit["pruned"] = [msgspec.to_builtins(record) for record in pruned]
        if failure is not None:
            step = StepEnd(step=number, message=message, synthetic=synthetic, idle=context.idle, error=str(failure))
            if emit is not None:
                emit(step)
            if self.on_error == "raise":
                raise failure
            return step
        self.conversation.add(message, None, audit)
        results: list[ToolResultMessage] = []
        if message.tool_calls:
            results = await self._run_tools(message, number, io)
        step = StepEnd(step=number, message=message, results=results, synthetic=synthetic, idle=context.idle)
        if emit is not None:
            emit(step)
        return step

    def _request(self, context: Context, messages: list[Message]) -> Request:
        template = self.settings
        return msgspec.structs.replace(
            template,
            model=self.model or template.model,
            messages=messages,
            system_prompt=context.system_prompt,
            tools=self.tools.specs if len(self.tools) else template.tools,
        )

    # --- the model call ----------------------------------------------------------------------

    async def _call(
        self, request: Request, number: int, io: _IO
    ) -> tuple[AssistantMessage, StreamError | None, dict[str, Any]]:
        """The model's message (the partial one of the last attempt when it failed), the
        failure, and the audit of the message's entry."""
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            message, failure, report = await self._attempt(request, io)
            audit: dict[str, Any] = {"step": number, "duration_ms": round((time.perf_counter() - started) * 1000, 3)}
            if attempt > 1:
                audit["attempt"] = attempt
            if report:
                audit["lossy_steps"] = len(report)
            if failure is None:
                return message, None, audit
            retrying = attempt <= self.retries and _worth_retrying(failure)
            audit |= {"error": str(failure), "kind": failure.kind, "retrying": retrying}
            if isinstance(failure, ProviderError) and failure.status is not None:
                audit["status"] = failure.status
            self.conversation.add(message, "error", audit)
            if io.emit is not None:
                io.emit(
                    StreamFailed(
                        step=number,
                        error=str(failure),
                        kind=failure.kind,
                        partial=message,
                        attempt=attempt,
                        retrying=retrying,
                    )
                )
            if not retrying:
                return message, failure, audit

    async def _attempt(self, request: Request, io: _IO) -> tuple[AssistantMessage, StreamError | None, LossReport]:
        emit = io.emit
        stream: Any = None
        try:
            if io.sync:
                stream = self.provider.stream(request, **self._sends)
                if emit is None:
                    for _ in stream:
                        pass
                else:
                    for event in stream:
                        emit(event)
                        if io.pump:
                            await asyncio.sleep(0)
            else:
                stream = await self.provider.astream(request, **self._sends)
                async for event in stream:
                    if emit is not None:
                        emit(event)
            return stream.message(), None, _report(stream)
        except StreamError as failure:  # the provider's, the network's, a cut or malformed stream
            partial = stream.message() if stream is not None else self._nothing(request)
            return partial, failure, _report(stream)
        except BaseException as stop:  # cancelled, interrupted: keep what arrived, then stop
            partial = stream.message() if stream is not None else self._nothing(request)
            if partial.stop_reason is None or partial.stop_reason == "error":
                partial = msgspec.structs.replace(partial, stop_reason="aborted")
            if isinstance(stop, (asyncio.CancelledError, KeyboardInterrupt)):
                audit = {"error": f"the run was interrupted ({type(stop).__name__})", "kind": "cancelled"}
                self.conversation.add(partial, "error", audit)
            raise
        finally:
            if stream is not None:
                if io.sync:
                    stream.close()
                else:
                    await stream.aclose()

    def _nothing(self, request: Request) -> AssistantMessage:
        """The partial message of a call that failed before any reply."""
        return AssistantMessage(stop_reason="error", model=request.model, provider=self.provider.dialect)

    # --- tools -----------------------------------------------------------------------------

    def _tool_runner(self) -> ToolRunner:
        policy = self._policy
        key = (id(self.tools), len(self.tools), policy)
        if self._runner is None or self._runner_key != key:
            if self._runner is not None:
                self._runner.close()
            registry = self.tools
            if policy is not None:
                registry = ToolRegistry(t.with_options(policy=policy) for t in self.tools)
            self._runner = ToolRunner(registry, limit=self.tool_limit, timeout=self.tool_timeout, deps=self.deps)
            self._runner_key = key
        return self._runner

    async def _run_tools(self, message: AssistantMessage, number: int, io: _IO) -> list[ToolResultMessage]:
        runner = self._tool_runner()
        emit = io.emit
        if emit is None:
            approvals = await runner.approve(message, conversation=self.conversation, approver=self.approver)
            return await runner.execute(approvals, conversation=self.conversation)
        approver = self.approver
        if approver is not None:
            approver = _announcing(approver, emit, number)
        recorder = _Recording(self.conversation, emit, number)
        approvals = await runner.approve(message, conversation=recorder, approver=approver)
        for record in approvals.records:
            emit(ToolDecided(step=number, record=record))
        return await runner.execute(
            approvals, conversation=recorder, on_start=lambda call: emit(ToolStarted(step=number, call=call))
        )

    # --- resources -----------------------------------------------------------------------------

    def _resolve_new(self) -> None:
        """Resolve the pending blocks of the messages not looked at yet; record those that changed."""
        from .resources import resolve

        for message in self.conversation.messages():
            if not isinstance(message, (UserMessage, ToolResultMessage)) or message.id in self._resolved:
                continue
            self._resolved.add(message.id)
            if not any(type(b) in _RESOLVABLE for b in message.content):
                continue
            role = self.role if isinstance(message, UserMessage) else message.tool_name or "agent"
            (new,) = resolve([message], files=self.files, images=self.images, mcp=self.mcp, role=role)
            if new is not message:
                self.conversation.update(new, "resources_resolved", {"blocks": _resolution(new)})

    # --- replay --------------------------------------------------------------------------------

    def replay(self, conversation: Conversation, **options: Any) -> tuple[Conversation, ReplayReport]:
        """``replay(conversation, self.provider, model=self.model, ...)``."""
        from .replay import replay as replay_conversation

        options.setdefault("model", self.model)
        return replay_conversation(conversation, self.provider, **options)


_RESOLVABLE = (FileReferenceBlock, ImageBlock, MCPResourceBlock)


def _report(stream: Any) -> LossReport:
    report = getattr(stream, "report", None)
    return report if isinstance(report, LossReport) else LossReport()


def _worth_retrying(failure: StreamError) -> bool:
    """A failure that the same request may not meet again: the network, a cut stream, a provider
    error it calls retryable (overloaded, rate limited, 5xx)."""
    if isinstance(failure, ProviderError):
        return failure.retryable
    return isinstance(failure, (TransportError, TruncatedStreamError))


def _announcing(approver: Approver, emit: Callable[[AgentEvent], None], number: int) -> Approver:
    """``approver``, telling the caller what it is about to be asked first."""

    def announce(requests: list[ApprovalRequest]) -> Any:
        emit(ApprovalRequested(step=number, requests=list(requests)))
        return approver(requests)

    announce.__qualname__ = getattr(approver, "__qualname__", type(approver).__name__)
    return announce


def _resolution(message: Message) -> list[dict[str, Any]]:
    """The audit of a resolution: each resolvable block's kind, what it names, status and error."""
    out = []
    for block in getattr(message, "content", ()):
        if type(block) is FileReferenceBlock:
            out.append({"type": "file_reference", "path": block.path, "status": block.status, "error": block.error})
        elif type(block) is ImageBlock:
            out.append({"type": "image", "mode_used": block.mode_used, "status": block.status, "error": block.error})
        elif type(block) is MCPResourceBlock:
            out.append(
                {"type": "mcp_resource", "uri": block.resource_uri, "status": block.status, "error": block.error}
            )
    return out


class ProviderVision:
    """A provider as the ``VisionModel`` image recognition asks
    (``ImageRecognizer(vision=ProviderVision(provider, model=...))``): it sees images when the
    capability table says the model does (``vision=True`` to say so for a model it does not
    know), and ``analyze`` is one non-streamed call."""

    def __init__(
        self, provider: Provider, *, model: str | None = None, max_tokens: int = 1024, vision: bool | None = None
    ) -> None:
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens
        self.vision = vision

    @property
    def sees_images(self) -> bool:
        if self.vision is not None:
            return self.vision
        return self.provider.capabilities(self.model).vision is True

    def analyze(self, message: UserMessage) -> AssistantMessage:
        return self.provider.complete(Request(messages=[message], model=self.model, max_tokens=self.max_tokens))


def replay(conversation: Conversation, provider: Provider, **options: Any) -> tuple[Conversation, ReplayReport]:
    """Re-run the recorded model turns of ``conversation`` against ``provider`` (see
    ``msgwire.harness.replay.replay``): the new conversation and the ``ReplayReport``."""
    from .replay import replay as replay_conversation

    return replay_conversation(conversation, provider, **options)
