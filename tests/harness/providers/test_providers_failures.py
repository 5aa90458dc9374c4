"""Failures, on a real server that fails on purpose: HTTP errors become ``ProviderError`` with
the provider's words; retries happen before the first body byte only (429 with Retry-After,
500, a dropped connection), never after; a reset mid-body and a slow body raise
``TransportError`` with the partial message; closing a stream (leaving ``with``, cancelling the
task) closes the connection, which the server sees before the body's end."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable

import httpx
import pytest

import msgwire
from msgwire import ProviderError, TransportError, TruncatedStreamError, user
from msgwire.harness.providers import PROVIDERS, AsyncProviderStream, HTTPProvider, OpenAI, Request, Retry
from msgwire.harness.providers._http import Interrupted, retry_after
from msgwire.testing import Received, Reply, ScriptedServer, drop, error, recorded, reply
from tests._support.providers import DIALECTS, FAST_RETRY, LONG, WIRE

Connect = Callable[..., HTTPProvider]
REQUEST = Request(messages=[user("hi")], max_tokens=64)
ERROR_TYPES = {
    "openai": "invalid_request_error",
    "openai-responses": "invalid_request_error",
    "anthropic": "authentication_error",
    "gemini": "UNAUTHENTICATED",
    "ollama": "error",  # Ollama's error body is a bare message; msgwire names its type "error"
}


# --- HTTP errors and retries -------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_401_is_not_retried_and_carries_the_providers_words(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    server.add(error(401, "Incorrect API key provided", type=ERROR_TYPES[dialect] if dialect != "ollama" else None))
    model = connect(dialect)
    with pytest.raises(ProviderError) as failure:
        model.stream(REQUEST)
    err = failure.value
    assert (err.status, err.error_type, err.provider_message) == (
        401,
        ERROR_TYPES[dialect],
        "Incorrect API key provided",
    )
    assert err.request_id == "req_scripted_0001"
    assert err.retryable is False
    assert err.dialect == dialect
    assert "HTTP 401" in str(err)
    assert "req_scripted_0001" in str(err)
    assert len(server.wait(1)) == len(server.requests) == 1


def _strict(path: str) -> Callable[[Received], Reply]:
    """A server that answers only at ``path`` and 404s elsewhere, as OpenAI's API does."""

    def respond(received: Received) -> Reply:
        if received.path == path:
            return reply("found")
        return error(404, f"Invalid URL (POST {received.path})", type="invalid_request_error")

    return respond


