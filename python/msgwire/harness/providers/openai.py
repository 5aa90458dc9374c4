"""OpenAI Chat Completions (``POST {base_url}/chat/completions``), and every server that speaks
it through ``base_url``: Azure OpenAI (``{endpoint}/openai/v1``, ``headers={"api-key": ...}``),
vLLM, Ollama's ``/v1``, llama.cpp's server, Groq, Mistral, DeepSeek, OpenRouter (see
``providers.PRESETS``)."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from msgwire.types import Dialect, Request, ToolCallIds

from ._base import HTTPProvider, Problems
from .capabilities import Capabilities

__all__ = ["OpenAI"]

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAI(HTTPProvider):
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
    env_api_key: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = OPENAI_BASE_URL
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    tool_name_rule: ClassVar[str] = "1-64 letters, digits, '_' or '-'"
    max_stop: ClassVar[int] = 4

    def __init__(
        self,
        *,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None,
        include_usage: bool = True,
        system_role: Literal["system", "developer"] = "system",
        tool_call_ids: ToolCallIds | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
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
