"""Ollama's native chat API (``POST {base_url}/api/chat``, NDJSON when streamed). For its
OpenAI-compatible ``/v1``, use ``OpenAI(base_url="http://localhost:11434/v1")``."""

from __future__ import annotations

from typing import Any, ClassVar

from ._base import HTTPProvider
from .capabilities import Capabilities
from .request import Problems, Request

__all__ = ["Ollama"]


class Ollama(HTTPProvider):
    """Ollama's ``/api/chat``. ``base_url`` defaults to ``OLLAMA_HOST`` or
    ``http://127.0.0.1:11434``; no API key is needed (``OLLAMA_API_KEY`` is sent as a bearer
    token when set, for Ollama's cloud). Settings go in ``options`` (``num_predict``,
    ``temperature``, ``top_p``, ``stop``); ``thinking`` is an effort, sent as ``think``."""

    dialect: ClassVar[str] = "ollama"
    env_api_key: ClassVar[tuple[str, ...]] = ("OLLAMA_API_KEY",)
    env_base_url: ClassVar[str | None] = "OLLAMA_HOST"
    default_base_url: ClassVar[str] = "http://127.0.0.1:11434"
    needs_api_key: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if "://" not in self.base_url:  # OLLAMA_HOST is often just host:port
            self.base_url = f"http://{self.base_url}"

    def _url(self, model: str, stream: bool) -> str:
        return f"{self.base_url}/api/chat"

    def _settings(self, request: Request, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "stream": stream}
        options: dict[str, Any] = {}
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.top_p is not None:
            options["top_p"] = request.top_p
        if request.stop:
            options["stop"] = request.stop
        if options:
            body["options"] = options
        if request.thinking is not None:
            body["think"] = request.thinking
        return body

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        found: Problems = []
        if request.tool_choice not in (None, "auto"):
            found.append(("$.tool_choice", "Ollama has no tool choice: leave it unset or 'auto'"))
        if isinstance(request.thinking, int):
            found.append(("$.thinking", "Ollama takes a thinking effort ('low', 'medium', 'high'), not a budget"))
        return found
