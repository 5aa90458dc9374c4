"""ToolRunner: concurrency, barriers, timeouts, cancellation, rich results, infra vs domain."""

from __future__ import annotations

import asyncio
import contextvars
import enum
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import AssistantMessage, ToolCallBlock, ToolResultMessage, formats
from msgwire.harness import (
    Conversation,
    ToolContext,
    ToolFailure,
    ToolOutput,
    ToolRegistry,
    ToolRunner,
)
from msgwire.harness.tools.run import SHARED_THREADS
from tests._support.strategies import examples

WAIT = 10.0  # seconds: how long a test waits for an event before it counts as a failure


def _calls(*calls: tuple[str, dict[str, Any]]) -> AssistantMessage:
    blocks = [ToolCallBlock(id=f"call_{i}", name=n, arguments=json.dumps(a)) for i, (n, a) in enumerate(calls)]
    return msgwire.assistant(blocks, stop_reason="tool_use")


def _run(runner: ToolRunner, message: AssistantMessage, **options: Any) -> list[ToolResultMessage]:
    return asyncio.run(runner.run(message, **options))


def _text(result: ToolResultMessage) -> str:
    return "".join(b.text for b in result.content if isinstance(b, msgwire.TextBlock))


class _Clock:
    """Start and end of each tool run, as the tools saw them (monotonic ns)."""

    def __init__(self) -> None:
        self.spans: dict[str, tuple[int, int]] = {}
        self.active = 0
        self.most_active = 0

    def start(self) -> int:
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        return time.monotonic_ns()

    def end(self, key: str, started: int) -> None:
        self.active -= 1
        self.spans[key] = (started, time.monotonic_ns())


def test_a_tool_that_is_not_concurrency_safe_runs_alone_between_safe_ones() -> None:
    clock = _Clock()
    both_started = {k: asyncio.Event() for k in ("a", "b", "c", "d")}
    registry = ToolRegistry()

    @registry.tool
    async def read(key: str, partner: str) -> str:
        started = clock.start()
        both_started[key].set()
        await asyncio.wait_for(both_started[partner].wait(), WAIT)  # only returns if the partner runs too
        clock.end(key, started)
        return key

    @registry.tool(concurrency_safe=False)
    async def write(key: str) -> str:
        started = clock.start()
        assert clock.active == 1  # nothing else is running
        await asyncio.sleep(0)  # give anything that could start a chance to
        assert clock.active == 1
        clock.end(key, started)
        return key

    message = _calls(
        ("read", {"key": "a", "partner": "b"}),
        ("read", {"key": "b", "partner": "a"}),
        ("write", {"key": "w"}),
        ("read", {"key": "c", "partner": "d"}),
        ("read", {"key": "d", "partner": "c"}),
    )
    with ToolRunner(registry) as runner:
        results = _run(runner, message)
    assert [_text(r) for r in results] == ["a", "b", "w", "c", "d"]
    spans = clock.spans
    # the write started after both earlier reads ended, and ended before the later ones started
    assert spans["w"][0] >= max(spans["a"][1], spans["b"][1])
    assert spans["w"][1] <= min(spans["c"][0], spans["d"][0])
    # and the reads around it overlapped (each waited for the other to start)
    assert spans["a"][0] < spans["b"][1]
    assert spans["b"][0] < spans["a"][1]
    # the results' own timestamps say the same
    by_id = {r.tool_call_id: r for r in results}
    assert by_id["call_2"].started_at >= by_id["call_1"].started_at  # type: ignore[operator]
    assert by_id["call_3"].started_at >= by_id["call_2"].started_at  # type: ignore[operator]


def test_concurrency_is_bounded_by_the_limit_and_sync_tools_run_in_the_pool_given() -> None:
    limit = 4
    barrier = threading.Barrier(limit, timeout=WAIT)  # breaks unless `limit` tools run at once
    lock = threading.Lock()
    running: list[int] = [0, 0]  # now, most
    threads: set[str] = set()
    registry = ToolRegistry()

    @registry.tool
    def work(n: int) -> int:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
            threads.add(threading.current_thread().name)
        barrier.wait()
        with lock:
            running[0] -= 1
        return n * n

    message = _calls(*[("work", {"n": n}) for n in range(3 * limit)])
    with (
        ThreadPoolExecutor(max_workers=limit, thread_name_prefix="own") as pool,
        ToolRunner(registry, limit=limit, threads=pool) as runner,
    ):
        results = _run(runner, message)
    assert [_text(r) for r in results] == [str(n * n) for n in range(3 * limit)]
    assert running[1] == limit
    assert len(threads) == limit
    assert all(t.startswith("own") for t in threads)


