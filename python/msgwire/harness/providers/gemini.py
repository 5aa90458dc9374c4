"""Gemini (``POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`` and
``:generateContent``); the API key goes in the ``x-goog-api-key`` header, never in the URL."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import quote

from msgwire.types import Dialect, Request

from ._base import HTTPProvider, Problems
from .capabilities import Capabilities

__all__ = ["Gemini"]

MAX_STOP = 5


class Gemini(HTTPProvider):
    """The Gemini API. The model travels in the URL (``models/`` may prefix it), never in the
    body; the wire writer puts settings in ``generationConfig``, the tool choice in
    ``toolConfig``, ``reasoning`` in ``thinkingConfig`` (a budget: ``thinkingBudget``, Gemini
    2.5; an effort: ``thinkingLevel``, Gemini 3; ``summary`` asks for the thoughts:
    ``includeThoughts``). ``GOOGLE_API_KEY`` wins over ``GEMINI_API_KEY`` when both are set,
    as in Google's SDK."""

    dialect: ClassVar[Dialect] = "gemini"
    env_api_key: ClassVar[tuple[str, ...]] = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    env_base_url: ClassVar[str | None] = "GEMINI_BASE_URL"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com"
    api_version: ClassVar[str] = "v1beta"
    tool_name: ClassVar[re.Pattern[str] | None] = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
    tool_name_rule: ClassVar[str] = "1-64 letters, digits, '_', '.', ':' or '-'"

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-goog-api-key": api_key}

    def _url(self, model: str, stream: bool) -> str:
        name = quote(model.removeprefix("models/"), safe="-._~")
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{self.base_url}/{self.api_version}/models/{name}:{method}"

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        if request.stop and len(request.stop) > MAX_STOP:
            return [("$.stop", f"Gemini takes at most {MAX_STOP} stop sequences")]
        return []
