"""OpenAI Chat Completions (``POST {base_url}/chat/completions``), and every server that speaks
it through ``base_url``: Azure OpenAI (``{endpoint}/openai/v1``, ``headers={"api-key": ...}``),
vLLM, Ollama's ``/v1``, llama.cpp's server, Groq, Mistral, DeepSeek, OpenRouter (see
``providers.PRESETS``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from msgwire.stream import StreamOptions
from msgwire.types import Dialect, Policy, Request, ToolCallIds

from ._base import HTTPProvider, Problems, ProviderOptions
from ._http import AsyncClient, Client, Retry, Timeout
from .capabilities import Capabilities

__all__ = ["OpenAI", "OpenAIOptions", "OpenAIPlatform"]

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAIPlatform:
    """What OpenAI's two APIs share (mixed in before ``HTTPProvider``): the key and URL
    variables, the public URL, and the rule for tool names."""

    env_api_key: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = OPENAI_BASE_URL
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    tool_name_rule: ClassVar[str] = "1-64 letters, digits, '_' or '-'"
    api_prefix: ClassVar[str | None] = "/v1"


class OpenAIOptions(ProviderOptions, total=False):
    """The constructor options of ``OpenAI``: every provider's and its own."""

    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None
    include_usage: bool
    system_role: Literal["system", "developer"]
    tool_call_ids: ToolCallIds | None


class OpenAI(OpenAIPlatform, HTTPProvider):
    """Chat Completions. Besides the common options (``HTTPProvider``):

    - ``max_tokens_field``: ``"max_completion_tokens"`` (OpenAI's own API, where reasoning
      models refuse ``max_tokens``) or ``"max_tokens"`` (what most compatible servers read);
      by default the first for OpenAI's URL, the second for any other (sent as ``extra`` of
      the dialect, which makes the wire writer keep that spelling);
    - ``include_usage``: ask for the usage chunk at the end of a stream (default ``True``);
    - ``system_role``: ``"developer"`` to send the system prompt as a developer message;
    - ``tool_call_ids``: the server's stricter id rule (``"mistral"``), for ``to_request``.
    """

    dialect: ClassVar[Dialect] = "openai"
    max_stop: ClassVar[int] = 4

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | Timeout | None = None,
        deadline: float | None = None,
        max_retries: int = 2,
        retry: Retry | None = None,
        client: Client | None = None,
        async_client: AsyncClient | None = None,
        capabilities: Mapping[str, Capabilities] | None = None,
        policy: Policy | None = None,
        stream_options: StreamOptions | None = None,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None,
        include_usage: bool = True,
        system_role: Literal["system", "developer"] = "system",
        tool_call_ids: ToolCallIds | None = None,
    ) -> None:
        # The common options spelled out (not **options) so that type checkers and editors know
        # them; tests/harness/providers/test_providers_options.py keeps them HTTPProvider's.
        super().__init__(
            model=model,
            base_url=base_url,
            api_key=api_key,
            headers=headers,
            timeout=timeout,
            deadline=deadline,
            max_retries=max_retries,
            retry=retry,
            client=client,
            async_client=async_client,
            capabilities=capabilities,
            policy=policy,
            stream_options=stream_options,
        )
        if max_tokens_field is None:
            official = self.base_url == OPENAI_BASE_URL
            max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self.max_tokens_field = max_tokens_field
        self.include_usage = include_usage
        self.system_role = system_role
        self.tool_call_ids = tool_call_ids

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/chat/completions"

    def _format_options(self) -> dict[str, Any]:
        return {"system_role": self.system_role, "tool_call_ids": self.tool_call_ids}

    def _call_fields(self, request: Request, stream: bool) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if stream and self.include_usage:
            fields["stream_options"] = {"include_usage": True}
        if self.max_tokens_field == "max_tokens" and request.max_tokens is not None:
            # the wire writer keeps the older spelling when the extra fields hold it
            fields["max_tokens"] = request.max_tokens
        return fields

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.stop and len(request.stop) > self.max_stop:
            found.append(("$.stop", f"{self.dialect} takes at most {self.max_stop} stop sequences"))
        if request.reasoning is not None and request.reasoning.budget_tokens is not None:
            found.append(
                ("$.reasoning", f"{self.dialect} takes a reasoning effort ('low', 'medium', 'high'), not a budget")
            )
        return found
