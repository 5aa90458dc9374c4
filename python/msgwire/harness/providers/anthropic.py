"""Anthropic Messages (``POST {base_url}/v1/messages``)."""

from __future__ import annotations

import re
from typing import ClassVar

from msgwire.types import Dialect, Request

from ._base import HTTPProvider, Problems, forces_a_tool, thinks
from .capabilities import Capabilities

__all__ = ["Anthropic"]

ANTHROPIC_VERSION = "2023-06-01"
MIN_THINKING_BUDGET = 1024


class Anthropic(HTTPProvider):
    """The Messages API (``x-api-key`` and ``anthropic-version`` headers).

    ``reasoning``: an effort is sent as adaptive thinking (``{"type": "adaptive"}`` with
    ``output_config.effort``), a budget as manual thinking (``{"type": "enabled",
    "budget_tokens": N}``), both by the wire writer. ``temperature`` and ``top_p`` are sent when given: the SDK (1.0 on)
    has dropped them from its types, and models after Claude Opus 4.6 refuse them
    (``capabilities``), but earlier ones still take them.

    Its own rules: ``max_tokens`` is required, ``temperature`` is within [0, 1], a thinking
    budget is at least 1024 tokens and below ``max_tokens``, and thinking goes with neither
    ``temperature``, a ``top_p`` below 0.95, nor a forced tool."""

    dialect: ClassVar[Dialect] = "anthropic"
    env_api_key: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    env_base_url: ClassVar[str | None] = "ANTHROPIC_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_-]{1,128}")
    tool_name_rule: ClassVar[str] = "1-128 letters, digits, '_' or '-'"

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/v1/messages"

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.max_tokens is None:
            found.append(("$.max_tokens", "Anthropic needs max_tokens"))
        if request.temperature is not None and not 0 <= request.temperature <= 1:
            found.append(("$.temperature", f"Anthropic's temperature is within [0, 1], got {request.temperature}"))
        if not thinks(request):
            return found
        budget = request.reasoning.budget_tokens if request.reasoning is not None else None
        if budget is not None and budget < MIN_THINKING_BUDGET:
            found.append(
                ("$.reasoning.budget_tokens", f"Anthropic's thinking budget is at least {MIN_THINKING_BUDGET} tokens")
            )
        if budget is not None and request.max_tokens is not None and budget >= request.max_tokens:
            found.append(("$.reasoning.budget_tokens", "Anthropic's thinking budget must be below max_tokens"))
        if request.temperature is not None:
            found.append(("$.temperature", "Anthropic does not take temperature with thinking"))
        if request.top_p is not None and request.top_p < 0.95:
            found.append(("$.top_p", "Anthropic takes top_p of 0.95 or more with thinking"))
        if forces_a_tool(request):
            found.append(("$.tool_choice", "Anthropic forces no tool with thinking: tool_choice 'auto' or 'none'"))
        return found