def test_every_runner_shares_one_bounded_pool_for_sync_tools() -> None:
    """A thousand agents are a thousand runners: their sync tools share one pool of at most
    SHARED_THREADS threads, not a pool each."""
    registry = ToolRegistry()

    @registry.tool
    def where() -> str:
        return threading.current_thread().name

    async def main() -> set[str]:
        runners = [ToolRunner(registry) for _ in range(200)]
        message = _calls(("where", {}))
        results = await asyncio.gather(*(r.run(message) for r in runners))
        return {_text(r) for rs in results for r in rs}

    names = asyncio.run(main())
    assert all(n.startswith("msgwire-tool") for n in names)
    tool_threads = [t for t in threading.enumerate() if t.name.startswith("msgwire-tool")]
    assert 1 <= len(tool_threads) <= SHARED_THREADS


def test_a_sync_tool_that_does_not_block_runs_on_the_loop_and_keeps_its_rules() -> None:
    """blocking=False: called on the event loop's thread, no hand-off; its result, its failure
    and its context are what a threaded call gets."""
    registry = ToolRegistry()
    seen: list[ToolCallBlock] = []

    @registry.tool(blocking=False)
    def where(n: int, context: ToolContext) -> str:
        seen.append(context.call)
        if n < 0:
            raise ToolFailure("negative")
        return threading.current_thread().name

    @registry.tool
    def where_threaded() -> str:
        return threading.current_thread().name

    message = _calls(("where", {"n": 1}), ("where", {"n": -1}), ("where_threaded", {}))
    with ToolRunner(registry) as runner:
        ok, failed, threaded = _run(runner, message)
    assert _text(ok) == threading.current_thread().name  # asyncio.run's loop runs on this thread
    assert (failed.status, _text(failed)) == ("error", "negative")
    assert _text(threaded).startswith("msgwire-tool")
    assert [c.id for c in seen] == ["call_0", "call_1"]
    assert [t.blocking for t in map(registry.get, ["where", "where_threaded"]) if t is not None] == [False, True]


def test_results_come_back_in_call_order_whatever_order_they_finish_in() -> None:
    gates = [asyncio.Event() for _ in range(4)]
    finished: list[int] = []
    registry = ToolRegistry()

    @registry.tool
    async def step(i: int) -> int:
        await asyncio.wait_for(gates[i].wait(), WAIT)
        finished.append(i)
        if i > 0:
            gates[i - 1].set()  # the last call finishes first, then each earlier one
        return i

    async def main() -> list[ToolResultMessage]:
        conversation = Conversation()
        with ToolRunner(registry) as runner:
            task = asyncio.create_task(
                runner.run(_calls(*[("step", {"i": i}) for i in range(4)]), conversation=conversation)
            )
            await asyncio.sleep(0)
            gates[3].set()
            results = await task
        recorded = [e.message for e in conversation.entries if e.decision == "tool_executed"]
        assert recorded == results
        return results

    results = asyncio.run(main())
    assert finished == [3, 2, 1, 0]
    assert [r.tool_call_id for r in results] == ["call_0", "call_1", "call_2", "call_3"]


def test_timeouts_give_error_results_and_signal_sync_tools() -> None:
    registry = ToolRegistry()
    never = asyncio.Event()

    @registry.tool(timeout=0.05)
    async def hang() -> None:
        await never.wait()

    stopped = threading.Event()

    @registry.tool(timeout=0.05)
    def spin(ctx: ToolContext) -> None:
        ctx.cancelled.wait(WAIT)  # a sync tool that stops when told
        stopped.set()

    @registry.tool
    def quick() -> str:
        return "ok"

    with ToolRunner(registry) as runner:
        results = _run(runner, _calls(("hang", {}), ("spin", {}), ("quick", {})))
    hung, spun, ok = results
    for result, name in ((hung, "hang"), (spun, "spin")):
        assert (result.status, result.is_error) == ("error", True)
        assert _text(result) == f"Tool {name!r} timed out after 0.05 s."
        assert result.error is not None
        assert result.error.recoverable
        assert result.duration_ms is not None
        assert result.started_at is not None
    assert "hang" in (hung.error.traceback or "")  # type: ignore[union-attr]  # where it was stuck
    assert stopped.wait(WAIT)
    assert ok.status == "success"


