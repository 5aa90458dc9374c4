"""``ToolRunner``: approve, then run a message's tool calls concurrently; one result per call.

::

    runner = ToolRunner(registry, approver=ask_the_user, limit=16)
    results = await runner.run(message, conversation=conversation)   # approve, then execute
    # or in two steps:
    approvals = await runner.approve(message, conversation=conversation)
    results = await runner.execute(approvals, conversation=conversation)

Rules:

- one ``ToolResultMessage`` per call, in call order, always: denied, failed, timed out and
  interrupted calls included (``results.py`` says what each looks like);
- arguments are checked against the tool's schema before anything runs (msgspec decodes the raw
  text); a call runs only if it holds an approval for exactly its arguments (``approval.py``);
- approved calls run concurrently, at most ``limit`` at a time: async tools on the event loop,
  sync tools in a thread pool (context variables copied): by default one pool shared by every
  runner of the process, of ``SHARED_THREADS`` (32) threads at most, so a thousand agents do not
  make a thousand pools; ``threads=`` gives a runner a pool of its own; a sync tool declared
  ``blocking=False`` is called on the loop (no thread hand-off; no timeout can stop it);
- a tool with ``concurrency_safe=False`` runs alone: after every call before it has finished,
  before any call after it starts;
- a timeout (the tool's, else the runner's) ends the call with an error result; an async tool is
  cancelled, a sync one cannot be (its thread runs on, its ``ToolContext.cancelled`` is set);
- setting ``cancel`` (an ``asyncio.Event``) or cancelling the task running ``execute`` cancels
  the running tools: they, and the calls not started, get ``interrupted`` results (recorded
  before the ``CancelledError`` propagates, in the second case);
- with a ``conversation``, each result is recorded as soon as every call before it has one
  (decision ``tool_executed`` / ``tool_failed`` / ``permission_denied`` / ``tool_interrupted``;
  audit: tool, call id, status, fingerprint, duration, result size, and for a failure its kind);
- ``on_start(call)``, when given, is called as each approved call starts running (an agent's
  "tool started" event).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import operator
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import msgspec

from msgwire import AssistantMessage, ToolCallBlock, ToolResultMessage, dumps

from ..audit import RESULT_DECISIONS
from . import results as _results
from .approval import (
    Approvals,
    Approver,
    Recorder,
    carried,
    decide,
    fingerprint,
)
from .policy import ApprovalPolicy
from .registry import BaseTool, ToolContext, ToolRegistry

__all__ = ["SHARED_THREADS", "OnStart", "ToolRunner"]

OnStart = Callable[[ToolCallBlock], None]
"""Called with each approved call as it starts running."""

SHARED_THREADS = 32
"""Threads of the pool every runner shares for sync tools (unless given ``threads=``)."""
_RESULT = operator.attrgetter("result")
_MAX_NAMES = 20  # tools listed to a model that called one that does not exist
_shared: ThreadPoolExecutor | None = None
_shared_lock = threading.Lock()


def _shared_pool() -> ThreadPoolExecutor:
    global _shared
    pool = _shared
    if pool is None:
        with _shared_lock:
            if _shared is None:
                _shared = ThreadPoolExecutor(max_workers=SHARED_THREADS, thread_name_prefix="msgwire-tool")
            pool = _shared
    return pool


def _in_thread(pool: Executor, fn: Callable[..., Any], *args: Any) -> tuple[asyncio.Future[Any], Future[None]]:
    """``fn(*args)`` in ``pool``, in a copy of this context, its value (or exception) handed to a
    future of the running loop; and the pool's future of the work. ``run_in_executor`` without
    ``wrap_future``'s two futures chained by callbacks: a third of the round trip's CPU."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    run = contextvars.copy_context().run

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, run(fn, *args))
        except BaseException as exc:  # handed on as run_in_executor would
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(_settle, future, *outcome)

    return future, pool.submit(work)


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not future.done():  # cancelled meanwhile (a timeout, an interruption)
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


# The runner's own records are msgspec Structs: built in C, a third of what a dataclass costs,
# which counts on a call that does nothing (issue 30's per-call row).
class _Job(msgspec.Struct, gc=False):
    index: int
    call: ToolCallBlock
    tool: BaseTool
    arguments: Any
    fingerprint: str


class _Outcome(msgspec.Struct, gc=False):
    """A call's result, and what its audit says beside it (built only when it is recorded)."""

    result: ToolResultMessage
    fingerprint: str
    kind: str | None
    """The failure kind (``"domain"``, a ``FailureKind``, ``"denied"``, ...), ``None`` on success."""

    def audit(self) -> dict[str, Any]:
        result = self.result
        audit: dict[str, Any] = {
            "tool": result.tool_name,
            "call_id": result.tool_call_id,
            "status": result.status,
            "fingerprint": self.fingerprint,
        }
        if self.kind is not None and result.status == "error":
            audit["failure"] = "domain" if self.kind == "domain" else "infrastructure"
            if self.kind != "domain":
                audit["kind"] = self.kind
        if result.duration_ms is not None:
            audit["duration_ms"] = result.duration_ms
        audit["result_bytes"] = len(dumps(result.content))
        return audit


