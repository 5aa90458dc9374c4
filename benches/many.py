"""Many conversations at once: the client's CPU per conversation, beside openai-agents and
pydantic-ai, at the pace real tokens arrive (issue 22, "Many conversations at once").

N conversations run concurrently in one event loop, each two agent steps against a local model
server in another process (``benches/many_server.py``: a streamed tool call, the tool, a
streamed 100-chunk answer, ``--pace`` seconds between chunks). The client and the server each
get a core of their own (``sched_setaffinity``); the client's CPU time is counted whole
(``time.process_time``: every thread, the HTTP stack and the tool threads included) and divided
by N. For msgwire also: the time to the answer's first token (the server stamps the time it
wrote that chunk into its id), p50 and p99, and the threads the process had at its peak.

Run: ``.venv/bin/python -m benches.many [--n 1000] [--pace 0.02] [--clients msgwire,openai-agents,...]``.
Entries: ``msgwire`` (``Agent.astream``), ``msgwire-sqlite`` / ``msgwire-postgres`` (the same, each
agent bound to a conversation made in a store for its run: a SQLite file, or the tests'
throwaway PostgreSQL cluster, ``--postgres URL`` for another; every trail verified afterwards,
not timed; PostgreSQL's server CPU, its processes' from ``/proc``, reported apart),
``openai-agents`` (``Runner.run_streamed`` on its own
Chat Completions model), ``openai-agents+msgwire`` (the same on ``MsgwireModel``),
``openai-agents-floor`` (the same on a model yielding the events of each reply made in advance,
at the server's pace: no HTTP, no decoding; the framework's own cost),
``pydantic-ai`` (``agent.run`` with an event stream handler), ``pydantic-ai+msgwire`` (the same
agent on ``msgwire.interop.pydantic_ai.MsgwireModel`` over msgwire's ``OpenAI`` provider),
``pydantic-ai-function`` (the same agent on pydantic-ai's ``FunctionModel`` streaming the same
deltas, ``--pace`` apart, no HTTP: pydantic-ai's own floor), ``floor`` (the same requests on one
raw asyncio connection per conversation, each chunk read and handed to ``msgwire.Decoder``: what
any client must do); and the transports alone, the same two requests per conversation with each
reply's chunks decoded, no agent: ``http-httpx``, ``http-httpx2``, ``http-aiohttp`` (one client
or session shared by every conversation, as a gateway shares one).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

import msgwire

SERVER = Path(__file__).with_name("many_server.py")
PROMPT = "Look up k and tell me."


def lookup(key: str, padding: str = "") -> str:
    """Look a key up in the store."""
    return f"{key} = value of {key}"


class Sample:
    def __init__(self) -> None:
        self.ttft: list[float] = []
        self.peak_threads = 0
        self.conversations: list[str] = []  # the stored entries' conversations, verified afterwards

    def threads(self) -> None:
        self.peak_threads = max(self.peak_threads, threading.active_count())


def _first_token(event: Any, state: dict[str, int]) -> float | None:
    """The ms from the server's write of the answer's first chunk to its first text event here."""
    if event.type == "message_start" and event.response_id and event.response_id[9:].isdigit():
        state["server_ns"] = int(event.response_id[9:])
    elif event.type == "text_delta" and "server_ns" in state and "seen" not in state:
        state["seen"] = 1
        return (time.time_ns() - state["server_ns"]) / 1e6
    return None


async def _msgwire(url: str, n: int, sample: Sample, client: Any = None, store: Any = None) -> None:
    from msgwire.harness import Agent, ToolRegistry
    from msgwire.harness.providers import OpenAI
    from msgwire.harness.store import AsyncStore

    provider = OpenAI(base_url=url, api_key="sk-bench", model="gpt-4o", async_client=client)
    tools = ToolRegistry([lookup])
    astore = AsyncStore(store) if store is not None else None

    async def one() -> None:
        conversation = None
        if astore is not None:  # made off the loop, as async code makes it
            conversation = await astore.create()
            sample.conversations.append(conversation.id)
        with Agent(provider, tools=tools, max_steps=4, conversation=conversation) as agent:
            state: dict[str, int] = {}
            async for event in agent.astream(PROMPT):
                took = _first_token(event, state)
                if took is not None:
                    sample.ttft.append(took)
                    sample.threads()

    await asyncio.gather(*(one() for _ in range(n)))
    await provider.aclose()


async def _openai_agents_runs(agent: Any, n: int, sample: Sample) -> None:
    """``n`` streamed runs of an openai-agents agent at once, each reading every event."""
    from agents import Runner

    async def one() -> None:
        result = Runner.run_streamed(agent, PROMPT)
        async for _ in result.stream_events():
            pass
        sample.threads()

    await asyncio.gather(*(one() for _ in range(n)))


async def _openai_agents(url: str, n: int, sample: Sample) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=600.0)  # 600 s for every phase
    agent = Agent(
        name="bench",
        model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client),
        tools=[function_tool(lookup)],
    )

    await _openai_agents_runs(agent, n, sample)
    await client.close()


async def _openai_agents_msgwire(url: str, n: int, sample: Sample) -> None:
    """openai-agents with msgwire's model: ``MsgwireModel`` on msgwire's ``OpenAI`` provider."""
    from agents import Agent, function_tool, set_tracing_disabled

    from msgwire.harness.providers import OpenAI
    from msgwire.interop.openai_agents import MsgwireModel

    set_tracing_disabled(True)
    model = MsgwireModel(OpenAI(base_url=url, api_key="sk-bench", model="gpt-4o", max_retries=0))
    agent = Agent(name="bench", model=model, tools=[function_tool(lookup)])

    await _openai_agents_runs(agent, n, sample)
    await model.close()


def _floor_replies() -> list[list[list[Any]]]:
    """The two replies of ``many_server.py`` as the Responses events ``MsgwireModel`` makes of
    them, chunk by chunk, made once: what openai-agents' floor model yields."""
    from agents import ModelSettings

    from benches import many_server
    from msgwire.interop.openai_agents_events import ChatEvents, base_response

    replies = []
    for events in (many_server._tool_call_events(1), many_server._ANSWER):
        maker = ChatEvents(base_response("gpt-4o", ModelSettings(), True), "gpt-4o", "openai")
        decoder = msgwire.Decoder("openai")
        chunks: list[list[Any]] = [[maker.start()]]
        chunks += [[out for event in decoder.feed(piece) for out in maker.feed(event)] for piece in events]
        decoder.end()
        chunks.append(maker.finish(decoder.message()))
        replies.append(chunks)
    return replies