def test_a_threaded_call_that_times_out_before_a_thread_takes_it_never_runs() -> None:
    """A sync tool's call waits for a thread of the pool; if its timeout ends the wait first, it
    gets its timeout result and the pool never runs it (the hand-off withdraws the work)."""
    registry = ToolRegistry()
    holding, release = threading.Event(), threading.Event()
    ran: list[str] = []

    @registry.tool(timeout=WAIT)
    def hold() -> str:
        holding.set()
        release.wait(WAIT)
        return "held"

    @registry.tool(timeout=0.05)
    def queued() -> str:
        ran.append("queued")
        return "ran"

    async def main(runner: ToolRunner) -> list[ToolResultMessage]:
        task = asyncio.create_task(runner.run(_calls(("hold", {}), ("queued", {}))))
        assert await asyncio.to_thread(holding.wait, WAIT)  # both calls are handed to the pool by now
        await asyncio.sleep(0.2)  # past the queued call's timeout
        release.set()
        return await task

    with ThreadPoolExecutor(max_workers=1) as pool, ToolRunner(registry, threads=pool) as runner:
        held, timed_out = asyncio.run(main(runner))
    # the pool has shut down (waiting for its work): whatever it was going to run, it ran
    assert (held.status, _text(held)) == ("success", "held")
    assert (timed_out.status, _text(timed_out)) == ("error", "Tool 'queued' timed out after 0.05 s.")
    assert ran == []


def test_a_cancel_event_interrupts_running_tools_and_the_calls_not_started() -> None:
    registry = ToolRegistry()
    started = {"hang": asyncio.Event(), "spin": threading.Event()}
    cancelled_seen = threading.Event()

    @registry.tool
    async def fast() -> str:
        return "done"

    @registry.tool
    async def hang() -> None:
        started["hang"].set()
        await asyncio.Event().wait()

    @registry.tool
    def spin(ctx: ToolContext) -> None:
        started["spin"].set()
        if ctx.cancelled.wait(WAIT):
            cancelled_seen.set()

    @registry.tool(concurrency_safe=False)
    def later() -> str:
        raise AssertionError("must not start")

    async def main() -> tuple[list[ToolResultMessage], Conversation]:
        cancel = asyncio.Event()
        conversation = Conversation()
        with ToolRunner(registry) as runner:
            task = asyncio.create_task(
                runner.run(
                    _calls(("fast", {}), ("hang", {}), ("spin", {}), ("later", {})),
                    conversation=conversation,
                    cancel=cancel,
                )
            )
            await asyncio.wait_for(started["hang"].wait(), WAIT)
            assert await asyncio.to_thread(started["spin"].wait, WAIT)
            cancel.set()
            return await task, conversation

    results, conversation = asyncio.run(main())
    assert [r.status for r in results] == ["success", "interrupted", "interrupted", "interrupted"]
    assert results[1].started_at is not None
    assert results[3].started_at is None
    assert _text(results[3]) == "The tool call was interrupted before it started."
    assert all(r.is_error and r.error is not None and not r.error.recoverable for r in results[1:])
    assert cancelled_seen.wait(WAIT)  # the sync tool was told
    assert [e.decision for e in conversation.entries][-4:] == ["tool_executed"] + ["tool_interrupted"] * 3


def test_cancelling_the_task_records_interrupted_results_then_propagates() -> None:
    registry = ToolRegistry()
    running = asyncio.Event()

    @registry.tool
    async def hang() -> None:
        running.set()
        await asyncio.Event().wait()

    @registry.tool(concurrency_safe=False)
    async def after() -> None: ...

    async def main() -> Conversation:
        conversation = Conversation()
        with ToolRunner(registry) as runner:
            task = asyncio.create_task(runner.run(_calls(("hang", {}), ("after", {})), conversation=conversation))
            await asyncio.wait_for(running.wait(), WAIT)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        return conversation

    conversation = asyncio.run(main())
    tail = conversation.entries[-2:]
    assert [e.decision for e in tail] == ["tool_interrupted", "tool_interrupted"]
    assert [e.message.tool_call_id for e in tail] == ["call_0", "call_1"]  # type: ignore[union-attr]
    assert conversation.verify()