class ToolRunner:
    """Runs the tools of a ``ToolRegistry`` (see the module docstring).

    ``approver``: asked about calls whose policy is ``"ask"`` (none: they are denied).
    ``limit``: calls of one message at once.
    ``timeout``: seconds, for tools without their own (``None``: no limit).
    ``deps``: handed to tools through ``ToolContext.deps``.
    ``threads``: the pool sync tools run in (by default the one every runner shares); a pool
    given here is yours to shut down.
    ``failure_text``: what the model is told when a tool raises (``results.FailureText``:
    ``"message"``, the default, its type and message's first line; ``"type"``, its type only;
    or a function ``(tool name, exception) -> text``), since an exception's message may hold
    paths, SQL or credentials. ``ToolFailure`` text always goes as written.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        approver: Approver | None = None,
        limit: int = 16,
        timeout: float | None = None,
        deps: Any = None,
        threads: ThreadPoolExecutor | None = None,
        failure_text: _results.FailureText = "message",
    ) -> None:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"a ToolRunner runs the tools of a ToolRegistry, got {type(registry).__name__}")
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.registry = registry
        self.approver = approver
        self.limit = limit
        self.timeout = timeout
        self.deps = deps
        self.failure_text = _results.check_failure_text(failure_text)
        self._pool = threads

    # --- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Nothing to stop (the shared pool lives with the process; a pool given as ``threads``
        is its owner's): kept so that a runner can be used in ``with``."""

    def __enter__(self) -> ToolRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ToolRunner:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _threads(self) -> ThreadPoolExecutor:
        return self._pool if self._pool is not None else _shared_pool()

    # --- the steps --------------------------------------------------------------------------

    async def approve(
        self,
        message: AssistantMessage,
        *,
        conversation: Recorder | None = None,
        approver: Approver | None = None,
        policy: ApprovalPolicy | None = None,
    ) -> Approvals:
        """Decide the message's pending calls (``approval.decide``), with ``approver`` or the
        runner's; ``policy``, when given, over each tool's own."""
        _check_message(message)
        return await decide(message, self.registry, approver or self.approver, conversation=conversation, policy=policy)

    async def run(
        self,
        message: AssistantMessage,
        *,
        conversation: Recorder | None = None,
        approver: Approver | None = None,
        policy: ApprovalPolicy | None = None,
        cancel: asyncio.Event | None = None,
        on_start: OnStart | None = None,
    ) -> list[ToolResultMessage]:
        """``approve`` then ``execute``: the results, one per call, in call order."""
        approvals = await self.approve(message, conversation=conversation, approver=approver, policy=policy)
        return await self.execute(approvals, conversation=conversation, cancel=cancel, on_start=on_start)

    def run_sync(
        self,
        message: AssistantMessage,
        *,
        conversation: Recorder | None = None,
        approver: Approver | None = None,
        policy: ApprovalPolicy | None = None,
    ) -> list[ToolResultMessage]:
        """``run`` from synchronous code (starts an event loop: not from inside one)."""
        _check_message(message)
        return asyncio.run(self.run(message, conversation=conversation, approver=approver, policy=policy))

    async def execute(
        self,
        approvals: Approvals,
        *,
        conversation: Recorder | None = None,
        cancel: asyncio.Event | None = None,
        on_start: OnStart | None = None,
    ) -> list[ToolResultMessage]:
        """Run the granted calls of ``approvals.message``: the results, one per call, in call order
        (``on_start(call)`` as each starts)."""
        calls = approvals.message.tool_calls
        granted = {r.fingerprint for r in approvals.records if r.approved}
        outcomes: list[_Outcome | None] = [None] * len(calls)
        jobs: list[_Job] = []
        for index, call in enumerate(calls):
            job_or_outcome = self._prepare(index, call, approvals, granted)
            if isinstance(job_or_outcome, _Job):
                jobs.append(job_or_outcome)
            else:
                outcomes[index] = job_or_outcome
        emitter = _Emitter(outcomes, conversation)
        emitter.flush()  # the results of calls that do not run, up to the first that does
        try:
            for segment in _segments(jobs):
                if emitter.storing:  # the results before this segment stored first
                    await emitter.stored()
                if cancel is not None and cancel.is_set():
                    break
                if len(segment) == 1 and cancel is None:  # one call on its own: in this task, nothing to watch
                    job = segment[0]
                    outcomes[job.index] = await self._invoke(job, on_start)
                    emitter.flush()
                    # A call that awaited may have been interrupted from outside (and the tool
                    # may have swallowed it): pass it on. A sync call on the loop awaited
                    # nothing, and current_task() costs a system call (getpid, Python 3.11).
                    if job.tool.is_async or job.tool.blocking:
                        task = asyncio.current_task()
                        if task is not None and task.cancelling():
                            raise asyncio.CancelledError
                else:
                    await self._run_segment(segment, outcomes, emitter, cancel, on_start)
        except asyncio.CancelledError:
            _not_started(calls, outcomes)
            emitter.flush_quietly()
            raise
        if None in outcomes:
            _not_started(calls, outcomes)
        emitter.flush()
        return list(map(_RESULT, outcomes))  # every call has one now

    # --- internals --------------------------------------------------------------------------

    def _prepare(
        self,
        index: int,
        call: ToolCallBlock,
        approvals: Approvals,
        granted: set[str],
    ) -> _Job | _Outcome:
        """A job to run, or the result the call gets without running."""
        kept = carried(call, approvals)
        print_ = kept.fingerprint if kept is not None else fingerprint(call)
        tool = self.registry.get(call.name)
        if tool is None:
            names = self.registry.names
            listed = ", ".join(names[:_MAX_NAMES]) + (", ..." if len(names) > _MAX_NAMES else "")
            short = f"There is no tool named {call.name!r}. Available tools: {listed or 'none'}."
            failure = _results.infrastructure_failure(call, "unknown_tool", short)
            return _Outcome(failure, print_, "unknown_tool")
        try:
            handed, arguments = kept.take(tool) if kept is not None else (False, None)
            if not handed:
                arguments = tool.decode(call.arguments)
        except (msgspec.DecodeError, ValueError) as exc:
            text = str(exc) if " - at `" in str(exc) else f"{exc} - at `$`"
            short = f"Invalid arguments for tool {call.name!r}: {text}"
            failure = _results.infrastructure_failure(call, "invalid_arguments", short)
            return _Outcome(failure, print_, "invalid_arguments")
        if call.approval != "approved" or print_ not in granted:
            record = approvals.record_for(call.id)
            reason: str | None
            if call.approval == "approved":
                reason = "its arguments are not the ones approved (or no approval was recorded); it was not run"
            elif record is not None and not record.approved:
                reason = record.reason
            else:
                reason = "nobody approved it"
            return _Outcome(_results.denied(call, reason), print_, "denied")
        return _Job(index, call, tool, arguments, print_)

    async def _run_segment(
        self,
        jobs: list[_Job],
        outcomes: list[_Outcome | None],
        emitter: _Emitter,
        cancel: asyncio.Event | None,
        on_start: OnStart | None,
    ) -> None:
        """Jobs that may run together: ``limit`` workers take them in call order."""
        queue = iter(jobs)
        workers = [
            asyncio.create_task(self._work(queue, outcomes, emitter, on_start))
            for _ in range(min(self.limit, len(jobs)))
        ]
        waiter = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
        pending: set[asyncio.Future[Any]] = set(workers)
        try:
            while pending:
                watched = pending | {waiter} if waiter is not None else pending
                done, pending = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task is not waiter:
                        task.result()  # the recorder's error, or a bug in the runner: not silently
                if waiter is not None:
                    pending.discard(waiter)
                    if waiter.done():
                        await _interrupt(pending)
                        emitter.flush()
                        return
        except BaseException:
            await _interrupt(workers)  # cancelled from outside, or the recorder failed
            emitter.flush_quietly()
            raise
        finally:
            if waiter is not None:
                waiter.cancel()

    async def _work(
        self, jobs: Iterator[_Job], outcomes: list[_Outcome | None], emitter: _Emitter, on_start: OnStart | None
    ) -> None:
        try:
            for job in jobs:
                outcome = await self._invoke(job, on_start)  # catches the cancellation: an interrupted result
                outcomes[job.index] = outcome
                emitter.flush()
                if outcome.result.status == "interrupted":
                    return  # the jobs left get theirs as never started
        except asyncio.CancelledError:
            return  # cancelled before it took a job

    async def _invoke(self, job: _Job, on_start: OnStart | None = None) -> _Outcome:
        tool, call = job.tool, job.call
        if on_start is not None:
            on_start(call)
        context = ToolContext(call, self.deps) if tool.needs_context else None
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        started_at = datetime.now(UTC)  # msgwire's now() without its Python frame
        start = time.perf_counter()
        timer: asyncio.Timeout | None = None
        try:
            if tool.is_async:
                if timeout is None:
                    value = await tool.invoke(job.arguments, context)
                else:
                    async with asyncio.timeout(timeout) as timer:
                        value = await tool.invoke(job.arguments, context)
            elif not tool.blocking:  # it said it returns at once: the thread hand-off would cost more
                value = tool.invoke(job.arguments, context)
            else:
                future, work = _in_thread(self._threads(), tool.invoke, job.arguments, context)
                try:
                    if timeout is None:
                        value = await future
                    else:
                        async with asyncio.timeout(timeout) as timer:
                            value = await future
                except BaseException:
                    work.cancel()  # not started yet: it never will be
                    raise
            duration = (time.perf_counter() - start) * 1000
            result, kind = _results.success(call, value, started_at, duration)
            return _Outcome(result, job.fingerprint, kind)
        except _results.ToolFailure as raised:
            duration = (time.perf_counter() - start) * 1000
            return _Outcome(_results.domain_failure(call, raised, started_at, duration), job.fingerprint, "domain")
        except asyncio.CancelledError:
            if context is not None:
                context.cancelled.set()
            duration = (time.perf_counter() - start) * 1000
            return _Outcome(_results.interrupted(call, started_at, duration), job.fingerprint, "interrupted")
        except Exception as exc:
            duration = (time.perf_counter() - start) * 1000
            if timer is not None and timer.expired():
                if context is not None:
                    context.cancelled.set()
                short = f"Tool {call.name!r} timed out after {timeout:g} s."
                timed_out = _results.infrastructure_failure(
                    call, "timeout", short, exc=exc, started_at=started_at, duration_ms=duration
                )
                return _Outcome(timed_out, job.fingerprint, "timeout")
            short, unsaid = _results.exception_text(call.name, exc, self.failure_text)
            detail = _results.exception_detail(exc) + (f" ({unsaid})" if unsaid else "")
            recoverable = getattr(exc, "recoverable", True)
            crashed = _results.infrastructure_failure(
                call,
                "exception",
                short,
                detail=detail,
                exc=exc,
                recoverable=recoverable if isinstance(recoverable, bool) else True,
                started_at=started_at,
                duration_ms=duration,
            )
            return _Outcome(crashed, job.fingerprint, "exception")


