"""What a stream reads from, against a real HTTP server on 127.0.0.1 (tests/_support/localserver.py):

- an HTTP response with an error status is ``ProviderError`` with the status, the provider's
  error type and message, the request id and ``retryable``, for httpx (sync and async),
  requests and aiohttp, through ``stream``, ``assemble``, ``transcode`` and their async forms;
- a 200 body that is no stream (an HTML page) is ``MalformedStreamError`` (``not_a_stream``);
- a wrong argument is a ``TypeError`` naming it, at the call; an async source given to the sync
  API is a ``UsageError``, never a ``TransportError``; an SDK ``Stream`` is read through its
  response.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import openai
import pytest
import requests

import msgwire
from msgwire import MalformedStreamError, ProviderError, TransportError, UsageError
from tests._support.localserver import LocalServer, Reply

WIRE = Path(__file__).parents[1] / "fixtures" / "wire"
OPENAI_BODY = (WIRE / "openai" / "chat-text-include-usage.sse").read_bytes()

OPENAI_401 = (
    b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}'
)
ANTHROPIC_529 = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_x"}'
GEMINI_429 = b'{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}'
HTML_502 = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"

# (path, dialect, reply, status, error type, retryable)
ERRORS = {
    "openai-401": ("openai", Reply(401, OPENAI_401, {"x-request-id": "req_123"}), "invalid_request_error", False),
    "anthropic-529": ("anthropic", Reply(529, ANTHROPIC_529, {"request-id": "req_456"}), "overloaded_error", True),
    "gemini-429": ("gemini", Reply(429, GEMINI_429, {"content-type": "application/json"}), "RESOURCE_EXHAUSTED", True),
    "html-502": ("openai", Reply(502, HTML_502, {"content-type": "text/html"}), "http_502", True),
    "responses-400": ("openai-responses", Reply(400, OPENAI_401, {}), "invalid_request_error", False),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        for name, (_, reply, _, _) in ERRORS.items():
            running.route(f"/{name}", reply)
        running.route("/ok", Reply(200, OPENAI_BODY))
        running.route("/html-200", Reply(200, HTML_502, {"content-type": "text/html"}))
        yield running


def _check(error: ProviderError, case: str) -> None:
    dialect, reply, error_type, retryable = ERRORS[case]
    assert error.status == reply.status
    assert error.error_type == error_type
    assert error.provider_message
    assert error.retryable is retryable
    assert error.dialect == dialect
    assert error.request_id == reply.headers.get("x-request-id", reply.headers.get("request-id"))
    assert error.partial_message is not None
    assert error.partial_message.content == []
    assert error.partial_message.stop_reason == "error"
    assert str(reply.status) in str(error)


# --- error statuses ----------------------------------------------------------------------------


def _read_all(how: str, response: Any, dialect: str, output: list[bytes]) -> None:
    if how == "stream":
        list(msgwire.stream(response, dialect))
    elif how == "assemble":
        msgwire.assemble(response, dialect)
    else:
        output.extend(msgwire.transcode(response, dialect, "openai"))


@pytest.mark.parametrize("case", list(ERRORS))
@pytest.mark.parametrize("how", ["stream", "assemble", "transcode"])
def test_httpx_error_status_is_a_provider_error(server: LocalServer, case: str, how: str) -> None:
    dialect = ERRORS[case][0]
    output: list[bytes] = []
    with (
        httpx.Client() as client,
        client.stream("POST", server.url(f"/{case}")) as response,
        pytest.raises(ProviderError) as raised,
    ):
        _read_all(how, response, dialect, output)
    _check(raised.value, case)
    if how == "transcode":  # the client is told, in its dialect
        assert b"error" in output[-1]
        assert raised.value.output == output[-1]


@pytest.mark.parametrize("case", list(ERRORS))
def test_requests_error_status_is_a_provider_error(server: LocalServer, case: str) -> None:
    with (
        requests.post(server.url(f"/{case}"), stream=True, timeout=10) as response,
        pytest.raises(ProviderError) as raised,
    ):
        msgwire.assemble(response, ERRORS[case][0])
    _check(raised.value, case)


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(ERRORS))
async def test_httpx_async_error_status_is_a_provider_error(server: LocalServer, case: str) -> None:
    dialect = ERRORS[case][0]
    async with httpx.AsyncClient() as client, client.stream("POST", server.url(f"/{case}")) as response:
        with pytest.raises(ProviderError) as raised:
            async for _ in msgwire.astream(response, dialect):
                pass
    _check(raised.value, case)
    output: list[bytes] = []
    async with httpx.AsyncClient() as client, client.stream("POST", server.url(f"/{case}")) as response:
        frames = msgwire.atranscode(response, dialect, "anthropic")
        with pytest.raises(ProviderError) as raised:
            await _drain(frames, output)
    assert b"event: error" in output[-1]
    assert raised.value.output == output[-1]


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(ERRORS))
async def test_aiohttp_error_status_is_a_provider_error(server: LocalServer, case: str) -> None:
    async with aiohttp.ClientSession() as session, session.post(server.url(f"/{case}")) as response:
        with pytest.raises(ProviderError) as raised:
            await msgwire.astream(response, ERRORS[case][0]).until_done()
    _check(raised.value, case)


async def _drain(frames: AsyncIterator[bytes], output: list[bytes]) -> None:
    async for frame in frames:
        output.append(frame)  # noqa: PERF401 - kept as they come, the error frame included


def test_a_successful_response_still_decodes(server: LocalServer) -> None:
    expected = msgwire.assemble(OPENAI_BODY, "openai").text
    with httpx.Client() as client, client.stream("POST", server.url("/ok")) as response:
        assert msgwire.assemble(response, "openai").text == expected
    with requests.post(server.url("/ok"), stream=True, timeout=10) as response:
        assert msgwire.assemble(response, "openai").text == expected


def test_an_html_page_with_status_200_is_not_a_stream(server: LocalServer) -> None:
    with (
        httpx.Client() as client,
        client.stream("GET", server.url("/html-200")) as response,
        pytest.raises(MalformedStreamError) as raised,
    ):
        msgwire.assemble(response, "openai")
    assert raised.value.kind == "not_a_stream"
    assert "502 Bad Gateway" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_random_bytes_are_not_a_stream() -> None:
    for dialect in ("openai", "anthropic", "gemini", "openai-responses", "ollama"):
        with pytest.raises(MalformedStreamError, match=r"not an (SSE|NDJSON) body") as raised:
            msgwire.assemble(b"\x00\x9f\x12 binary garbage\n\n", dialect)
        assert raised.value.kind == "not_a_stream"
        assert "\\x00" in str(raised.value)  # the first bytes are shown


def test_a_gemini_json_array_decodes() -> None:
    """Gemini without ``alt=sse`` answers with a JSON array of the chunks."""
    body = Path(__file__).parents[1] / "fixtures" / "realworld" / "gemini" / "gemini-2.5-flash-thought-parts-tool.sse"
    events = [line[6:] for line in body.read_text().splitlines() if line.startswith("data: ")]
    array = ("[" + ",\n".join(events) + "]").encode()
    assert msgwire.assemble(array, "gemini").content == msgwire.assemble(body.read_bytes(), "gemini").content
    with pytest.raises(MalformedStreamError, match="no provider error"):
        msgwire.assemble(array, "openai")


# --- wrong arguments ---------------------------------------------------------------------------


def _async_chunks() -> AsyncIterator[bytes]:
    async def chunks() -> AsyncIterator[bytes]:
        yield OPENAI_BODY

    return chunks()


WRONG: dict[str, tuple[Any, type[Exception], str]] = {
    "str": (OPENAI_BODY.decode(), TypeError, "not str"),
    "text file": (io.StringIO(OPENAI_BODY.decode()), TypeError, "text mode"),
    "list of ints": (list(OPENAI_BODY), TypeError, "list of ints"),
    "dict": ({"data": OPENAI_BODY}, TypeError, "not dict"),
    "None": (None, TypeError, "not NoneType"),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_a_wrong_source_is_a_type_error_at_the_call(case: str) -> None:
    source, error, words = WRONG[case]
    with pytest.raises(error, match=words):
        msgwire.stream(source, "openai")
    with pytest.raises(error, match=words):
        msgwire.assemble(source, "openai")
    with pytest.raises(error, match=words):
        msgwire.transcode(source, "openai", "anthropic")  # at the call, not at the first next()


def test_an_iterable_of_str_is_refused_when_read() -> None:
    with pytest.raises(TypeError, match="got str"):
        msgwire.assemble(iter([OPENAI_BODY.decode()]), "openai")


def test_an_async_source_in_the_sync_api_is_a_usage_error() -> None:
    source = _async_chunks()
    with pytest.raises(UsageError, match="async"):
        msgwire.assemble(source, "openai")
    with pytest.raises(UsageError):
        msgwire.transcode(source, "openai", "anthropic")
    assert not issubclass(UsageError, TransportError)
    assert issubclass(UsageError, RuntimeError)


@pytest.mark.anyio
async def test_an_async_httpx_response_in_the_sync_api_is_a_usage_error(server: LocalServer) -> None:
    async with httpx.AsyncClient() as client, client.stream("POST", server.url("/ok")) as response:
        with pytest.raises(UsageError, match="AsyncClient"):
            msgwire.assemble(response, "openai")
        assert (await msgwire.astream(response, "openai").until_done()).text


def test_a_bad_dialect_fails_at_the_call() -> None:
    for call in (
        lambda: msgwire.transcode(OPENAI_BODY, "opnai", "anthropic"),
        lambda: msgwire.transcode(OPENAI_BODY, "openai", "antropic"),
        lambda: msgwire.atranscode(OPENAI_BODY, "openai", "x"),
        lambda: msgwire.stream(OPENAI_BODY, "x"),
        lambda: msgwire.astream(OPENAI_BODY, "x"),
    ):
        with pytest.raises(ValueError, match="unknown dialect"):
            call()


def test_bytes_after_the_end_is_a_usage_error() -> None:
    decoder = msgwire.Decoder("openai")
    decoder.feed(OPENAI_BODY)
    message = decoder.finish()
    with pytest.raises(UsageError, match="after the stream was finished") as raised:
        decoder.feed(b"data: {}\n\n")
    assert raised.value.kind == "usage"
    assert decoder.message() == message  # the stream is not marked failed by the caller's mistake


def test_an_sdk_stream_is_read_through_its_response(server: LocalServer) -> None:
    """An openai SDK ``Stream`` (``create(stream=True)``) has not decoded anything until it is
    iterated: msgwire reads its raw response."""
    base = server.url("")
    with openai.OpenAI(api_key="x", base_url=base, max_retries=0) as client:
        server.route("/chat/completions", Reply(200, OPENAI_BODY))
        sdk_stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        assert msgwire.assemble(sdk_stream, "openai").text == msgwire.assemble(OPENAI_BODY, "openai").text