def test_infrastructure_and_domain_failures() -> None:
    registry = ToolRegistry()

    class QuotaExceeded(Exception):
        recoverable = False

    @registry.tool
    def read_file(path: str) -> str:
        if path == "missing.txt":
            raise ToolFailure(f"{path} does not exist", recoverable=False)
        if path == "secret.txt":
            return ToolOutput(content="permission denied: secret.txt", is_error=True, structured={"errno": 13})  # type: ignore[return-value]
        if path == "quota.txt":
            raise QuotaExceeded("monthly quota used up")
        return {"path": path, "lines": 3}  # type: ignore[return-value]

    message = _calls(
        ("read_file", {"path": "missing.txt"}),
        ("read_file", {"path": "secret.txt"}),
        ("read_file", {"path": "quota.txt"}),
        ("read_file", {"path": "ok.txt"}),
        ("read_file", {"path": 7}),
        ("read_fiel", {"path": "ok.txt"}),
    )
    conversation = Conversation()
    with ToolRunner(registry) as runner:
        missing, secret, quota, ok, bad, typo = _run(runner, message, conversation=conversation)

    # domain failures: the tool's own words go to the model
    assert (missing.status, _text(missing)) == ("error", "missing.txt does not exist")
    assert missing.error == msgwire.ToolError(message="missing.txt does not exist", recoverable=False)
    assert (_text(secret), secret.structured_content, secret.is_error) == (
        "permission denied: secret.txt",
        {"errno": 13},
        True,
    )
    # infrastructure failures: a short message for the model, the whole story kept
    assert _text(quota) == "Tool 'read_file' failed: QuotaExceeded: monthly quota used up"
    assert quota.error is not None
    assert not quota.error.recoverable
    assert "raise QuotaExceeded" in (quota.error.traceback or "")
    assert _text(bad) == "Invalid arguments for tool 'read_file': Expected `str`, got `int` - at `$.path`"
    assert bad.error is not None
    assert bad.error.recoverable
    assert bad.started_at is None
    assert _text(typo) == "There is no tool named 'read_fiel'. Available tools: read_file."
    # structured output kept whole, its JSON sent
    assert ok.structured_content == {"path": "ok.txt", "lines": 3}
    assert json.loads(_text(ok)) == {"path": "ok.txt", "lines": 3}

    audits = [e.audit for e in conversation.entries if e.message.type == "tool_result"]
    assert [(a.get("failure"), a.get("kind")) for a in audits] == [
        ("domain", None),
        ("domain", None),
        ("infrastructure", "exception"),
        (None, None),
        ("infrastructure", "invalid_arguments"),
        ("infrastructure", "unknown_tool"),
    ]
    assert all(a["result_bytes"] > 0 for a in audits)


def _explode_with_a_marker_in_its_name() -> None:
    raise RuntimeError("disk on fire")


@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_a_traceback_is_kept_but_never_sent_to_a_model(dialect: str) -> None:
    registry = ToolRegistry()

    @registry.tool
    def backup() -> None:
        _explode_with_a_marker_in_its_name()

    conversation = Conversation(system_prompt="You back things up.")
    conversation.add(msgwire.user("back it up"))
    message = _calls(("backup", {}))
    conversation.add(message)
    with ToolRunner(registry) as runner:
        (result,) = _run(runner, message, conversation=conversation)
    assert "_explode_with_a_marker_in_its_name" in (result.error.traceback or "")  # type: ignore[union-attr]
    assert Conversation.load_audit(conversation.export_audit()).messages()[-1] == result  # kept in the trail

    body = json.dumps(formats.to_request(conversation.session(), dialect, tools=registry.specs))
    assert "_explode_with_a_marker_in_its_name" not in body
    assert "Traceback" not in body
    assert "Tool 'backup' failed: RuntimeError: disk on fire" in body


