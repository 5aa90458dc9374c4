"""What the async calls take from the environment when no ``httpx.AsyncClient`` is given (aiohttp,
``providers/_aiohttp.py``): the proxy of ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY``, as the
sync calls (httpx's ``trust_env``) do, and not the credentials of a ``~/.netrc`` (the provider
sends its own key). A real ``ScriptedServer`` on 127.0.0.1 is the model, and another one the
proxy: a proxied request reaches it with the model's whole URL as its target."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from msgwire import user
from msgwire.harness.providers import OpenAI, Request
from msgwire.testing import ScriptedServer, reply

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def no_proxy_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


async def _two_answers(model: OpenAI) -> list[str]:
    try:
        return [(await model.acomplete(Request(messages=[user(f"hi {n}")]))).text for n in range(2)]
    finally:
        await model.aclose()


@pytest.mark.usefixtures("no_proxy_in_env")
def test_a_netrc_default_entry_does_not_break_the_async_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a `default` entry matches every host: aiohttp's trust_env added its Basic auth to the
    # provider's own Authorization header, and refused the request ("Cannot combine ...")
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with ScriptedServer([reply("one"), reply("two")]) as server:
        answers = asyncio.run(_two_answers(OpenAI(base_url=server.url, api_key="sk-key", model="m")))
    assert answers == ["one", "two"]
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer sk-key"] * 2


@pytest.mark.usefixtures("no_proxy_in_env")
def test_the_async_calls_go_through_the_proxy_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([reply("one"), reply("two")]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        model = OpenAI(base_url="http://model.invalid/v1", api_key="sk-key", model="m")
        answers = asyncio.run(_two_answers(model))
    assert answers == ["one", "two"]
    assert [r.path for r in proxy.requests] == ["http://model.invalid/v1/chat/completions"] * 2


@pytest.mark.usefixtures("no_proxy_in_env")
def test_no_proxy_sends_the_async_calls_straight_to_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([reply("never")]) as proxy, ScriptedServer([reply("one"), reply("two")]) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        answers = asyncio.run(_two_answers(OpenAI(base_url=server.url, api_key="sk-key", model="m")))
    assert answers == ["one", "two"]
    assert proxy.requests == []
    assert [r.path for r in server.requests] == ["/chat/completions"] * 2
