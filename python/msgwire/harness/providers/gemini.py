"""Gemini (``POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`` and
``:generateContent``); the API key goes in the ``x-goog-api-key`` header, never in the URL."""

from __future__ import annotations

import re
from typing import Any, ClassVar
from urllib.parse import quote

from ._base import HTTPProvider
from .capabilities import Capabilities
from .request import Problems, Request

__all__ = ["Gemini"]

MAX_STOP = 5


class Gemini(HTTPProvider):
    """The Gemini API. The model travels in the URL (``models/`` may prefix it); settings go in
    ``generationConfig``, the tool choice in ``toolConfig``. ``thinking`` is a budget
    (``thinkingBudget``, Gemini 2.5) or a level (``thinkingLevel``, Gemini 3), with the
    thoughts included in the reply. ``GOOGLE_API_KEY`` wins over ``GEMINI_API_KEY`` when both
    are set, as in Google's SDK."""

    dialect: ClassVar[str] = "gemini"
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

    def _settings(self, request: Request, model: str, stream: bool) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.top_p is not None:
            config["topP"] = request.top_p
        if request.stop:
            config["stopSequences"] = request.stop
        thinking = request.thinking
        if isinstance(thinking, int):
            config["thinkingConfig"] = {"thinkingBudget": thinking, "includeThoughts": True}
        elif thinking is not None:
            config["thinkingConfig"] = {"thinkingLevel": thinking, "includeThoughts": True}
        body: dict[str, Any] = {"generationConfig": config} if config else {}
        choice = request.tool_choice
        if choice is not None:
            modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
            calling: dict[str, Any] = {"mode": modes.get(choice, "ANY")}
            if choice not in modes:
                calling["allowedFunctionNames"] = [choice]
            body["toolConfig"] = {"functionCallingConfig": calling}
        return body

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        if request.stop and len(request.stop) > MAX_STOP:
            return [("$.stop", f"Gemini takes at most {MAX_STOP} stop sequences")]
        return []