def test_values_tools_return() -> None:
    class Point(msgspec.Struct):
        x: int
        y: int

    registry = ToolRegistry()
    image = msgwire.ImageBlock(source=msgwire.UrlSource(url="https://example.invalid/a.png"))

    @registry.tool
    def give(kind: str) -> Any:
        return {
            "text": "hello",
            "none": None,
            "struct": Point(x=1, y=2),
            "block": image,
            "blocks": [msgwire.TextBlock(text="see:"), image],
            "list": [1, 2],
            "output": ToolOutput(content=[msgwire.TextBlock(text="summary")], structured={"rows": 120}),
            "object": object(),
        }[kind]

    kinds = ["text", "none", "struct", "block", "blocks", "list", "output", "object"]
    with ToolRunner(registry) as runner:
        results = dict(zip(kinds, _run(runner, _calls(*[("give", {"kind": k}) for k in kinds])), strict=True))
    assert results["text"].content == [msgwire.TextBlock(text="hello")]
    assert results["none"].content == []
    assert results["none"].status == "success"
    assert results["struct"].structured_content == {"x": 1, "y": 2}
    assert results["block"].content == [image]
    assert results["blocks"].content == [msgwire.TextBlock(text="see:"), image]
    assert results["list"].structured_content == [1, 2]
    assert _text(results["list"]) == "[1,2]"
    assert (results["output"].content, results["output"].structured_content) == (
        [msgwire.TextBlock(text="summary")],
        {"rows": 120},
    )
    assert results["object"].status == "error"  # a value JSON cannot carry is the tool's bug
    assert "TypeError" in (results["object"].error.message if results["object"].error else "")


def test_plain_values_and_their_subclasses_come_back_as_json_or_text() -> None:
    """The values a tool returns most (numbers, booleans, text) and their subclasses (an
    IntEnum, a str subclass, a ToolOutput subclass) give the results their kind promises."""

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    class Failed(ToolOutput, frozen=True, kw_only=True):
        pass

    registry = ToolRegistry()
    values: dict[str, Any] = {
        "int": 7,
        "float": 1.5,
        "bool": True,
        "enum": Level.HIGH,
        "str": Name("ada"),
        "empty": "",
        "failed": Failed(content="no such file", is_error=True, recoverable=False),
    }

    @registry.tool(blocking=False)
    def give(kind: str) -> Any:
        return values[kind]

    with ToolRunner(registry) as runner:
        results = dict(zip(values, _run(runner, _calls(*[("give", {"kind": k}) for k in values])), strict=True))
    for kind, text, structured in (("int", "7", 7), ("float", "1.5", 1.5), ("bool", "true", True), ("enum", "3", 3)):
        result = results[kind]
        assert (result.status, _text(result), result.structured_content) == ("success", text, structured), kind
        assert type(result.structured_content) is type(structured), kind
    assert (results["str"].content, results["str"].structured_content) == ([msgwire.TextBlock(text="ada")], None)
    assert results["empty"].content == []
    failed = results["failed"]
    assert (failed.status, _text(failed)) == ("error", "no such file")
    assert failed.error is not None
    assert not failed.error.recoverable
    for result in results.values():
        assert result.started_at is not None
        assert result.timestamp >= result.started_at


def test_sync_tools_see_the_callers_context_variables_and_deps() -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")
    registry = ToolRegistry()

    @registry.tool
    def who(ctx: ToolContext) -> str:
        return f"{request_id.get()} {ctx.deps['user']} {ctx.call.id}"

    async def main() -> list[ToolResultMessage]:
        request_id.set("req-7")
        with ToolRunner(registry, deps={"user": "alice"}) as runner:
            return await runner.run(_calls(("who", {})))

    assert _text(asyncio.run(main())[0]) == "req-7 alice call_0"
    request_id.set("sync-1")
    with ToolRunner(registry, deps={"user": "bob"}) as runner:
        assert _text(runner.run_sync(_calls(("who", {})))[0]) == "sync-1 bob call_0"


_KINDS = ["ok", "fail", "raise", "unknown", "invalid", "denied", "unsafe"]


