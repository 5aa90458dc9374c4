"""The OpenAI Responses API (``POST {base_url}/responses``)."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ._base import HTTPProvider
from .capabilities import Capabilities
from .openai import OPENAI_BASE_URL
from .request import Problems, Request

__all__ = ["OpenAIResponses"]


class OpenAIResponses(HTTPProvider):
    """The Responses API. ``thinking`` (an effort) is sent as ``reasoning`` with an automatic
    summary, so the reasoning shows up as thinking; ``stop`` has no field here."""

    dialect: ClassVar[str] = "openai-responses"
    env_api_key: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = OPENAI_BASE_URL
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    tool_name_rule: ClassVar[str] = "1-64 letters, digits, '_' or '-'"

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/responses"

    def _settings(self, request: Request, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model}
        if stream:
            body["stream"] = True
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        choice = request.tool_choice
        if choice is not None:
            body["tool_choice"] = (
                choice if choice in ("auto", "none", "required") else {"type": "function", "name": choice}
            )
        if request.thinking is not None:
            body["reasoning"] = {"effort": request.thinking, "summary": "auto"}
        return body

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.stop:
            found.append(("$.stop", "the Responses API has no stop sequences"))
        if isinstance(request.thinking, int):
            found.append(
                ("$.thinking", "the Responses API takes a reasoning effort ('low', 'medium', 'high'), not a budget")
            )
        return found
