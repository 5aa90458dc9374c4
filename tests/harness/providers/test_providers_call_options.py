"""A call's own ``retry=`` (a caller that retries itself asks the provider for one attempt: one
retry layer, not two) and ``tap=`` (the reply's bytes as they are read, before msgwire decodes
them), on every call: ``stream``, ``astream``, ``complete``, ``acomplete``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from msgwire import ProviderError, Request, user
from msgwire.harness.providers import HTTPProvider, Retry
from msgwire.testing import ScriptedServer, error, recorded, reply
from tests._support.providers import FAST_RETRY, LONG

Connect = Callable[..., HTTPProvider]
REQUEST = Request(messages=[user("hi")], max_tokens=50)
ONCE = Retry(max_retries=0)


def _read(provider: HTTPProvider, how: str, **options: object) -> object:
    if how == "stream":
        with provider.stream(REQUEST, **options) as stream:  # type: ignore[arg-type]
            return stream.until_done()
    if how == "complete":
        return provider.complete(REQUEST, **options)  # type: ignore[arg-type]

    async def go() -> object:
        try:
            if how == "astream":
                async with provider.astream(REQUEST, **options) as stream:  # type: ignore[arg-type]
                    return await stream.until_done()
            return await provider.acomplete(REQUEST, **options)  # type: ignore[arg-type]
        finally:
            await provider.aclose()  # its HTTP client belongs to this event loop

    return asyncio.run(go())


@pytest.mark.parametrize("how", ["stream", "astream", "complete", "acomplete"])
def test_a_calls_retry_replaces_the_providers(server: ScriptedServer, connect: Connect, how: str) -> None:
    provider = connect("openai", retry=FAST_RETRY)  # two retries by default
    server.add(error(503), reply("late"))
    with pytest.raises(ProviderError) as raised:
        _read(provider, how, retry=ONCE)
    assert raised.value.status == 503
    assert len(server.requests) == 1  # one attempt: this call's retry, not the provider's
    assert server.pending == 1
    _read(provider, how)  # the provider's own retry is untouched: the next call is answered
    assert len(server.requests) == 2


@pytest.mark.parametrize("how", ["stream", "astream", "complete", "acomplete"])
@pytest.mark.parametrize("dialect", ["openai", "openai-responses", "anthropic"])
def test_a_tap_sees_every_byte_of_the_reply_and_its_headers(
    server: ScriptedServer, connect: Connect, how: str, dialect: str
) -> None:
    data = Path(LONG[dialect]).read_bytes()
    server.add(recorded(data, dialect, chunk_size=97))
    seen: list[bytes] = []
    headers: list[Mapping[str, str]] = []

    def tap(reply_headers: Mapping[str, str], piece: bytes) -> None:
        headers.append(reply_headers)
        seen.append(piece)

    message = _read(connect(dialect), how, tap=tap)
    body = b"".join(seen)
    if how.endswith("stream"):
        assert body == data  # in as many pieces as the reads took (one, when a loaded client finds it all buffered)
    else:  # the server assembles a recording for a request not streamed: its JSON, whole, once
        assert len(seen) == 1
        assert len(body) == server.requests[-1].body_size
        assert body.lstrip().startswith(b"{")
    assert message is not None
    assert {h.get("x-request-id") or h.get("request-id") for h in headers} == {server.requests[-1].request_id}
