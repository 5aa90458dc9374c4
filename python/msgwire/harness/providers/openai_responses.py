"""The OpenAI Responses API (``POST {base_url}/responses``)."""

from __future__ import annotations

import re
from typing import ClassVar

from msgwire.types import Dialect, Request

from ._base import HTTPProvider, Problems
from .capabilities import Capabilities
from .openai import OPENAI_BASE_URL

__all__ = ["OpenAIResponses"]


class OpenAIResponses(HTTPProvider):
    """The Responses API. ``reasoning`` (an effort, and ``summary="auto"`` to get the reasoning
    back as thinking) is sent as ``reasoning``; ``stop`` has no field here."""

    dialect: ClassVar[Dialect] = "openai-responses"
    env_api_key: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = OPENAI_BASE_URL
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    tool_name_rule: ClassVar[str] = "1-64 letters, digits, '_' or '-'"

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/responses"

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.stop:
            found.append(("$.stop", "the Responses API has no stop sequences"))
        if request.reasoning is not None and request.reasoning.budget_tokens is not None:
            found.append(
                ("$.reasoning", "the Responses API takes a reasoning effort ('low', 'medium', 'high'), not a budget")
            )
        return found
