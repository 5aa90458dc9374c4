"""The agent-loop figures of ``test_agent.py``, measured interleaved: each round runs every entry
once, in turn, so a burst of load on a shared machine falls on all of them alike (pytest-benchmark
times one entry after the other, and a floor timed during a burst can come out slower than an
agent timed before it). Prints the medians, each agent's own cost per step (its median minus the
floor's, over the steps) and how many times pydantic-ai's is msgwire's.

Run: ``.venv/bin/python -m benches.agent_interleaved [ROUNDS]`` (100 by default).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from benches.agent_server import FINAL, PROMPT, SERVER, STEPS, lookup
from msgwire.harness import Agent, Conversation, ToolRegistry
from msgwire.harness.providers import OpenAI

HEADERS = {"content-type": "application/json", "authorization": "Bearer sk-bench"}


async def _drain(_context: Any, events: Any) -> None:
    async for _ in events:
        pass


def measure(url: str, rounds: int) -> dict[str, float]:
    sent: list[bytes] = []
    provider = OpenAI(base_url=url, api_key="sk-bench", model="gpt-4o")
    original = provider.transport.send

    def capture(target: str, body: bytes, headers: Any, *rest: Any, **options: Any) -> Any:
        sent.append(body)
        return original(target, body, headers, *rest, **options)

    agent = Agent(provider, tools=ToolRegistry([lookup]), max_steps=STEPS + 1)
    provider.transport.send = capture  # type: ignore[method-assign]
    assert agent.run(PROMPT).text == FINAL
    provider.transport.send = original  # type: ignore[method-assign]
    bodies = sent[:STEPS]
    client = httpx.Client()
    loop = asyncio.new_event_loop()
    async_client = httpx.AsyncClient()
    pydantic_provider = OpenAIProvider(base_url=url, api_key="sk-bench")
    pydantic = PydanticAgent(OpenAIChatModel("gpt-4o", provider=pydantic_provider), tools=[lookup])
    async_agent = Agent(provider, tools=ToolRegistry([lookup]), max_steps=STEPS + 1)

    def msgwire_sync() -> None:
        agent.conversation = Conversation()
        assert agent.run(PROMPT).text == FINAL

    def floor_sync() -> None:
        for body in bodies:
            with client.stream("POST", f"{url}/chat/completions", content=body, headers=HEADERS) as reply:
                for _ in reply.iter_bytes():
                    pass

    async def msgwire_async() -> None:
        async_agent.conversation = Conversation()
        assert (await async_agent.arun(PROMPT)).text == FINAL

    async def pydantic_ai() -> None:
        assert (await pydantic.run(PROMPT, event_stream_handler=_drain)).output == FINAL

    async def floor_async() -> None:
        for body in bodies:
            async with async_client.stream("POST", f"{url}/chat/completions", content=body, headers=HEADERS) as reply:
                async for _ in reply.aiter_bytes():
                    pass

    entries: dict[str, Callable[[], Any]] = {
        "msgwire (sync)": msgwire_sync,
        "httpx floor (sync)": floor_sync,
        "msgwire (async)": lambda: loop.run_until_complete(msgwire_async()),
        "pydantic-ai (async)": lambda: loop.run_until_complete(pydantic_ai()),
        "httpx floor (async)": lambda: loop.run_until_complete(floor_async()),
    }
    times: dict[str, list[float]] = {name: [] for name in entries}
    for round_ in range(rounds + 3):
        for name, entry in entries.items():
            started = time.perf_counter()
            entry()
            if round_ >= 3:  # warm-up rounds
                times[name].append(time.perf_counter() - started)
    closing: list[Awaitable[Any]] = [async_client.aclose(), pydantic_provider.client.close(), provider.aclose()]
    for done in closing:
        loop.run_until_complete(done)
    loop.close()
    client.close()
    agent.close()
    async_agent.close()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(STEPS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdin is not None
    try:
        medians = measure(process.stdout.readline().strip(), rounds)
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()
    for name, median in medians.items():
        print(f"{name:22} {median * 1000:8.2f} ms per {STEPS}-step session")
    own = {
        "msgwire (sync)": medians["msgwire (sync)"] - medians["httpx floor (sync)"],
        "msgwire (async)": medians["msgwire (async)"] - medians["httpx floor (async)"],
        "pydantic-ai (async)": medians["pydantic-ai (async)"] - medians["httpx floor (async)"],
    }
    for name, value in own.items():
        print(f"{name:22} {value / STEPS * 1000:8.3f} ms of its own per step")
    ratio = own["pydantic-ai (async)"] / own["msgwire (async)"]
    print(f"pydantic-ai's own cost per step / msgwire's (async): {ratio:.1f}x")


if __name__ == "__main__":
    main()
