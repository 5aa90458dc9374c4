"""The agent loop: a model, tools and a conversation, step by step, every decision recorded.

::

    agent = Agent(provider, model="gpt-4o", tools=registry, approver=ask_the_user, max_tokens=1024)
    answer = agent.run("What does notes.txt say?")          # an AssistantMessage
    for event in agent.stream("And todo.txt?"):              # the model's events and the loop's
        ...
    agent.conversation.export_audit("trail.json")            # every step, hash-chained

One step (``step()``; ``run()`` repeats it until no tool call is left, the context builder says
the agent is idle, or ``max_steps`` model calls were made):

0. ``before_step(agent)``, when given (the swarm delivers mail there);
1. *context* (``context``, a ``ContextPipeline``): pending file references, images and MCP
   resources resolved, the ``msgwire.Context`` built, the token budget applied
   (``msgwire.harness.pipeline``);
2. *request*: a ``msgwire.Request``: the context's messages and system prompt, the tools'
   declarations, the agent's model and ``settings``;
3. *stream*: ``provider.stream`` (sync calls) or ``provider.astream`` (async), the events passed
   on as they arrive, the message assembled by the wire layer; a failed stream keeps its partial
   message in the conversation with an ``error`` entry, and is sent again (``retries``, for
   failures worth it: the network, a cut stream, a retryable provider error) or raised
   (``on_error="raise"``) or ends the run (``on_error="stop"``);
4. *record*: the message, decision ``planning`` (no call) or ``tool_call_requested``, its audit
   the step, the model call's duration and how many lossy steps its request had;
5. *tools*: ``tool_step(message, step, emit)``; by default ``run_tools``: each call decided by the
   ``ToolRunner`` (``tool_call_approved`` / ``tool_call_denied``: the tool's ``ApprovalPolicy``,
   or the agent's ``policy`` for every tool; ``"ask"`` goes to the ``approver``, none means
   denied), approved calls run concurrently, every call gets a result (``tool_executed``,
   ``tool_failed``, ``permission_denied``, ...). Replay passes a step that serves recorded results;
6. ``after_step(agent, step_end)``, when given.

Sync and async: ``run`` / ``step`` / ``stream`` run the loop on the agent's own event loop in the
calling thread and call ``provider.stream``; ``arun`` / ``astep`` / ``astream`` run in the
caller's loop and call ``provider.astream``. One run at a time: a second one, from any thread,
raises ``UsageError`` before it starts; ``close()`` during a run cancels it and waits for its end
(a sync run in another thread too: the model's stream it reads is interrupted at once, the
connection shut down, rather than read to its end; a request still waiting for its reply's headers
or for a retry ends that wait first). A closed agent stays closed: continue its conversation with
a new one (``Agent(provider, conversation=agent.conversation)``).
Cancelling (``Ctrl-C``, closing the ``stream()`` generator, cancelling the task) closes the HTTP
response at once; the partial message is kept (``stop_reason="aborted"``, an ``error`` entry)
and running tools get ``interrupted`` results.

The swarm's hook: the context pipeline's ``build`` decides what the model sees each step, and
``run(None)`` (``step(None)``, ``arun(None)``) takes a step without new user input: with the
default builder that is the synthetic "continue" of ``msgwire.context.build`` while no real user
message exists, counted by ``agent.counter``; ``agent.idle`` turns true on the third in a row,
and the run that sent it stops after that step (``RunEnd.reason == "idle"``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from msgwire.errors import ProviderError, StreamError, TransportError, TruncatedStreamError, UsageError
from msgwire.formats import RequestCache
from msgwire.types import (
    AssistantMessage,
    ContentBlock,
    Context,
    EncouragementCounter,
    LossReport,
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
from .pipeline import ContextPipeline
from .tools import ApprovalPolicy, ApprovalRequest, Approver, BaseTool, ToolRegistry, ToolRunner, check_policy

if TYPE_CHECKING:
    from .providers import Provider

__all__ = ["AfterStep", "Agent", "BeforeStep", "Emit", "Prompt", "ToolStep"]

Prompt = str | UserMessage | list[ContentBlock]
"""What ``run`` takes as new user input: text, a user message, or its blocks."""
Emit = Callable[[AgentEvent], None]
"""Hands an event to whoever reads the run (``stream`` / ``astream``)."""
ToolStep = Callable[[AssistantMessage, int, Emit | None], Awaitable[list[ToolResultMessage]]]
"""``tool_step(message, step, emit) -> results``: answers the calls of the model's message, one
result per call, each recorded in the conversation (``emit`` is ``None`` when nobody listens)."""
BeforeStep = Callable[["Agent"], Any]
"""``before_step(agent)``, sync or async: called before each step's context is built."""
AfterStep = Callable[["Agent", StepEnd], Any]
"""``after_step(agent, step_end)``, sync or async: called as each step ends."""
_T = TypeVar("_T")