@pytest.mark.parametrize(
    ("dialect", "base", "posted", "hint"),
    [
        ("openai", "", "/chat/completions", "usually under /v1: base_url='{url}/v1'"),
        ("openai", "/v1/chat/completions", "/v1/chat/completions/chat/completions", "base_url='{url}/v1'"),
        ("openai-responses", "/v1/responses", "/v1/responses/responses", "ends in /responses"),
        ("anthropic", "/v1", "/v1/v1/messages", "ends in /v1, which msgwire adds itself: base_url='{url}'"),
    ],
)
def test_a_404_names_the_url_posted_to_and_the_likely_base_url_mistake(
    dialect: str, base: str, posted: str, hint: str
) -> None:
    right = {"openai": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages"}
    with ScriptedServer(respond=_strict(right[dialect])) as strict:
        model = PROVIDERS[dialect](base_url=strict.url + base, api_key="k", model="m", retry=FAST_RETRY)
        with model, pytest.raises(ProviderError) as failure:
            model.stream(REQUEST)
        assert strict.requests[0].path == posted
    text = str(failure.value)
    assert f"at POST {strict.url}{posted} " in text
    assert failure.value.url == strict.url + posted
    assert hint.format(url=strict.url) in text


def test_an_error_status_names_the_url_and_a_right_base_url_gets_no_hint(server: ScriptedServer) -> None:
    server.add(error(404, "The model `m` does not exist", code="model_not_found"), error(500, "boom"))
    with OpenAI(base_url=server.url + "/v1", api_key="k", model="m", retry=FAST_RETRY) as model:
        for _ in range(2):
            with pytest.raises(ProviderError) as failure:
                model.complete(REQUEST)
            assert f"at POST {server.url}/v1/chat/completions (" in str(failure.value)
            assert "base_url" not in str(failure.value)  # the URL looks right: the error is the server's


def test_an_async_error_status_names_the_url_too(server: ScriptedServer) -> None:
    server.add(error(404, "Invalid URL (POST /chat/completions)"))

    async def call() -> ProviderError:
        async with OpenAI(base_url=server.url, api_key="k", model="m", retry=FAST_RETRY) as model:
            with pytest.raises(ProviderError) as failure:
                await model.acomplete(REQUEST)
            return failure.value

    failed = asyncio.run(call())
    assert f"at POST {server.url}/chat/completions (" in str(failed)
    assert f"base_url='{server.url}/v1'" in str(failed)


def test_429_with_retry_after_is_honoured_then_succeeds(
    server: ScriptedServer, connect: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    server.add(error(429, "Rate limit reached", retry_after=1), reply("after the wait"))
    caplog.set_level(logging.INFO, logger="msgwire.harness.providers")
    # a backoff would wait 1.5-2 s: told apart from the 1 s asked
    with connect("openai", retry=Retry(initial_delay=2.0)).stream(REQUEST) as stream:
        assert stream.until_done().text == "after the wait"
    refused, served = server.wait(2)
    assert [refused.status, served.status] == [429, 200]
    assert refused.first_byte_at is not None
    assert served.first_byte_at is not None
    gap = served.first_byte_at - refused.first_byte_at  # measured by the server: the 429 sent, the retry answered
    assert 1.0 <= gap < 1.25  # the server's word, no backoff or jitter (a loaded machine adds a little)
    (retry,) = caplog.records
    assert retry.msgwire_wait == 1.0  # type: ignore[attr-defined]  # and what msgwire says it waited
    assert "rate_limit_error" in retry.getMessage()


def test_a_retry_after_longer_than_max_wait_is_raised_at_once(server: ScriptedServer, connect: Connect) -> None:
    server.add(error(429, "Try tomorrow", retry_after=86400), reply("never served"))
    with pytest.raises(ProviderError) as failure:
        connect("anthropic").stream(REQUEST)
    assert failure.value.status == 429
    assert failure.value.retryable is True  # the caller decides whether to wait that long
    assert len(server.requests) == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_500_before_the_first_byte_is_retried(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    server.add(error(500, "Internal error"), error(503, "Unavailable"), reply("third time lucky"))
    with connect(dialect).stream(REQUEST) as stream:
        assert stream.until_done().text == "third time lucky"
    assert [r.status for r in server.wait(3)] == [500, 503, 200]


def test_retries_stop_after_max_retries(server: ScriptedServer, connect: Connect) -> None:
    server.add(*[error(502, "Bad gateway")] * 4)
    with pytest.raises(ProviderError) as failure:
        connect("openai", retry=Retry(max_retries=2, initial_delay=0.01)).complete(REQUEST)
    assert (failure.value.status, failure.value.retryable) == (502, True)
    assert len(server.wait(3)) == 3
    assert server.pending == 1


def test_anthropic_overloaded_error_is_retried(server: ScriptedServer, connect: Connect) -> None:
    server.add(error(529, "Overloaded", type="overloaded_error"), reply("ok"))
    assert connect("anthropic").complete(REQUEST).text == "ok"
    assert [r.status for r in server.wait(2)] == [529, 200]


def test_a_connection_dropped_before_any_response_is_retried(server: ScriptedServer, connect: Connect) -> None:
    server.add(drop(), reply("reconnected"))
    with connect("gemini").stream(REQUEST) as stream:
        assert stream.until_done().text == "reconnected"
    assert len(server.wait(2)) == 2


def test_a_refused_connection_fails_as_transport_error_after_the_retries() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = msgwire.harness.providers.OpenAI(
        base_url=f"http://127.0.0.1:{port}", api_key="k", model="m", retry=FAST_RETRY
    )
    with model, pytest.raises(TransportError) as failure:
        model.stream(REQUEST)
    assert isinstance(failure.value.__cause__, httpx.ConnectError)
    assert "after 3 attempts" in str(failure.value)


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_retry_delays_grow_with_jitter_and_stop() -> None:
    policy = Retry(max_retries=3, initial_delay=1.0, max_delay=3.0)
    for attempt, ceiling in enumerate((1.0, 2.0, 3.0)):
        delay = policy.delay(attempt)
        assert delay is not None
        assert 0.75 * ceiling <= delay <= ceiling
    assert policy.delay(3) is None
    assert policy.delay(0, retry_after=5.0) == 5.0
    assert Retry(max_wait=4.0).delay(0, retry_after=5.0) is None


# --- failures after the first byte: never retried ----------------------------------------------


def _partial(data: bytes, dialect: str, cut: int) -> msgwire.AssistantMessage:
    """What the wire layer makes of exactly the first ``cut`` bytes (a stream cut short)."""
    with pytest.raises(TruncatedStreamError) as cut_short:
        msgwire.assemble(data[:cut], dialect)
    return cut_short.value.partial_message  # type: ignore[no-any-return]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_connection_closed_mid_body_raises_with_the_partial_message_and_is_not_retried(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    data = LONG[dialect].read_bytes()
    cut = len(data) // 2
    server.add(recorded(data, dialect, close_after=cut), reply("a retry would get this"))
    with connect(dialect).stream(REQUEST) as stream, pytest.raises(TransportError) as failure:
        stream.until_done()
    assert isinstance(failure.value.__cause__, httpx.RemoteProtocolError)  # incomplete chunked read
    partial = failure.value.partial_message
    assert partial.stop_reason == "error"
    assert stream.message().content == partial.content
    assert failure.value.offset == cut
    assert partial.content == _partial(data, dialect, cut).content
    assert partial.content  # half the stream carried something
    (received,) = server.wait(1)
    assert received.bytes_sent == cut
    assert server.pending == 1  # not retried


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_reset_mid_body_raises_with_the_partial_message_and_is_not_retried(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    data = LONG[dialect].read_bytes()
    cut = len(data) // 2
    server.add(recorded(data, dialect, reset_after=cut), reply("a retry would get this"))
    with connect(dialect).stream(REQUEST) as stream, pytest.raises(TransportError) as failure:
        stream.until_done()
    assert isinstance(failure.value.__cause__, httpx.TransportError)
    partial = failure.value.partial_message
    assert partial.stop_reason == "error"
    assert stream.message().content == partial.content
    # A reset may discard bytes the client had not read yet: the message holds exactly what the
    # bytes it did read carry (nothing, when it read none: the reset came before its first read).
    received_bytes = failure.value.offset
    assert received_bytes is not None
    assert received_bytes <= cut
    assert partial.content == _partial(data, dialect, received_bytes).content
    (received,) = server.wait(1)
    assert received.bytes_sent == cut
    assert server.pending == 1  # not retried


def test_an_error_inside_the_stream_is_a_provider_error_with_the_request_id(
    server: ScriptedServer, connect: Connect
) -> None:
    data = (WIRE / "openai-compat" / "openrouter-midstream-error.sse").read_bytes()
    server.add(recorded(data, "openai"), reply("not retried"))
    with connect("openai").stream(REQUEST) as stream, pytest.raises(ProviderError) as failure:
        stream.until_done()
    assert failure.value.status is None
    assert failure.value.request_id == stream.request_id == "req_scripted_0001"
    assert failure.value.partial_message.stop_reason == "error"
    assert server.pending == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_slow_body_arrives_whole(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, chunk_size=len(data) // 40 + 1, delay=0.002))  # 40 pieces
    with connect(dialect).stream(REQUEST) as stream:
        message = stream.until_done()
    assert message.content == msgwire.assemble(data, dialect).content
    (received,) = server.wait(1)
    assert received.completed


def test_a_body_slower_than_the_read_timeout_fails_with_the_partial_message(
    server: ScriptedServer, connect: Connect
) -> None:
    data = LONG["anthropic"].read_bytes()
    server.add(recorded(data, "anthropic", delay=30.0))
    model = connect("anthropic", timeout=httpx.Timeout(5.0, read=0.2))
    events = []
    with model.stream(REQUEST) as stream, pytest.raises(TransportError) as failure:
        events.extend(stream)
    assert isinstance(failure.value.__cause__, httpx.ReadTimeout)
    assert events  # the first piece arrived before the wait
    assert failure.value.partial_message.stop_reason == "error"
    (received,) = server.wait(1)
    assert received.client_closed
    assert not received.completed


# --- cancellation ------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_leaving_the_with_closes_the_connection_before_the_body_ends(
    server: ScriptedServer, connect: Connect, dialect: str
) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, hold_after=len(data) // 3))
    with connect(dialect).stream(REQUEST) as stream:
        first = next(stream)
    assert first.type == "message_start"
    assert stream.message().stop_reason == "aborted"  # closed before its end
    (received,) = server.wait(1)  # the server was holding the rest until the client went away
    assert received.client_closed
    assert received.bytes_sent < received.body_size
    assert not received.completed


def test_close_before_reading_closes_the_connection(server: ScriptedServer, connect: Connect) -> None:
    server.add(reply("never read", hold_after=0))
    stream = connect("openai").stream(REQUEST)
    stream.close()
    assert stream.message().stop_reason == "aborted"
    (received,) = server.wait(1)
    assert received.client_closed
    assert received.bytes_sent == 0


def test_interrupting_from_another_thread_ends_a_blocked_read_at_once(server: ScriptedServer, connect: Connect) -> None:
    data = LONG["openai"].read_bytes()
    server.add(recorded(data, "openai", hold_after=len(data) // 3), reply("after"))
    model = connect("openai")
    with model.stream(REQUEST) as stream:
        first = next(stream)
        timer = threading.Timer(0.2, stream.interrupt)  # the server holds the rest: the read blocks
        started = time.monotonic()
        timer.start()
        with pytest.raises(TransportError) as failure:
            for _ in stream:
                pass
        took = time.monotonic() - started
    assert first.type == "message_start"
    assert took < 3, f"the read ended {took:.2f} s later"  # the server would hold it for 10 s
    assert isinstance(failure.value.__cause__, Interrupted)
    assert stream.message().stop_reason == "aborted"
    (received, *_) = server.wait(1)
    assert received.client_closed
    with model.stream(REQUEST) as again:  # the provider's client goes on
        assert again.until_done().text == "after"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_cancelling_the_task_closes_the_connection(server: ScriptedServer, connect: Connect, dialect: str) -> None:
    data = LONG[dialect].read_bytes()
    server.add(recorded(data, dialect, hold_after=len(data) // 3), recorded(data, dialect, hold_after=len(data) // 3))
    model = connect(dialect)

    streams: list[AsyncProviderStream] = []

    async def read(started: asyncio.Event, with_block: bool) -> None:
        if with_block:
            async with model.astream(REQUEST) as stream:
                streams.append(stream)
                async for _ in stream:
                    started.set()
        else:  # no `async with`: the cancellation alone must close the response
            streams.append(await model.astream(REQUEST))
            async for _ in streams[-1]:
                started.set()

    async def cancel_after_first_event(with_block: bool) -> None:
        started = asyncio.Event()
        task = asyncio.create_task(read(started, with_block))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert streams[-1].message().stop_reason == "aborted"

    async def run() -> None:
        await cancel_after_first_event(with_block=True)
        await cancel_after_first_event(with_block=False)
        await model.aclose()

    asyncio.run(run())
    for received in server.wait(2):
        assert received.client_closed
        assert received.bytes_sent < received.body_size
