"""Ollama's native chat API (``POST {base_url}/api/chat``, NDJSON when streamed). For its
OpenAI-compatible ``/v1``, use ``OpenAI(base_url="http://localhost:11434/v1")``."""

from __future__ import annotations

from typing import ClassVar

from msgwire.types import Dialect, Request

from ._base import HTTPProvider, Problems
from .capabilities import Capabilities

__all__ = ["Ollama"]


class Ollama(HTTPProvider):
    """Ollama's ``/api/chat``. ``base_url`` defaults to ``OLLAMA_HOST`` or
    ``http://127.0.0.1:11434``; no API key is needed (``OLLAMA_API_KEY`` is sent as a bearer
    token when set, for Ollama's cloud). The wire writer puts settings in ``options``
    (``num_predict``, ``temperature``, ``top_p``, ``stop``) and ``reasoning`` in ``think`` (an
    effort, or on / off); ``stream`` is always written, since Ollama streams unless told not to."""

    dialect: ClassVar[Dialect] = "ollama"
    env_api_key: ClassVar[tuple[str, ...]] = ("OLLAMA_API_KEY",)
    env_base_url: ClassVar[str | None] = "OLLAMA_HOST"
    default_base_url: ClassVar[str] = "http://127.0.0.1:11434"
    needs_api_key: ClassVar[bool] = False

    def _normal_url(self, base_url: str) -> str:
        return base_url if "://" in base_url else f"http://{base_url}"  # OLLAMA_HOST is often host:port

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/api/chat"

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.tool_choice not in (None, "auto"):
            found.append(("$.tool_choice", "Ollama has no tool choice: leave it unset or 'auto'"))
        if request.reasoning is not None and request.reasoning.budget_tokens is not None:
            found.append(("$.reasoning", "Ollama takes a thinking effort ('low', 'medium', 'high'), not a budget"))
        return found