class _RunMode:
    """How one run talks to its caller: ``emit`` (``None``: nobody listens, no loop event is
    made), ``sync`` (call ``provider.stream``, not ``astream``), ``pump`` (give the loop a turn
    after each model event, so a ``stream()`` reader sees it at once)."""

    __slots__ = ("emit", "pump", "sync")

    def __init__(self, emit: Emit | None, *, sync: bool, pump: bool = False) -> None:
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
    """The conversation as the tool runner's recorder, telling the caller each result
    (``emit``, when given). ``stored``: the records of an async run are submitted
    (``Conversation.submit``: stored off the event loop, in order) and ``settle()`` waits until
    every one is stored; a sync run's are stored as they are made."""

    __slots__ = ("conversation", "emit", "step", "stored")

    def __init__(self, conversation: Conversation, emit: Emit | None, step: int, *, submit: bool) -> None:
        self.conversation = conversation
        self.emit = emit
        self.step = step
        self.stored: list[asyncio.Future[Any]] | None = [] if submit else None

    def __contains__(self, message_id: object, /) -> bool:
        return message_id in self.conversation

    def record(self, message: Message, decision: str, audit: Mapping[str, Any] | None = None, /) -> object:
        if self.stored is None:
            entry: object = self.conversation.record(message, decision, audit)
            self._told(message)
            return entry
        stored = self.conversation.submit(message, decision, audit, how="either")
        if stored.done():  # done already (no store that commits off the loop): as a sync run, now
            entry = stored.result()  # its failure raised here, to the runner, as `record` raises it
            self._told(message)
            return entry
        self.stored.append(stored)
        if self.emit is not None and type(message) is ToolResultMessage:

            def told(future: asyncio.Future[Any]) -> None:  # once stored: a result is told when it is stored
                if not future.cancelled() and future.exception() is None:
                    self._told(message)

            stored.add_done_callback(told)
        return stored

    def _told(self, message: Message) -> None:
        if self.emit is not None and type(message) is ToolResultMessage:
            self.emit(ToolFinished(step=self.step, result=message))

    async def settle(self) -> None:
        """Wait until every record submitted so far is stored (the first failure is raised)."""
        stored, self.stored = self.stored or [], [] if self.stored is not None else None
        outcomes = await asyncio.gather(*stored, return_exceptions=True)  # every one retrieved
        failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if failure is not None:
            raise failure