async def _openai_agents_floor(url: str, n: int, sample: Sample) -> None:
    """openai-agents alone: the same run on a model that yields the events of each reply, made
    in advance, at the server's pace (no HTTP, no decoding): what the framework itself costs."""
    from agents import Agent, function_tool, set_tracing_disabled
    from agents.models.interface import Model

    set_tracing_disabled(True)
    replies = _floor_replies()
    pace = _pace()

    class Floor(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def stream_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
            steps = sum(1 for item in input if isinstance(item, dict) and item.get("type") == "function_call_output")
            for chunk in replies[min(steps, 1)]:
                await asyncio.sleep(pace)  # a chunk's wait: at least one turn of the loop, as a read
                for event in chunk:
                    if event.type == "response.completed":  # the runner keeps its response: a fresh one
                        event = event.model_copy(update={"response": event.response.model_copy()})
                    yield event

    agent = Agent(name="bench", model=Floor(), tools=[function_tool(lookup)])

    await _openai_agents_runs(agent, n, sample)


async def _pydantic_ai_runs(agent: Any, n: int, sample: Sample) -> None:
    """``n`` runs of a pydantic-ai agent at once, each streaming its events to a handler that
    reads them (as an app showing them would)."""

    async def drain(_context: Any, events: Any) -> None:
        async for _ in events:
            pass

    async def one() -> None:
        await agent.run(PROMPT, event_stream_handler=drain)
        sample.threads()

    await asyncio.gather(*(one() for _ in range(n)))


async def _pydantic_ai(url: str, n: int, sample: Sample) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=600.0)  # as for openai-agents
    agent = Agent(OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client)), tools=[lookup])

    await _pydantic_ai_runs(agent, n, sample)


async def _pydantic_ai_msgwire(url: str, n: int, sample: Sample) -> None:
    from pydantic_ai import Agent

    from msgwire.harness.providers import OpenAI
    from msgwire.interop.pydantic_ai import MsgwireModel

    provider = OpenAI(base_url=url, api_key="sk-bench", model="gpt-4o", max_retries=0)
    agent = Agent(MsgwireModel(provider), tools=[lookup])

    try:
        await _pydantic_ai_runs(agent, n, sample)
    finally:
        await provider.aclose()


def _pace() -> float:
    """Seconds between chunks (``--pace``), for the entries that stream without a server."""
    return float(os.environ.get("MSGWIRE_BENCH_PACE", "0"))