@given(st.lists(st.sampled_from(_KINDS), max_size=12), st.integers(1, 4))
@examples(40)
def test_every_call_gets_exactly_one_result_in_call_order(kinds: list[str], limit: int) -> None:
    registry = ToolRegistry()

    @registry.tool
    async def ok(n: int) -> int:
        await asyncio.sleep(0)
        return n

    @registry.tool
    def fail(n: int) -> None:
        raise ToolFailure(f"no {n}")

    @registry.tool
    async def boom(n: int) -> None:
        raise ValueError(n)

    @registry.tool(policy="deny")
    def denied(n: int) -> None: ...

    @registry.tool(concurrency_safe=False)
    def unsafe(n: int) -> int:
        return n

    name = {
        "ok": "ok",
        "fail": "fail",
        "raise": "boom",
        "unknown": "nope",
        "invalid": "ok",
        "denied": "denied",
        "unsafe": "unsafe",
    }
    calls = [(name[k], {"n": "x"} if k == "invalid" else {"n": i}) for i, k in enumerate(kinds)]
    message = _calls(*calls)
    conversation = Conversation()
    with ToolRunner(registry, limit=limit) as runner:
        results = _run(runner, message, conversation=conversation)
    assert [r.tool_call_id for r in results] == [c.id for c in message.tool_calls]
    expected = {"ok": "success", "unsafe": "success", "denied": "denied"}
    assert [r.status for r in results] == [expected.get(k, "error") for k in kinds]
    recorded = [e.message for e in conversation.entries if isinstance(e.message, ToolResultMessage)]
    assert recorded == results
    msgwire.validate([message, *results])
    assert conversation.verify()