class Agent:
    """The loop (see the module docs). Keyword options:

    - ``model``: the model of every request (else the provider's default); ``settings``: a
      ``msgwire.Request`` whose settings every request takes (``temperature``, ``reasoning``,
      ``tool_choice``, ``stop``, ``extra``...), ``max_tokens`` a shortcut for its own;
    - ``tools``: a ``ToolRegistry`` (or tools to make one), or a ``ToolRunner`` (its registry,
      with its limit, timeout and ``deps``); ``policy``: an ``ApprovalPolicy`` for every tool
      instead of each tool's own; ``approver``: asked about ``"ask"`` calls (none: denied);
    - ``conversation``: the ``Conversation`` to continue (a new one with ``system_prompt``
      otherwise);
    - ``max_steps``: model calls per run (25); ``retries``: how many times a failed stream worth
      it is sent again (0), after the provider's backoff (``provider.retry``: 0.5 s, doubling,
      with jitter, by default); ``on_error``: ``"raise"`` the stream's error after its retries, or
      ``"stop"`` the run with the partial message;
    - ``context``: a ``ContextPipeline`` (resolvers, window, builder, token budget, role; by
      default a window of 50 messages and nothing to resolve);
    - ``tool_step``, ``before_step``, ``after_step``: the seams (see the module docs).

    Close it (``close()``, or ``with``) to stop its event loop.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        model: str | None = None,
        tools: ToolRegistry | ToolRunner | Iterable[BaseTool | Callable[..., Any]] | None = None,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
        conversation: Conversation | None = None,
        system_prompt: str | None = None,
        max_steps: int = 25,
        max_tokens: int | None = None,
        settings: Request | None = None,
        context: ContextPipeline | None = None,
        retries: int = 0,
        on_error: Literal["raise", "stop"] = "raise",
        tool_step: ToolStep | None = None,
        before_step: BeforeStep | None = None,
        after_step: AfterStep | None = None,
    ) -> None:
        if not callable(getattr(provider, "stream", None)) or not isinstance(getattr(provider, "dialect", None), str):
            raise TypeError(
                f"an agent needs a provider (msgwire.harness.providers.OpenAI(...), ...), got {type(provider).__name__}"
            )
        for name, count in (("max_steps", max_steps), ("retries", retries)):
            if not isinstance(count, int) or isinstance(count, bool):
                raise TypeError(f"{name} is an int, got {type(count).__name__}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if retries < 0:
            raise ValueError(f"retries must not be negative, got {retries}")
        if on_error not in ("raise", "stop"):
            raise ValueError(f"on_error is 'raise' or 'stop', got {on_error!r}")
        if conversation is not None and system_prompt is not None:
            raise ValueError("give the system prompt to the conversation, or no conversation")
        if context is not None and not isinstance(context, ContextPipeline):
            raise TypeError(f"context is a ContextPipeline, got {type(context).__name__}")
        self.provider = provider
        #: The requests of this conversation (``formats.RequestCache``), kept between steps so
        #: that each step's body is written from where the history changed.
        self.request_cache = RequestCache()
        self.model = model
        if isinstance(tools, ToolRunner):
            self.runner, self._own_runner = tools, False
        else:
            registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools or ())
            self.runner, self._own_runner = ToolRunner(registry), True
        self._policy = check_policy(policy) if policy is not None else None
        self.approver = approver
        self.conversation = conversation if conversation is not None else Conversation(system_prompt=system_prompt)
        self.max_steps = max_steps
        template = settings if settings is not None else Request()
        if max_tokens is not None:
            template = msgspec.structs.replace(template, max_tokens=max_tokens)
        self.settings = template
        self.context = context if context is not None else ContextPipeline()
        self.retries = retries
        self.on_error = on_error
        self.tool_step: ToolStep = tool_step if tool_step is not None else self.run_tools
        self.before_step = before_step
        self.after_step = after_step
        self.counter = EncouragementCounter()
        """The encouragement counter of the last context built (``msgwire.context``)."""
        self.last_context: Context | None = None
        """The last context built."""
        self.steps = 0
        """Model calls made so far (the next step's number)."""
        self._resolved: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._state = threading.Lock()  # guards _busy, _task, _closed, _reading
        self._busy = False
        self._idle = threading.Event()
        self._idle.set()
        self._task: asyncio.Task[Any] | None = None
        self._task_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._reading: Any = None  # the provider stream a sync run is reading (close() stops it)
        self._submitting = False  # the step under way is an async run's: run_tools submits its records

    def __repr__(self) -> str:
        return f"Agent({self.provider!r}, model={self.model!r}, tools={self.tools.names}, steps={self.steps})"

    # --- settings -----------------------------------------------------------------------------

    @property
    def tools(self) -> ToolRegistry:
        """The tools the model is told of (the runner's registry)."""
        return self.runner.registry

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

    # --- sync calls -----------------------------------------------------------------------------

    def run(self, prompt: Prompt | None = None) -> AssistantMessage:
        """Add ``prompt`` (``None``: no new input) and step until the model answers without a
        tool call, the agent is idle, or ``max_steps``: the last model message."""
        return self._sync("run", lambda: self._run(prompt, _RunMode(None, sync=True)))

    def step(self, prompt: Prompt | None = None) -> StepEnd:
        """One step: add ``prompt`` (if any), one model call, its tools run."""
        return self._sync("step", lambda: self._one(prompt, _RunMode(None, sync=True)))

    def stream(self, prompt: Prompt | None = None) -> Iterator[AgentEvent]:
        """``run``, yielding the model's events and the loop's as they happen
        (``msgwire.harness.events``). Closing the generator cancels the run."""
        self._not_in_a_loop("stream")
        loop = self._claim(self._event_loop)
        queue = _Pending()
        try:
            task = self._start(loop, self._run(prompt, _RunMode(queue.emit, sync=True, pump=True)), queue)
            while True:
                while queue.events:
                    yield queue.events.popleft()
                if task.done():
                    break
                loop.run_until_complete(queue.wait(loop))
            task.result()
        finally:
            self._finish_sync(loop)

    # --- async calls ----------------------------------------------------------------------------

    async def arun(self, prompt: Prompt | None = None) -> AssistantMessage:
        """``run`` for asyncio (``provider.astream``)."""
        loop = self._claim(asyncio.get_running_loop)
        try:
            return await self._start(loop, self._run(prompt, _RunMode(None, sync=False)))
        finally:
            self._release()

    async def astep(self, prompt: Prompt | None = None) -> StepEnd:
        """``step`` for asyncio."""
        loop = self._claim(asyncio.get_running_loop)
        try:
            return await self._start(loop, self._one(prompt, _RunMode(None, sync=False)))
        finally:
            self._release()

    async def astream(self, prompt: Prompt | None = None) -> AsyncIterator[AgentEvent]:
        """``stream`` for asyncio; cancelling the reading task (or ``aclose()``) cancels the run."""
        loop = self._claim(asyncio.get_running_loop)
        queue = _Pending()
        try:
            task = self._start(loop, self._run(prompt, _RunMode(queue.emit, sync=False)), queue)
            while True:
                while queue.events:
                    yield queue.events.popleft()
                if task.done():
                    break
                await queue.wait(loop)
            task.result()
        finally:
            if self._task is not None and not self._task.done():
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
            self._release()

    # --- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the agent: a run in progress (in another thread, or another task) is cancelled
        and waited for (a sync run's stream read is interrupted: ``ProviderStream.interrupt``);
        then its event loop and its tool runner (one it made) are closed. The provider and the
        resolvers are yours to close."""
        with self._state:
            self._closed = True
            task, task_loop, reading = self._task, self._task_loop, self._reading
        if task is not None and task_loop is not None and not task.done():
            if _running_loop() is task_loop:
                raise UsageError("close() was called from inside the agent's own run: let the run end first")
            task_loop.call_soon_threadsafe(task.cancel)
            if reading is not None:
                # a sync run reads its stream inside one step of its loop: the cancel above waits
                # for that step's end, the stream's; ending the read ends the step now
                _interrupt(reading)
            self._idle.wait()
        if self._own_runner:
            self.runner.close()
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

    # --- one run at a time -----------------------------------------------------------------------

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    @staticmethod
    def _not_in_a_loop(name: str) -> None:
        if _running_loop() is not None:
            raise UsageError(f"Agent.{name}() is for synchronous code: inside an event loop use Agent.a{name}()")

    def _claim(self, loop_of: Callable[[], asyncio.AbstractEventLoop]) -> asyncio.AbstractEventLoop:
        """Take the agent for one run (``UsageError`` when closed or already running), before
        anything touches an event loop; the loop the run will use."""
        with self._state:
            if self._closed:
                raise UsageError("this agent is closed")
            if self._busy:
                raise UsageError("this agent is already running: one run (or step) at a time")
            self._busy = True
            self._idle.clear()
        try:
            return loop_of()
        except BaseException:
            self._release()
            raise

    def _start(
        self, loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, _T], queue: _Pending | None = None
    ) -> asyncio.Task[_T]:
        task = loop.create_task(work)
        if queue is not None:
            task.add_done_callback(lambda _: queue.wake())
        with self._state:
            self._task, self._task_loop = task, loop
            closed = self._closed
        if closed:  # closed between the claim and now
            task.cancel()
        return task

    def _release(self) -> None:
        with self._state:
            self._busy = False
            self._task = self._task_loop = None
        self._idle.set()

    def _sync(self, name: str, work: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
        self._not_in_a_loop(name)
        loop = self._claim(self._event_loop)
        try:
            return loop.run_until_complete(self._start(loop, work()))
        finally:
            self._finish_sync(loop)

    def _finish_sync(self, loop: asyncio.AbstractEventLoop) -> None:
        """After a sync run: a task still going (the ``stream()`` reader left) is cancelled and
        run to its end on the agent's loop; then the agent is free again."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        self._release()

    # --- the loop ------------------------------------------------------------------------------

    async def _run(self, prompt: Prompt | None, mode: _RunMode) -> AssistantMessage:
        if prompt is not None:
            await self._add_prompt(prompt, mode)
        usage = Usage()
        reason: StopReason = "max_steps"
        taken = 0
        while taken < self.max_steps:
            taken += 1
            step = await self._step(mode)
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
        if mode.emit is not None:
            mode.emit(RunEnd(message=step.message, steps=taken, reason=reason, usage=usage))
        return step.message

    async def _one(self, prompt: Prompt | None, mode: _RunMode) -> StepEnd:
        if prompt is not None:
            await self._add_prompt(prompt, mode)
        return await self._step(mode)

    async def _add_prompt(self, prompt: Prompt, mode: _RunMode) -> None:
        if isinstance(prompt, UserMessage):
            message = prompt
        elif isinstance(prompt, str):
            message = UserMessage(content=[TextBlock(text=prompt)])
        elif isinstance(prompt, list):
            message = UserMessage(content=list(prompt))
        else:
            raise TypeError(f"a prompt is text, a UserMessage or a list of blocks, got {type(prompt).__name__}")
        await self._store(mode, self.context.read_prompt(message))

    async def _step(self, mode: _RunMode) -> StepEnd:
        if self.before_step is not None:
            await _call(self.before_step, self)
        number = self.steps
        self.steps += 1
        pipeline = self.context
        if pipeline.resolvers:
            if mode.sync:
                pipeline.resolve(self.conversation, self._resolved)
            else:
                await asyncio.to_thread(pipeline.resolve, self.conversation, self._resolved)
        context = pipeline.context(self.conversation, self.counter)
        self.last_context, self.counter = context, context.counter
        messages, pruned = pipeline.prune(context.messages)
        request = self._request(context, messages)
        synthetic = context.synthetic is not None
        emit = mode.emit
        if emit is not None:
            emit(StepStart(step=number, messages=len(messages), synthetic=synthetic))
        message, failure, audit = await self._call(request, number, mode)
        if pruned:
            audit["pruned"] = [msgspec.to_builtins(record) for record in pruned]
        if failure is not None:
            step = StepEnd(step=number, message=message, synthetic=synthetic, idle=context.idle, error=str(failure))
            if emit is not None:
                emit(step)
            if self.on_error == "raise":
                raise failure
            await self._after(step)
            return step
        await self._store(mode, message, None, audit)
        results: list[ToolResultMessage] = []
        if message.tool_calls:
            self._submitting = not mode.sync
            results = await self.tool_step(message, number, emit)
        step = StepEnd(step=number, message=message, results=results, synthetic=synthetic, idle=context.idle)
        if emit is not None:
            emit(step)
        await self._after(step)
        return step

    async def _store(
        self, mode: _RunMode, message: Message, decision: str | None = None, audit: Mapping[str, Any] | None = None
    ) -> None:
        """Append to the conversation: an async run awaits the store without holding up its
        event loop (``Conversation.aadd``: msgwire's SQL stores commit off the loop, together
        with the other appends of the moment); a sync run, whose loop is its own, appends."""
        if mode.sync:
            self.conversation.add(message, decision, audit)
        else:
            await self.conversation.aadd(message, decision, audit)

    async def _after(self, step: StepEnd) -> None:
        if self.after_step is not None:
            await _call(self.after_step, self, step)

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
        self, request: Request, number: int, mode: _RunMode
    ) -> tuple[AssistantMessage, StreamError | None, dict[str, Any]]:
        """The model's message (the partial one of the last attempt when it failed), the
        failure, and the audit of the message's entry."""
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            message, failure, report = await self._attempt(request, mode)
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
            await self._store(mode, message, "error", audit)
            if mode.emit is not None:
                mode.emit(
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
            await asyncio.sleep(_backoff(self.provider, attempt - 1))

    async def _attempt(
        self, request: Request, mode: _RunMode
    ) -> tuple[AssistantMessage, StreamError | None, LossReport]:
        emit = mode.emit
        stream: Any = None
        try:
            if mode.sync:
                stream = self.provider.stream(request, cache=self.request_cache)
                self._reading_from(stream)
                if emit is None:
                    for _ in stream:
                        pass
                else:
                    for event in stream:
                        emit(event)
                        if mode.pump:
                            await asyncio.sleep(0)
            else:
                stream = await self.provider.astream(request, cache=self.request_cache)
                next_batch = getattr(stream, "next_batch", None)  # a msgwire stream: a read's events at once
                if next_batch is None:
                    async for event in stream:
                        if emit is not None:
                            emit(event)
                else:
                    while events := await next_batch():
                        if emit is not None:
                            for event in events:
                                emit(event)
            return stream.message(), None, _report(stream)
        except StreamError as failure:  # the provider's, the network's, a cut or malformed stream
            partial = stream.message() if stream is not None else self._nothing(request)
            if mode.sync and getattr(stream, "interrupted", False):  # close() ended the read: a cancel
                self._keep_aborted(partial, "CancelledError")
                raise asyncio.CancelledError("the agent was closed") from failure
            return partial, failure, _report(stream)
        except BaseException as stop:  # cancelled, interrupted: keep what arrived, then stop
            partial = stream.message() if stream is not None else self._nothing(request)
            if isinstance(stop, (asyncio.CancelledError, KeyboardInterrupt)):
                self._keep_aborted(partial, type(stop).__name__)
            raise
        finally:
            if stream is not None:
                if mode.sync:
                    self._reading_from(None)
                    stream.close()
                else:
                    await stream.aclose()

    def _reading_from(self, stream: Any) -> None:
        """Tell ``close()`` which stream a sync run reads (``None``: none now); one that comes
        after ``close()`` was called is stopped at once."""
        with self._state:
            self._reading = stream
            closed = self._closed
        if closed and stream is not None:
            _interrupt(stream)

    def _keep_aborted(self, partial: AssistantMessage, why: str) -> None:
        """Record what arrived of a call that was stopped (cancelled, interrupted)."""
        if partial.stop_reason is None or partial.stop_reason == "error":
            partial = msgspec.structs.replace(partial, stop_reason="aborted")
        audit = {"error": f"the run was interrupted ({why})", "kind": "cancelled"}
        self.conversation.add(partial, "error", audit)

    def _nothing(self, request: Request) -> AssistantMessage:
        """The partial message of a call that failed before any reply."""
        return AssistantMessage(stop_reason="error", model=request.model, provider=self.provider.dialect)

    # --- tools ---------------------------------------------------------------------------------

    async def run_tools(self, message: AssistantMessage, step: int, emit: Emit | None) -> list[ToolResultMessage]:
        """The default ``tool_step``: the ``ToolRunner`` decides every call (the agent's
        ``policy`` over each tool's own, ``approver`` for ``"ask"``) and runs those approved;
        decisions and results are recorded in the conversation and emitted as events."""
        runner, policy = self.runner, self._policy
        submit = self._submitting
        if emit is None and not submit:
            approvals = await runner.approve(
                message, conversation=self.conversation, approver=self.approver, policy=policy
            )
            return await runner.execute(approvals, conversation=self.conversation)
        approver = self.approver
        if approver is not None and emit is not None:
            approver = _announcing(approver, emit, step)
        recorder = _Recording(self.conversation, emit, step, submit=submit)
        approvals = await runner.approve(message, conversation=recorder, approver=approver, policy=policy)
        await recorder.settle()  # the decisions stored before any call runs
        if emit is not None:
            for record in approvals.records:
                emit(ToolDecided(step=step, record=record))
        on_start = None if emit is None else (lambda call: emit(ToolStarted(step=step, call=call)))
        try:
            results = await runner.execute(approvals, conversation=recorder, on_start=on_start)
        except BaseException:
            with contextlib.suppress(Exception):  # what it recorded on its way out is stored before it goes on
                await recorder.settle()
            raise
        await recorder.settle()
        return results


def _interrupt(stream: Any) -> None:
    """Stop the read of a sync stream from another thread (``ProviderStream.interrupt``; a
    stream of another provider without one is left to end by itself)."""
    interrupt = getattr(stream, "interrupt", None)
    if callable(interrupt):
        interrupt()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _call(hook: Callable[..., Any], *args: Any) -> None:
    result = hook(*args)
    if inspect.isawaitable(result):
        await result


def _report(stream: Any) -> LossReport:
    report = getattr(stream, "report", None)
    return report if isinstance(report, LossReport) else LossReport()


def _backoff(provider: Provider, attempt: int) -> float:
    """The wait before a failed stream is sent again: the provider's ``retry`` policy's backoff."""
    return provider.retry.backoff(attempt)


def _worth_retrying(failure: StreamError) -> bool:
    """A failure that the same request may not meet again: the network, a cut stream, a provider
    error it calls retryable (overloaded, rate limited, 5xx)."""
    if isinstance(failure, ProviderError):
        return failure.retryable
    return isinstance(failure, (TransportError, TruncatedStreamError))


def _announcing(approver: Approver, emit: Emit, number: int) -> Approver:
    """``approver``, telling the caller what it is about to be asked first."""

    def announce(requests: list[ApprovalRequest]) -> Any:
        emit(ApprovalRequested(step=number, requests=list(requests)))
        return approver(requests)

    announce.__qualname__ = getattr(approver, "__qualname__", type(approver).__name__)
    return announce
