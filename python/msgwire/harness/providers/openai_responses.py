"""The OpenAI Responses API (``POST {base_url}/responses``)."""

from __future__ import annotations

from typing import ClassVar

from msgwire.types import Dialect, Request

from ._base import HTTPProvider, Problems
from .capabilities import Capabilities
from .openai import OpenAIPlatform

__all__ = ["OpenAIResponses"]


class OpenAIResponses(OpenAIPlatform, HTTPProvider):
    """The Responses API. ``reasoning`` (an effort, and ``summary="auto"`` to get the reasoning
    back as thinking) is sent as ``reasoning``; ``stop`` has no field here."""

    dialect: ClassVar[Dialect] = "openai-responses"

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
