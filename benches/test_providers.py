"""First-byte-to-first-event latency: ``provider.stream`` beside the openai and anthropic SDKs'
streaming clients, each reading the same recorded stream from the same scripted server on
127.0.0.1 (``msgwire.testing``), over keep-alive connections.

What is timed (``benchmark.pedantic``): the server has sent the response headers and holds the
body; the timed part releases it (the server thread writes the first event) and reads until
the client hands out its first event. Opening the request before it, and draining the rest of
the stream after it, are not timed. So each figure is the client's cost from the first body
byte on the socket to the first event in the caller's hands (plus the same thread wake-up for
every client).

Groups:
- ``first-event-openai``: msgwire's ``OpenAI.stream``; the openai SDK's
  ``chat.completions.create(stream=True)`` (raw chunks) and ``chat.completions.stream()``
  (the accumulating helper).
- ``first-event-anthropic``: msgwire's ``Anthropic.stream``; the anthropic SDK's
  ``messages.create(stream=True)`` and ``messages.stream()``.
- in both, ``httpx_floor``: a plain httpx stream handing out its first body chunk, unparsed:
  the wake-up, the write and the read every entry pays, so ``X - floor`` is X's own cost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from msgwire import user
from msgwire.harness import providers
from msgwire.testing import Received, Reply, ScriptedServer, recorded

WIRE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "wire"
ROUNDS = 300
RECORDINGS = {
    "openai": WIRE / "openai" / "chat-text-include-usage.sse",
    "anthropic": WIRE / "anthropic" / "text-minimal.sse",
}
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


class Gated:
    """A scripted server whose every reply waits for the bench to release its body."""

    def __init__(self, dialect: str) -> None:
        self.data = RECORDINGS[dialect].read_bytes()
        self.dialect = dialect
        self.gate = threading.Event()
        self.server = ScriptedServer(respond=self._reply)

    def _reply(self, received: Received) -> Reply:
        return recorded(self.data, self.dialect, gate=self.gate)


@pytest.fixture(scope="module")
def gated_openai() -> Iterator[Gated]:
    gated = Gated("openai")
    with gated.server:
        yield gated


@pytest.fixture(scope="module")
def gated_anthropic() -> Iterator[Gated]:
    gated = Gated("anthropic")
    with gated.server:
        yield gated


def _first_event_latency(benchmark: Any, gated: Gated, open_stream: Callable[[], Any]) -> None:
    """Time release -> first event, ``ROUNDS`` times; each round's stream is drained and
    closed before the next is opened (so its connection goes back to the pool)."""
    current: list[Any] = []
    firsts: list[Any] = []
    start = len(gated.server.requests)

    def finish_previous() -> None:
        if current:
            stream = current.pop()
            for _ in stream:
                pass
            stream.close()

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        finish_previous()
        gated.gate.clear()
        stream = open_stream()  # sent; the response headers are in
        current.append(stream)
        return (iter(stream),), {}

    def first_event(events: Iterator[Any]) -> Any:
        gated.gate.set()
        return next(events)

    def record(events: Iterator[Any]) -> None:
        firsts.append(first_event(events))

    benchmark.pedantic(record, setup=setup, rounds=ROUNDS, iterations=1)
    finish_previous()
    assert firsts
    assert all(type(e) is type(firsts[0]) for e in firsts)
    served = gated.server.wait(len(gated.server.requests))[start:]  # every reply written to its end
    assert served
    assert all(r.completed for r in served)


# --- OpenAI Chat Completions ----------------------------------------------------------------------


@pytest.mark.benchmark(group="first-event-openai")
def test_first_event_openai_msgwire(benchmark: Any, gated_openai: Gated) -> None:
    with providers.OpenAI(base_url=gated_openai.server.url, api_key="k", model="gpt-4o") as model:
        request = providers.Request(messages=[user("hi")])
        _first_event_latency(benchmark, gated_openai, lambda: model.stream(request))


@pytest.mark.benchmark(group="first-event-openai")
def test_first_event_openai_sdk_create(benchmark: Any, gated_openai: Gated) -> None:
    with openai.OpenAI(base_url=gated_openai.server.url, api_key="k", max_retries=0) as client:
        _first_event_latency(
            benchmark,
            gated_openai,
            lambda: client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True),
        )


class _Entered:
    """An SDK stream manager entered (the request sent), iterable and closable like a stream."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.stream = manager.__enter__()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.stream)

    def close(self) -> None:
        self.manager.__exit__(None, None, None)


@pytest.mark.benchmark(group="first-event-openai")
def test_first_event_openai_sdk_stream_helper(benchmark: Any, gated_openai: Gated) -> None:
    with openai.OpenAI(base_url=gated_openai.server.url, api_key="k", max_retries=0) as client:
        _first_event_latency(
            benchmark,
            gated_openai,
            lambda: _Entered(client.chat.completions.stream(model="gpt-4o", messages=MESSAGES)),
        )


class _RawBody:
    """A plain httpx streamed response: its body chunks as they arrive, nothing parsed."""

    def __init__(self, client: httpx.Client, url: str, body: dict[str, Any]) -> None:
        self.response = client.send(client.build_request("POST", url, json=body), stream=True)
        self.chunks = self.response.iter_bytes()

    def __iter__(self) -> Iterator[bytes]:
        return self.chunks

    def close(self) -> None:
        self.response.close()


@pytest.mark.benchmark(group="first-event-openai")
def test_first_event_openai_httpx_floor(benchmark: Any, gated_openai: Gated) -> None:
    body = {"model": "gpt-4o", "messages": MESSAGES, "stream": True}
    with httpx.Client() as client:
        url = f"{gated_openai.server.url}/chat/completions"
        _first_event_latency(benchmark, gated_openai, lambda: _RawBody(client, url, body))


# --- Anthropic Messages ---------------------------------------------------------------------------


@pytest.mark.benchmark(group="first-event-anthropic")
def test_first_event_anthropic_msgwire(benchmark: Any, gated_anthropic: Gated) -> None:
    with providers.Anthropic(base_url=gated_anthropic.server.url, api_key="k", model="claude-sonnet-4-6") as model:
        request = providers.Request(messages=[user("hi")], max_tokens=64)
        _first_event_latency(benchmark, gated_anthropic, lambda: model.stream(request))


@pytest.mark.benchmark(group="first-event-anthropic")
def test_first_event_anthropic_sdk_create(benchmark: Any, gated_anthropic: Gated) -> None:
    with anthropic.Anthropic(base_url=gated_anthropic.server.url, api_key="k", max_retries=0) as client:
        _first_event_latency(
            benchmark,
            gated_anthropic,
            lambda: client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=MESSAGES, stream=True),
        )


@pytest.mark.benchmark(group="first-event-anthropic")
def test_first_event_anthropic_httpx_floor(benchmark: Any, gated_anthropic: Gated) -> None:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": MESSAGES, "stream": True}
    with httpx.Client() as client:
        url = f"{gated_anthropic.server.url}/v1/messages"
        _first_event_latency(benchmark, gated_anthropic, lambda: _RawBody(client, url, body))


@pytest.mark.benchmark(group="first-event-anthropic")
def test_first_event_anthropic_sdk_stream_helper(benchmark: Any, gated_anthropic: Gated) -> None:
    with anthropic.Anthropic(base_url=gated_anthropic.server.url, api_key="k", max_retries=0) as client:
        _first_event_latency(
            benchmark,
            gated_anthropic,
            lambda: _Entered(client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=MESSAGES)),
        )
