"""Whether to send a request again, decided beside the official SDKs on the same replies.

For each error reply below (a status, the server's ``x-should-retry``, an error type), the
openai and anthropic SDK clients and msgwire's providers of the same APIs each send one request
to a scripted server of their own that answers with that error twice, then with a reply. The
number of requests each sent is the decision: 1 (not retried: the error raised), 3 (retried
twice: the reply). The SDKs are the oracle; the one case where msgwire decides otherwise on
purpose says so and why. Every error asks for a 1 ms wait (``retry-after-ms``, which both SDKs
and msgwire honour), so nothing here sleeps for long."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest

from msgwire import Request, user
from msgwire.errors import ProviderError
from msgwire.harness.providers import Anthropic, OpenAI, Retry
from msgwire.testing import ScriptedServer, error, reply

RETRIES = 2
REQUEST = Request(messages=[user("hi")], max_tokens=16)
WAIT = {"retry-after-ms": "1"}

# name -> (status, the error's type, the headers besides the wait, msgwire's count when it
# differs from the SDKs' on purpose, and why)
CASES: dict[str, tuple[int, str | None, dict[str, str], int | None, str]] = {
    "400": (400, "invalid_request_error", {}, None, ""),
    "401": (401, "authentication_error", {}, None, ""),
    "404": (404, "not_found_error", {}, None, ""),
    "408": (408, None, {}, None, ""),
    "409": (409, None, {}, None, ""),
    "422": (422, None, {}, None, ""),
    "422 api_error": (422, "api_error", {}, None, ""),  # with a status, the status decides
    "400 api_error": (400, "api_error", {}, None, ""),
    "429": (429, "rate_limit_error", {}, None, ""),
    "500": (500, "api_error", {}, None, ""),
    "502": (502, None, {}, None, ""),
    "503": (503, None, {}, None, ""),
    "529 overloaded": (529, "overloaded_error", {}, None, ""),
    "400, x-should-retry: true": (400, "invalid_request_error", {"x-should-retry": "true"}, None, ""),
    "503, x-should-retry: false": (503, None, {"x-should-retry": "false"}, None, ""),
    "429, x-should-retry: false": (429, "rate_limit_error", {"x-should-retry": "false"}, None, ""),
    "429 insufficient_quota": (
        429,
        "insufficient_quota",
        {},
        1,
        "OpenAI's 429 for a spent balance: no wait fixes it (ProviderError.retryable, FINAL_TYPES)",
    ),
}


def _script(server: ScriptedServer, status: int, error_type: str | None, headers: dict[str, str]) -> None:
    failing = error(status, "scripted failure", type=error_type, headers={**WAIT, **headers})
    server.add(failing, failing, reply("on the third try"))


def _sent(server: ScriptedServer) -> int:
    count = len(server.requests)
    server.wait(count)  # each answered
    return count


def _sdk_openai(url: str) -> None:
    with openai.OpenAI(api_key="k", base_url=url, max_retries=RETRIES) as client:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


def _sdk_anthropic(url: str) -> None:
    with anthropic.Anthropic(api_key="k", base_url=url, max_retries=RETRIES) as client:
        client.messages.create(model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}])


def _ours(dialect: str, url: str, streamed: bool) -> None:
    make: Any = {"openai": OpenAI, "anthropic": Anthropic}[dialect]
    with make(base_url=url, api_key="k", model="m", retry=Retry(max_retries=RETRIES, initial_delay=0.001)) as model:
        if streamed:
            for _ in model.stream(REQUEST):
                pass
        else:
            model.complete(REQUEST)


async def _ours_async(dialect: str, url: str) -> None:
    make: Any = {"openai": OpenAI, "anthropic": Anthropic}[dialect]
    async with make(base_url=url, api_key="k", model="m", retry=Retry(max_retries=RETRIES, initial_delay=0.001)) as m:
        await m.acomplete(REQUEST)


def _count(run: Any, status: int, error_type: str | None, headers: dict[str, str]) -> int:
    """How many requests ``run(url)`` sent, checked against how it ended: the error raised after
    one, the reply returned after three."""
    with ScriptedServer() as server:
        _script(server, status, error_type, headers)
        try:
            run(server.url)
            ended = "reply"
        except (openai.APIStatusError, anthropic.APIStatusError, ProviderError):
            ended = "error"
        sent = _sent(server)
    assert (sent, ended) in ((1, "error"), (RETRIES + 1, "reply")), (sent, ended)
    return sent


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_retry_decision_is_the_sdks(dialect: str, case: str) -> None:
    status, error_type, headers, ours_on_purpose, _why = CASES[case]
    sdk = {"openai": _sdk_openai, "anthropic": _sdk_anthropic}[dialect]
    theirs = _count(lambda url: sdk(url + ("/v1" if dialect == "openai" else "")), status, error_type, headers)
    expected = theirs if ours_on_purpose is None else ours_on_purpose
    for how, run in {
        "complete": lambda url: _ours(dialect, url, streamed=False),
        "stream": lambda url: _ours(dialect, url, streamed=True),
        "acomplete": lambda url: asyncio.run(_ours_async(dialect, url)),
    }.items():
        assert _count(run, status, error_type, headers) == expected, f"{how}: the SDK sent {theirs}"
