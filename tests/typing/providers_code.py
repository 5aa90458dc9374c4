"""Provider code as a user writes it: it must type-check under mypy --strict with no error (run by
tests/test_typing.py); each class is what type checkers infer, every option known."""

from __future__ import annotations

import httpx

import msgwire
from msgwire.harness import Agent
from msgwire.harness.providers import (
    PRESETS,
    Anthropic,
    DeadlineExceeded,
    HTTPProvider,
    OpenAI,
    Preset,
    Provider,
    Request,
    Retry,
    create,
)
from msgwire.testing import ScriptedServer, reply, stream_error, tool_call


def providers(url: str) -> list[HTTPProvider]:
    openai = OpenAI(
        base_url=url,
        api_key="k",
        model="gpt-4o",
        timeout=httpx.Timeout(30.0, connect=5.0),
        deadline=120.0,
        retry=Retry(max_retries=3, max_wait=30.0),
        headers={"x-team": "a"},
        stream_options={"partial_args": True},
        max_tokens_field="max_tokens",
        system_role="developer",
    )
    claude: Anthropic = create("anthropic", api_key="k", model="claude-sonnet-4-5", deadline=60.0)
    groq: OpenAI = create("groq", api_key="k", model="llama", include_usage=False)
    mine: HTTPProvider = create("my-proxy", base_url=url, api_key="k")
    PRESETS["my-proxy"] = Preset(dialect="openai", base_url=url, env="MY_PROXY_KEY")
    return [openai, claude, groq, mine]


def settings_of(provider: Provider) -> tuple[float, bool]:
    """What the agent and replay read of any provider: the retry policy's backoff, the policy."""
    return provider.retry.backoff(0), provider.policy is None


def answer(model: OpenAI) -> str:
    try:
        return model.complete(Request(messages=[msgwire.user("hi")], max_tokens=10)).text
    except msgwire.TransportError as failed:
        if isinstance(failed.__cause__, DeadlineExceeded) and failed.partial_message is not None:
            return failed.partial_message.text
        raise
    except msgwire.ProviderError as failed:
        return "retry later" if failed.retryable else str(failed)


def scripted() -> str:
    script = [
        reply([tool_call("read_file", {"path": "a.txt"})]),
        stream_error("overloaded", type="server_error", code=503, partial="It is", keepalive=0.1),
        reply("Done.", delay=0.1, keepalive=0.05),
    ]
    with ScriptedServer(script) as server, Agent(OpenAI(base_url=server.url, api_key="k"), retries=1) as agent:
        return agent.run("hi").text
