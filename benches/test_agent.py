"""The agent loop's own overhead per step: msgwire's ``Agent`` beside pydantic-ai's ``Agent`` on
the same scripted model server (``agent_server.py``, in its own process), the same tool and the
same replies: a recorded session of ``STEPS`` model calls (a sentence and a ``lookup`` call each,
then the answer). Each round runs the whole session in a new conversation, streamed (pydantic-ai
with an ``event_stream_handler``, so its requests stream too).

The floors replay the same request bodies (msgwire's, captured from a run) with a plain httpx
client and read each reply to its end, unparsed: the HTTP and the server's part, which every
entry pays. So ``(entry - floor) / STEPS`` is an agent's own cost per step: building the request
from the history, decoding the stream, assembling the message, running the tool, recording.

Groups: ``agent-loop-sync`` (msgwire ``Agent.run`` on its own loop with ``provider.stream``;
the sync httpx floor) and ``agent-loop-async`` (msgwire ``Agent.arun``, pydantic-ai
``Agent.run``, both in one event loop that stays up; the async httpx floor). pydantic-ai's
``run_sync`` is left out: it wraps ``run`` in an event loop of its own that it leaves open.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from benches.agent_server import FINAL, PROMPT, SERVER, STEPS, lookup
from msgwire.harness import Agent, Conversation, ToolRegistry
from msgwire.harness.providers import OpenAI

ROUNDS = 200 if os.environ.get("MSGWIRE_BENCH_FULL") else 40
"""Sessions timed per entry (after 3 untimed ones): the machine is shared, so many."""


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(STEPS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdin is not None
    url = process.stdout.readline().strip()
    try:
        yield url
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    yield running
    running.close()


def _msgwire_agent(url: str) -> Agent:
    provider = OpenAI(base_url=url, api_key="sk-bench", model="gpt-4o")
    return Agent(provider, tools=ToolRegistry([lookup]), max_steps=STEPS + 1)


@pytest.fixture(scope="module")
def bodies(server_url: str) -> list[bytes]:
    """The request bodies of one msgwire run: what the floors send."""
    sent: list[bytes] = []
    with _msgwire_agent(server_url) as agent:
        provider: Any = agent.provider
        original = provider.transport.send

        def capture(url: str, body: bytes, headers: Any, *rest: Any, **options: Any) -> Any:
            sent.append(body)
            return original(url, body, headers, *rest, **options)

        provider.transport.send = capture
        assert agent.run(PROMPT).text == FINAL
        provider.close()
    assert len(sent) == STEPS
    return sent


def _timed(benchmark: Any, session: Any) -> Any:
    return benchmark.pedantic(session, rounds=ROUNDS, warmup_rounds=3, iterations=1)


def _run_msgwire(agent: Agent) -> str:
    agent.conversation = Conversation()
    return agent.run(PROMPT).text


@pytest.mark.benchmark(group="agent-loop-sync")
def test_agent_loop_msgwire(benchmark: Any, server_url: str) -> None:
    with _msgwire_agent(server_url) as agent:
        assert _timed(benchmark, lambda: _run_msgwire(agent)) == FINAL
        assert len(agent.conversation.entries) == 1 + STEPS + 2 * (STEPS - 1)  # every step recorded
        agent.provider.close()  # type: ignore[attr-defined]


@pytest.mark.benchmark(group="agent-loop-sync")
def test_agent_loop_httpx_floor(benchmark: Any, server_url: str, bodies: list[bytes]) -> None:
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    with httpx.Client() as client:

        def replay() -> int:
            size = 0
            for body in bodies:
                with client.stream("POST", f"{server_url}/chat/completions", content=body, headers=headers) as reply:
                    for chunk in reply.iter_bytes():
                        size += len(chunk)
            return size

        assert _timed(benchmark, replay) > 0


def _pydantic_agent(url: str) -> tuple[Any, Any]:
    provider = OpenAIProvider(base_url=url, api_key="sk-bench")
    return provider, PydanticAgent(OpenAIChatModel("gpt-4o", provider=provider), tools=[lookup])


async def _drain(_context: Any, events: Any) -> None:
    async for _ in events:
        pass


@pytest.mark.benchmark(group="agent-loop-async")
def test_agent_loop_msgwire_async(benchmark: Any, server_url: str, loop: asyncio.AbstractEventLoop) -> None:
    agent = _msgwire_agent(server_url)

    async def run() -> str:
        agent.conversation = Conversation()
        return (await agent.arun(PROMPT)).text

    assert _timed(benchmark, lambda: loop.run_until_complete(run())) == FINAL
    loop.run_until_complete(agent.provider.aclose())  # type: ignore[attr-defined]
    agent.close()


@pytest.mark.benchmark(group="agent-loop-async")
def test_agent_loop_pydantic_ai(benchmark: Any, server_url: str, loop: asyncio.AbstractEventLoop) -> None:
    provider, agent = _pydantic_agent(server_url)

    async def run() -> str:
        result = await agent.run(PROMPT, event_stream_handler=_drain)
        return str(result.output)

    assert _timed(benchmark, lambda: loop.run_until_complete(run())) == FINAL
    loop.run_until_complete(provider.client.close())


@pytest.mark.benchmark(group="agent-loop-async")
def test_agent_loop_httpx_floor_async(
    benchmark: Any, server_url: str, bodies: list[bytes], loop: asyncio.AbstractEventLoop
) -> None:
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    client = httpx.AsyncClient()

    async def replay() -> int:
        size = 0
        for body in bodies:
            async with client.stream("POST", f"{server_url}/chat/completions", content=body, headers=headers) as reply:
                async for chunk in reply.aiter_bytes():
                    size += len(chunk)
        return size

    assert _timed(benchmark, lambda: loop.run_until_complete(replay())) > 0
    loop.run_until_complete(client.aclose())