def test_a_declared_tool_run_by_an_async_executor() -> None:
    """A schema plus an executor object (as an MCP server's tools are): validated, approved, run."""

    class Remote:
        def __init__(self) -> None:
            self.seen: list[tuple[str, Any]] = []

        async def execute(self, name: str, arguments: Any) -> Any:
            self.seen.append((name, arguments))
            await asyncio.sleep(0)
            if arguments["q"] == "boom":
                raise ConnectionResetError("server went away")
            return {"hits": [arguments["q"]]}

    remote = Remote()
    registry = ToolRegistry()
    spec = msgwire.Tool(
        name="search",
        description="Search the index.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    )
    registry.add(spec, remote)
    with ToolRunner(registry) as runner:
        ok, missing, boom = _run(runner, _calls(("search", {"q": "cats"}), ("search", {}), ("search", {"q": "boom"})))
    assert (ok.status, ok.structured_content) == ("success", {"hits": ["cats"]})
    assert _text(missing) == "Invalid arguments for tool 'search': Object missing required field `q` - at `$`"
    assert _text(boom) == "Tool 'search' failed: ConnectionResetError: server went away"
    assert remote.seen == [("search", {"q": "cats"}), ("search", {"q": "boom"})]


def test_one_runner_from_several_threads() -> None:
    registry = ToolRegistry()

    @registry.tool
    def square(n: int) -> int:
        return n * n

    results: list[list[ToolResultMessage]] = []
    with ToolRunner(registry, limit=2) as runner:

        def work(k: int) -> None:
            results.append(runner.run_sync(_calls(*[("square", {"n": k * 10 + i}) for i in range(5)])))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert sorted(_text(r) for batch in results for r in batch) == sorted(
        str((k * 10 + i) ** 2) for k in range(4) for i in range(5)
    )


def test_odd_values_and_exceptions_still_give_one_result_each() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no words")

    registry = ToolRegistry()

    @registry.tool
    def odd(kind: str) -> Any:
        if kind == "unprintable":
            raise Unprintable
        if kind == "failure":
            raise ToolFailure("quota reached", structured=object())  # an extra JSON cannot carry
        if kind == "unknown-block":
            return [msgwire.UnknownBlock(b'{"type":"hologram"}', "hologram")]
        return ""

    conversation = Conversation()
    kinds = ["unprintable", "failure", "unknown-block", "empty"]
    with ToolRunner(registry) as runner:
        results = _run(runner, _calls(*[("odd", {"kind": k}) for k in kinds]), conversation=conversation)
    unprintable, failure, unknown, empty = results
    assert _text(unprintable) == "Tool 'odd' failed: Unprintable"
    assert (failure.status, _text(failure), failure.structured_content) == ("error", "quota reached", None)
    assert unknown.status == "success"
    assert unknown.content[0].type == "hologram"
    assert (empty.status, empty.content) == ("success", [])  # no empty text block for a provider to refuse
    assert len([e for e in conversation.entries if e.message.type == "tool_result"]) == 4


def test_on_start_sees_each_approved_call_as_it_starts_and_never_a_denied_one() -> None:
    """``on_start`` is the agent's "tool started": called before the tool body runs, for the
    calls that run (alone or concurrently), never for a denied or unknown one."""
    seen: list[str] = []
    bodies: list[str] = []
    registry = ToolRegistry()

    @registry.tool
    def read(key: str) -> str:
        bodies.append(key)
        assert key in seen  # started before its body ran
        return key

    @registry.tool(policy="deny")
    def delete(key: str) -> str:
        raise AssertionError("a denied tool never runs")

    @registry.tool(concurrency_safe=False)
    def write(key: str) -> str:
        bodies.append(key)
        assert key in seen
        return key

    message = _calls(
        ("read", {"key": "a"}), ("delete", {"key": "b"}), ("nope", {}), ("read", {"key": "c"}), ("write", {"key": "d"})
    )
    with ToolRunner(registry) as runner:
        results = _run(runner, message, on_start=lambda call: seen.append(call.parsed_arguments()["key"]))
    assert sorted(seen) == sorted(bodies) == ["a", "c", "d"]
    assert seen[-1] == "d"  # the one that runs alone starts after the others
    assert [r.status for r in results] == ["success", "denied", "error", "success", "success"]


# --- what the model is told of an exception: failure_text ----------------------------------------


def _leaky_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def lookup(user: str) -> str:
        if user == "domain":
            raise ToolFailure("no such user: domain")  # the tool's own words, always sent
        raise RuntimeError(f"psycopg: password authentication failed for 'admin:hunter2' reading {user}\nline 2")

    return registry


@pytest.mark.parametrize(
    ("failure_text", "told"),
    [
        ("message", "Tool 'lookup' failed: RuntimeError: psycopg: password authentication failed for"),
        ("type", "Tool 'lookup' failed: RuntimeError"),
        (lambda tool, exc: f"{tool} is unavailable ({type(exc).__name__}); try later", "lookup is unavailable"),
    ],
    ids=["message", "type", "function"],
)
@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_failure_text_says_what_the_model_is_told_of_an_exception(failure_text: Any, told: str, dialect: str) -> None:
    conversation = Conversation()
    conversation.add(msgwire.user("who is bob?"))
    message = _calls(("lookup", {"user": "bob"}), ("lookup", {"user": "domain"}))
    conversation.add(message)
    with ToolRunner(_leaky_registry(), failure_text=failure_text) as runner:
        crashed, domain = _run(runner, message, conversation=conversation)
    assert _text(crashed).startswith(told)
    assert _text(domain) == "no such user: domain"
    assert crashed.error is not None
    assert "hunter2" in crashed.error.message  # kept whole for the trail
    body = json.dumps(formats.to_request(conversation.session(), dialect))
    assert ("hunter2" in body) is (failure_text == "message")  # sent only by the default
    assert "no such user: domain" in body


@pytest.mark.parametrize(
    ("function", "why"),
    [
        (lambda tool, exc: 1 / 0, "failure_text raised ZeroDivisionError: division by zero"),
        (lambda tool, exc: "  ", "failure_text gave '  ', not a text"),
        (lambda tool, exc: None, "failure_text gave None, not a text"),
    ],
    ids=["raises", "blank", "none"],
)
def test_a_failure_text_function_that_gives_no_text_falls_back_to_the_type(function: Any, why: str) -> None:
    with ToolRunner(_leaky_registry(), failure_text=function) as runner:
        (crashed,) = _run(runner, _calls(("lookup", {"user": "bob"})))
    assert _text(crashed) == "Tool 'lookup' failed: RuntimeError"
    assert crashed.error is not None
    assert crashed.error.message.endswith(f"({why})")
    assert "hunter2" in crashed.error.message


@pytest.mark.parametrize("bad", ["full", None, 3])
def test_failure_text_is_checked_when_the_runner_is_made(bad: Any) -> None:
    with pytest.raises(TypeError, match="failure_text is 'message', 'type' or a function"):
        ToolRunner(ToolRegistry(), failure_text=bad)