async def _pydantic_ai_function(url: str, n: int, sample: Sample) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    from benches.many_server import ANSWER_CHUNKS, CALL_CHUNKS, WORD

    pace = _pace()
    arguments = msgspec.json.encode({"key": "k1", "padding": "x" * 40}).decode()
    step = -(-len(arguments) // CALL_CHUNKS)
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]

    async def deltas(messages: list[Any], _info: AgentInfo) -> Any:  # the server's deltas, paced as it paces
        answered = isinstance(messages[-1], ModelResponse) or any(
            getattr(p, "part_kind", "") == "tool-return" for p in messages[-1].parts
        )
        if not answered:
            yield {0: DeltaToolCall(name="lookup", json_args="", tool_call_id="call_1")}
            for piece in pieces:
                await asyncio.sleep(pace)
                yield {0: DeltaToolCall(json_args=piece)}
            return
        for _ in range(ANSWER_CHUNKS):
            await asyncio.sleep(pace)
            yield WORD

    agent = Agent(FunctionModel(stream_function=deltas), tools=[lookup])

    await _pydantic_ai_runs(agent, n, sample)


async def _floor(url: str, n: int, sample: Sample) -> None:
    """Two requests per conversation on one raw connection, each reply's chunks decoded by
    msgwire: the bytes any client must move and parse, with no HTTP library and no agent."""
    host, port = url.removeprefix("http://").split(":")
    first = msgspec.json.encode({"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": PROMPT}]})
    second = msgspec.json.encode(
        {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": PROMPT}, {"role": "assistant"}]}
    )

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> None:
        writer.write(b"POST /chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        await reader.readuntil(b"\r\n\r\n")
        decoder = msgwire.Decoder("openai")
        state: dict[str, int] = {}
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            for event in decoder.feed(chunk[:-2]):
                took = _first_token(event, state)
                if took is not None:
                    sample.ttft.append(took)
        decoder.finish()

    async def one() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        await reply(reader, writer, first)
        await reply(reader, writer, second)
        writer.close()
        sample.threads()

    await asyncio.gather(*(one() for _ in range(n)))


# --- the transports alone: the same two requests per conversation, each reply decoded -----------

_BODIES = (
    msgspec.json.encode({"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": PROMPT}]}),
    msgspec.json.encode(
        {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": PROMPT}, {"role": "assistant"}]}
    ),
)
_HEADERS = {"content-type": "application/json", "authorization": "Bearer sk-bench"}


async def _via_httpx(module: Any, url: str, n: int, sample: Sample) -> None:
    client = module.AsyncClient(timeout=600)

    async def one() -> None:
        for body in _BODIES:
            decoder = msgwire.Decoder("openai")
            async with client.stream("POST", f"{url}/chat/completions", content=body, headers=_HEADERS) as reply:
                async for chunk in reply.aiter_bytes():
                    decoder.feed(chunk)
            decoder.finish()
        sample.threads()

    await asyncio.gather(*(one() for _ in range(n)))
    await client.aclose()


async def _via_aiohttp(url: str, n: int, sample: Sample) -> None:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one() -> None:
            for body in _BODIES:
                decoder = msgwire.Decoder("openai")
                async with session.post(f"{url}/chat/completions", data=body, headers=_HEADERS) as reply:
                    async for chunk in reply.content.iter_any():
                        decoder.feed(chunk)
                decoder.finish()
            sample.threads()

        await asyncio.gather(*(one() for _ in range(n)))


def _httpx(url: str, n: int, sample: Sample) -> Awaitable[None]:
    import httpx

    return _via_httpx(httpx, url, n, sample)


def _httpx2(url: str, n: int, sample: Sample) -> Awaitable[None]:
    import httpx2

    return _via_httpx(httpx2, url, n, sample)


ENTRIES: dict[str, Callable[[str, int, Sample], Awaitable[None]]] = {
    "msgwire": _msgwire,
    "openai-agents": _openai_agents,
    "openai-agents+msgwire": _openai_agents_msgwire,
    "openai-agents-floor": _openai_agents_floor,
    "pydantic-ai": _pydantic_ai,
    "pydantic-ai+msgwire": _pydantic_ai_msgwire,
    "pydantic-ai-function": _pydantic_ai_function,
    "floor": _floor,
    "http-httpx": _httpx,
    "http-httpx2": _httpx2,
    "http-aiohttp": _via_aiohttp,
}


STORED = {"msgwire-sqlite": "sqlite", "msgwire-postgres": "postgres"}
"""The entries whose agents each keep their conversation in a store: which store."""


class Stores:
    """A fresh store for each stored run (a SQLite file in a temporary directory, or a schema of
    its own on the PostgreSQL server), and that server's CPU time."""

    def __init__(self, postgres: str | None) -> None:
        self.postgres = postgres  # a schema URL maker is used when None: the throwaway cluster
        self._server: Any = None
        self._cluster: Any = None
        self._root = tempfile.mkdtemp(prefix="msgwire-many-")

    def open(self, kind: str) -> Any:
        from msgwire.harness.store import open_store

        if kind == "sqlite":
            return open_store(os.path.join(self._root, f"{time.time_ns()}.db"))
        if self.postgres is not None:
            return open_store(self.postgres, max_size=8)
        self.start_postgres()
        return open_store(self._server.schema_url(), max_size=8)

    def start_postgres(self) -> None:
        """The throwaway cluster, started before this process is pinned to its core (its
        processes would inherit that): the server runs on either core."""
        if self._server is None and self.postgres is None:
            from tests._support.postgres import running

            self._cluster = running()
            self._server = self._cluster.__enter__()

    def server_cpu(self) -> float | None:
        """Seconds of CPU the throwaway cluster's processes used so far (``None``: not ours)."""
        if self._server is None:
            return None
        from benches import pgstats  # psycopg: only with the PostgreSQL entry

        return pgstats.server_cpu(self._server.data)

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.__exit__(None, None, None)
        shutil.rmtree(self._root, ignore_errors=True)


def _verify(store: Any, conversations: list[str]) -> dict[str, Any]:
    """Every stored trail read back: its chain verified, its entries counted (not timed)."""
    counts: dict[int, int] = {}
    bad = 0
    for cid in conversations:
        conversation = store.load(cid)
        if not conversation.verify() or [e.seq for e in conversation.entries] != list(range(len(conversation))):
            bad += 1
        counts[len(conversation)] = counts.get(len(conversation), 0) + 1
    return {"verified": len(conversations) - bad, "failed_verify": bad, "entries_per_trail": counts}


def measure(name: str, url: str, n: int, stores: Stores | None = None) -> dict[str, Any]:
    kind = STORED.get(name)
    run = ENTRIES["msgwire" if kind else name]
    store = stores.open(kind) if stores is not None and kind else None
    extra = {"store": store} if store is not None else {}
    asyncio.run(run(url, min(n, 10), Sample(), **extra))  # imports and first connections: not counted
    sample = Sample()
    gc.collect()
    server = stores.server_cpu() if stores is not None and kind == "postgres" else None
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        asyncio.run(run(url, n, sample, **extra))
    except Exception as exc:  # a peer that fails at this size is a result too
        return {"entry": name, "n": n, "failed": f"{type(exc).__name__}: {exc}"}
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    out: dict[str, Any] = {"entry": name, "n": n, "cpu_ms_per_run": cpu / n * 1000, "wall_s": wall}
    out["runs_per_s"] = n / wall
    out["threads"] = sample.peak_threads
    if server is not None and stores is not None:
        out["server_cpu_ms_per_run"] = ((stores.server_cpu() or 0.0) - server) / n * 1000
    if sample.ttft:
        ordered = sorted(sample.ttft)
        out["ttft_p50_ms"] = statistics.median(ordered)
        out["ttft_p99_ms"] = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    if store is not None:
        out |= _verify(store, sample.conversations)
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000])
    parser.add_argument("--pace", type=float, default=0.02)
    parser.add_argument("--clients", default="msgwire,openai-agents,pydantic-ai,floor")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a throwaway cluster)")
    args = parser.parse_args()
    os.environ["MSGWIRE_BENCH_PACE"] = str(args.pace)  # the floors without a server keep its pace
    stores = Stores(args.postgres)
    if "msgwire-postgres" in args.clients.split(","):
        stores.start_postgres()
    # The model server first: it pins itself to the last core, which it could not once this
    # process, pinned to the first, had made it inherit that one alone.
    server = subprocess.Popen(
        [sys.executable, str(SERVER), str(args.pace)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    assert server.stdout is not None
    assert server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        for n in args.n:
            for _ in range(args.rounds):
                for name in args.clients.split(","):
                    result = measure(name, url, n, stores)
                    print(msgspec.json.encode(result).decode(), flush=True)
    finally:
        stores.close()
        server.stdin.close()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
