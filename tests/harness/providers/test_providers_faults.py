"""Providers at their edges, on a real server that misbehaves as providers do: an error inside a
200 stream (each dialect's own frame), a stream that never goes quiet (keep-alive comments), a
server that goes silent after some progress, ``Retry-After`` longer than we wait, an error body
framed as server-sent events, a 200 body that is no JSON. Each test checks what is kept (the
partial message, the request id), the requests made (retries), and the time taken, within
bounds generous enough for a loaded machine (the failure they guard against takes the server's
whole hold, 10 s)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

import msgwire
from msgwire import ProviderError, TransportError, TruncatedStreamError, user
from msgwire.harness import Agent
from msgwire.harness.providers import DeadlineExceeded, HTTPProvider, OpenAI, Request, Retry
from msgwire.testing import ScriptedServer, error, recorded, reply, stream_error
from tests._support.localserver import LocalServer
from tests._support.localserver import Reply as Served
from tests._support.providers import DIALECTS, LONG

Connect = Callable[..., HTTPProvider]
REQUEST = Request(messages=[user("hi")], max_tokens=64)
# The error each dialect's API reports inside a stream when it fails on its side.
SERVER_FAILURE = {
    "openai": "server_error",
    "openai-responses": "server_error",
    "anthropic": "overloaded_error",
    "gemini": "UNAVAILABLE",
}
SLACK = 2.0  # seconds a loaded machine may add to a deadline


def _partial(data: bytes, dialect: str, size: int) -> msgwire.AssistantMessage:
    """What the wire layer makes of the first ``size`` bytes of ``data``."""
    with pytest.raises(TruncatedStreamError) as cut_short:
        msgwire.assemble(data[:size], dialect)  # type: ignore[arg-type]
    partial = cut_short.value.partial_message
    assert partial is not None
    return partial


@pytest.fixture
def elapsed() -> Callable[[], float]:
    """Seconds since the test began."""
    started = time.monotonic()
    return lambda: time.monotonic() - started


# --- an error inside a 200 stream ------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_in_band_error_keeps_the_partial_message_and_is_retryable_as_a_status(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    kind = SERVER_FAILURE.get(dialect)
    server.add(stream_error("upstream overloaded", type=kind, code=503, partial="It is 21 d"), reply("not sent"))
    with connect(dialect).stream(REQUEST) as stream, pytest.raises(ProviderError) as failure:
        stream.until_done()
    err = failure.value
    assert err.partial_message is not None
    assert (err.partial_message.text, err.partial_message.stop_reason) == ("It is 21 d", "error")
    assert (err.status, err.request_id, err.provider_message) == (None, "req_scripted_0001", "upstream overloaded")
    assert err.retryable is (dialect != "ollama")  # Ollama's error line says nothing of its kind
    assert server.pending == 1  # the transport never sends again once the reply has begun


@pytest.mark.parametrize("dialect", SERVER_FAILURE)
def test_the_agent_retries_an_in_band_server_failure_and_keeps_the_failed_attempt(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    server.add(
        stream_error("upstream overloaded", type=SERVER_FAILURE[dialect], code=503, partial="It is"),
        reply("It is 21 degrees."),
    )
    with Agent(connect(dialect), retries=1, max_tokens=64) as agent:
        answer = agent.run("Weather?")
    assert answer.text == "It is 21 degrees."
    entries = agent.conversation.entries
    assert [e.decision for e in entries] == ["user_input", "error", "planning"]
    failed = entries[1]
    assert (failed.message.text, failed.message.stop_reason) == ("It is", "error")
    assert (failed.audit["kind"], failed.audit["retrying"]) == ("provider", True)
    first, second = server.wait(2)
    assert second.body == first.body


def test_the_agent_waits_the_providers_backoff_before_sending_a_failed_stream_again(
    server: ScriptedServer, connect: Connect
) -> None:
    server.add(stream_error("overloaded", type="server_error", partial="It"), reply("It is 21 degrees."))
    backoff = Retry(initial_delay=0.4, max_delay=0.4)  # 0.3-0.4 s with the jitter
    with Agent(connect("openai", retry=backoff), retries=1) as agent:
        assert agent.provider.retry is backoff  # type: ignore[attr-defined]
        assert agent.run("Weather?").text == "It is 21 degrees."
    first, second = server.wait(2)
    assert second.first_byte_at - first.first_byte_at >= 0.29  # type: ignore[operator]


def test_the_agent_does_not_retry_an_in_band_error_that_would_fail_again(
    server: ScriptedServer, connect: Connect
) -> None:
    server.add(stream_error("bad tool schema", type="invalid_request_error", partial="It"), reply("not sent"))
    with Agent(connect("openai"), retries=2) as agent, pytest.raises(ProviderError) as failure:
        agent.run("Weather?")
    assert failure.value.retryable is False
    assert agent.conversation.entries[-1].audit["retrying"] is False
    assert server.pending == 1


# --- a stream that never goes quiet: keep-alives and the deadline ----------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_deadline_ends_a_stream_that_keeps_sending_keep_alives(
    server: ScriptedServer, connect: Connect, dialect: str, elapsed: Callable[[], float]
) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, hold_after=len(data) // 2, keepalive=0.05))
    model = connect(dialect, timeout=0.5, deadline=1.0)  # each read comes well within its timeout
    with model.stream(REQUEST) as stream, pytest.raises(TransportError) as failure:
        stream.until_done()
    took = elapsed()
    assert 1.0 <= took < 1.0 + SLACK
    assert isinstance(failure.value.__cause__, DeadlineExceeded)
    assert "deadline=1 s" in str(failure.value)
    (received,) = server.wait(1)
    assert received.keepalives >= 5  # the stream was never quiet for the timeout's 0.5 s
    assert received.client_closed
    partial = failure.value.partial_message
    assert partial is not None
    assert partial.stop_reason == "error"
    assert partial.content == _partial(data, dialect, received.bytes_sent).content
    assert partial.content  # half the stream carried something


def test_without_a_deadline_keep_alives_keep_a_slow_stream_alive_past_its_timeout(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    # ``timeout`` bounds each read: events 0.3 s apart with a keep-alive every 0.05 s never trip
    # a 0.2 s timeout, however long the stream lasts.
    server.add(reply("It is 21 degrees.", delay=0.3, keepalive=0.05))
    with connect("openai", timeout=0.2).stream(REQUEST) as stream:
        assert stream.until_done().text == "It is 21 degrees."
    (received,) = server.wait(1)
    assert elapsed() > 0.6  # several events, each later than the timeout
    assert received.keepalives > 0


async def _read(model: HTTPProvider) -> None:
    async with model.astream(REQUEST) as stream:
        await stream.until_done()


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_deadline_ends_an_async_stream_that_keeps_sending_keep_alives(
    server: ScriptedServer, connect: Connect, dialect: str, elapsed: Callable[[], float]
) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, hold_after=len(data) // 2, keepalive=0.05))
    model = connect(dialect, timeout=0.5, deadline=1.0)

    async def run() -> BaseException:
        try:
            await _read(model)
        except TransportError as failed:
            return failed
        finally:
            await model.aclose()
        raise AssertionError("the stream ended by itself")

    failure = asyncio.run(run())
    assert 1.0 <= elapsed() < 1.0 + SLACK
    assert isinstance(failure.__cause__, DeadlineExceeded)
    (received,) = server.wait(1)
    assert received.client_closed
    assert isinstance(failure, TransportError)
    assert failure.partial_message is not None
    assert failure.partial_message.content == _partial(data, dialect, received.bytes_sent).content


# --- a server that goes silent after some progress -------------------------------------------------


def _silent_after_progress(data: bytes, events: int) -> dict[str, Any]:
    """Delivery: ``events`` events 0.25 s apart, then nothing (held open)."""
    ends = [i + 2 for i in range(len(data)) if data[i : i + 2] == b"\n\n"]
    return {"delay": 0.25, "hold_after": ends[events - 1]}


def test_a_deadline_ends_a_read_blocked_on_a_silent_server_in_time(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    # 6 events over 1.25 s, then silence: each read's timeout, cut to the time left when the
    # request went out (2 s), would end the last read at about 3.25 s; the deadline ends it at 2.
    data = LONG["anthropic"].read_bytes()
    server.add(recorded(data, "anthropic", **_silent_after_progress(data, 6)))
    model = connect("anthropic", timeout=30.0, deadline=2.0)
    with model.stream(REQUEST) as stream, pytest.raises(TransportError) as failure:
        stream.until_done()
    assert 2.0 <= elapsed() < 2.0 + 1.0
    assert isinstance(failure.value.__cause__, DeadlineExceeded)
    (received,) = server.wait(1)
    assert failure.value.partial_message is not None
    assert failure.value.partial_message.content == _partial(data, "anthropic", received.bytes_sent).content


def test_an_async_read_blocked_on_a_silent_server_ends_at_the_deadline(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    data = LONG["openai"].read_bytes()
    server.add(recorded(data, "openai", **_silent_after_progress(data, 6)))
    model = connect("openai", timeout=30.0, deadline=2.0)

    async def run() -> None:
        try:
            await _read(model)
        finally:
            await model.aclose()

    with pytest.raises(TransportError) as failure:
        asyncio.run(run())
    assert 2.0 <= elapsed() < 2.0 + 1.0
    assert isinstance(failure.value.__cause__, DeadlineExceeded)


def test_a_non_streamed_call_ends_at_the_deadline(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    server.add(reply("never whole", hold_after=5))
    with pytest.raises(TransportError) as failure:
        connect("openai", timeout=30.0, deadline=0.5).complete(REQUEST)
    assert 0.5 <= elapsed() < 0.5 + SLACK
    assert isinstance(failure.value.__cause__, DeadlineExceeded)
    assert "req_scripted_0001" in str(failure.value)


# --- retries against the clock: Retry-After, max_wait, the deadline --------------------------------


def test_a_retry_after_over_max_wait_says_so_in_the_error(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    server.add(error(429, "Rate limit reached", retry_after=120), reply("never served"))
    with pytest.raises(ProviderError) as failure:
        connect("openai", retry=Retry(max_wait=60)).stream(REQUEST)
    assert "not retried: the server asked to wait 120 s, over max_wait=60" in str(failure.value)
    assert (failure.value.status, failure.value.retryable) == (429, True)  # the caller may wait that long
    assert elapsed() < SLACK
    assert len(server.requests) == 1


def test_a_retry_after_past_the_deadline_is_not_waited_for(
    server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]
) -> None:
    server.add(error(503, "Busy", retry_after=5), reply("never served"))
    with pytest.raises(ProviderError) as failure:
        connect("gemini", retry=Retry(), deadline=2.0).complete(REQUEST)
    assert "not retried: waiting 5 s would pass deadline=2" in str(failure.value)
    assert elapsed() < SLACK
    assert len(server.requests) == 1


def test_retries_stop_at_the_deadline(server: ScriptedServer, connect: Connect, elapsed: Callable[[], float]) -> None:
    server.add(*[error(500, "Internal error")] * 10)
    model = connect("anthropic", retry=Retry(max_retries=9, initial_delay=0.3, max_delay=0.3), deadline=1.0)
    with pytest.raises(ProviderError) as failure:
        model.stream(REQUEST)
    assert "would pass deadline=1" in str(failure.value)
    assert elapsed() < 1.0 + SLACK
    assert 2 <= len(server.wait(2)) <= 4  # about 1 s of 0.23-0.3 s waits, never all ten


def test_a_retry_within_the_deadline_is_made(server: ScriptedServer, connect: Connect) -> None:
    server.add(error(429, "Rate limit reached", retry_after=0.2), reply("after the wait"))
    assert connect("openai", retry=Retry(), deadline=5.0).complete(REQUEST).text == "after the wait"
    assert [r.status for r in server.wait(2)] == [429, 200]


# --- error bodies that are not what the dialect says ------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai", "openai-responses"])
def test_an_sse_framed_error_body_is_read_and_retried(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    server.add(error(500, "upstream failed", type="internal_server_error", code="500", sse=True), reply("recovered"))
    server.add(error(400, "bad request", type="invalid_request_error", sse=True))
    model = connect(dialect)
    assert model.complete(REQUEST).text == "recovered"
    with pytest.raises(ProviderError) as failure:
        model.complete(REQUEST)
    assert (failure.value.status, failure.value.error_type) == (400, "invalid_request_error")
    assert failure.value.provider_message == "bad request"
    assert [r.status for r in server.wait(3)] == [500, 200, 400]


HTML = b"<html><body>Bad gateway</body></html>"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (HTML, 'not a JSON body (it starts with "<html><body>Bad gateway</body></html>")'),
        (
            b'data: {"id":"c1","object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n',
            'not a JSON body: a stream, from a server that ignored "stream": false (it starts with "data: {',
        ),
    ],
    ids=["html", "a-stream"],
)
def test_complete_on_a_body_that_is_no_json_shows_how_it_starts(body: bytes, says: str) -> None:
    with LocalServer() as local:
        local.route("/v1/chat/completions", Served(200, body, {"content-type": "text/html", "x-request-id": "req_9"}))
        model = OpenAI(base_url=local.url("/v1"), api_key="k", model="m", max_retries=0)
        with model, pytest.raises(msgwire.DecodeError) as failure:
            model.complete(REQUEST)
    assert says in str(failure.value)
    assert "[request id req_9]" in str(failure.value)
    assert failure.value.offset == 0


def test_complete_on_json_of_the_wrong_shape_still_names_the_path() -> None:
    with LocalServer() as local:
        local.route("/v1/chat/completions", Served(200, b'{"choices": 5}', {"content-type": "application/json"}))
        model = OpenAI(base_url=local.url("/v1"), api_key="k", model="m", max_retries=0)
        with model, pytest.raises(msgwire.DecodeError) as failure:
            model.complete(REQUEST)
    assert "not a JSON body" not in str(failure.value)
    assert failure.value.path is not None


# --- the deadline is checked ------------------------------------------------------------------------


@pytest.mark.parametrize("deadline", [0, -1.0, float("nan")])
def test_a_deadline_is_a_positive_number_of_seconds(deadline: float) -> None:
    with pytest.raises(ValueError, match="deadline is a number of seconds above 0"):
        OpenAI(api_key="k", deadline=deadline)


# --- the server's own word on retrying: x-should-retry ----------------------------------------------


def test_x_should_retry_true_retries_a_status_the_rule_would_not(server: ScriptedServer, connect: Connect) -> None:
    server.add(error(400, "try again", headers={"x-should-retry": "true"}), reply("on the second try"))
    assert connect("openai", retry=Retry(initial_delay=0.01)).complete(REQUEST).text == "on the second try"
    assert [r.status for r in server.wait(2)] == [400, 200]


def test_x_should_retry_false_is_not_retried_and_says_why(server: ScriptedServer, connect: Connect) -> None:
    server.add(error(503, "do not come back", headers={"x-should-retry": "false"}), reply("never served"))

    async def call() -> None:
        async with connect("anthropic", retry=Retry(initial_delay=0.01)) as model:  # async: the other transport
            await model.acomplete(REQUEST)

    with pytest.raises(ProviderError) as failure:
        asyncio.run(call())
    assert "not retried: the server said x-should-retry: false" in str(failure.value)
    assert (failure.value.status, failure.value.retryable) == (503, True)
    assert len(server.requests) == 1