def _check_message(message: object) -> None:
    if not isinstance(message, AssistantMessage):
        raise TypeError(
            f"a ToolRunner runs the tool calls of an AssistantMessage (the model's), got {type(message).__name__}"
        )


async def _interrupt(tasks: Any) -> None:
    """Cancel the tasks and wait until each has its (interrupted) result."""
    live = [t for t in tasks if not t.done()]
    for task in live:
        task.cancel()
    if live:
        await asyncio.wait(live)


def _not_started(calls: list[ToolCallBlock], outcomes: list[_Outcome | None]) -> None:
    """Interrupted results for the calls that never started (their segment was not reached)."""
    for index, call in enumerate(calls):
        if outcomes[index] is None:
            outcomes[index] = _Outcome(_results.interrupted(call), fingerprint(call), "interrupted")


def _segments(jobs: list[_Job]) -> list[list[_Job]]:
    """Runs of concurrency-safe jobs, each job that is not safe alone between them."""
    if len(jobs) < 2:
        return [jobs] if jobs else []
    segments: list[list[_Job]] = []
    for job in jobs:
        if job.tool.concurrency_safe and segments and segments[-1][0].tool.concurrency_safe:
            segments[-1].append(job)
        else:
            segments.append([job])
    return segments


class _Emitter(msgspec.Struct):
    """Records results in call order, each as soon as every earlier call has one. A recorder
    that stores off the event loop returns a future of the record (an async agent run's
    conversation): ``stored()`` waits for those, so the next calls start only once the results
    before them are stored and told, as with a recorder that stores at once."""

    outcomes: list[_Outcome | None]
    recorder: Recorder | None
    next: int = 0
    storing: list[asyncio.Future[Any]] = msgspec.field(default_factory=list)

    def flush(self) -> None:
        if self.recorder is None:
            return
        while self.next < len(self.outcomes) and (outcome := self.outcomes[self.next]) is not None:
            record = self.recorder.record(outcome.result, RESULT_DECISIONS[outcome.result.status], outcome.audit())
            if isinstance(record, asyncio.Future) and not record.done():
                self.storing.append(record)
            self.next += 1

    async def stored(self) -> None:
        """Wait until the records made so far are stored; the first failure is raised (a
        recorder that stores at once raises it from ``record``)."""
        storing, self.storing = self.storing, []
        await asyncio.wait(storing)  # not cancelled with this task: the records are the recorder's
        for record in storing:
            if not record.cancelled() and (failure := record.exception()) is not None:
                raise failure

    def flush_quietly(self) -> None:
        """Record what can be, on the way out of a failure (the first error is the one raised)."""
        with contextlib.suppress(Exception):
            self.flush()
