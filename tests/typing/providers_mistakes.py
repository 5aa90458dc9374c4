"""Provider mistakes mypy --strict must catch (tests/test_typing.py expects exactly these
errors, one per line marked `# error:`)."""

from __future__ import annotations

from msgwire.harness.providers import Anthropic, Gemini, OpenAI, Retry, create


def mistakes(url: str) -> None:
    OpenAI(base_url=url, api_key="k", modle="m")  # error: call-arg
    OpenAI(base_url=url, timeout="30")  # error: arg-type
    OpenAI(deadline="soon")  # error: arg-type
    OpenAI(system_role="assistant")  # error: arg-type
    Anthropic(base_url=url, max_retry=3)  # error: call-arg
    Gemini(retry=3)  # error: arg-type
    create("groq", modle="m")  # error: call-overload
    create("anthropic", include_usage=False)  # error: call-overload
    claude: OpenAI = create("anthropic", api_key="k")  # error: assignment
    print(claude, Retry(max_wait="60"))  # error: arg-type
