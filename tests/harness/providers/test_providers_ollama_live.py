"""A real model, when a local Ollama is running (never required: skipped otherwise). The model
is the smallest one it has pulled; nothing is downloaded."""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest

from msgwire import user
from msgwire.harness.providers import Ollama, OpenAI, Request

HOST = os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")
BASE_URL = HOST if "://" in HOST else f"http://{HOST}"


def _smallest_model() -> str | None:
    try:
        tags: dict[str, Any] = httpx.get(f"{BASE_URL}/api/tags", timeout=1.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    models = sorted(tags.get("models", []), key=lambda m: m.get("size", 0))
    return models[0]["name"] if models else None


MODEL = _smallest_model()
pytestmark = pytest.mark.skipif(MODEL is None, reason="no local Ollama with a pulled model")
REQUEST = Request(messages=[user("Say hello in one word.")], max_tokens=64, temperature=0)


def test_a_real_model_streams_through_the_native_api() -> None:
    with Ollama(base_url=BASE_URL, model=MODEL) as model, model.stream(REQUEST) as stream:
        message = stream.until_done()
    assert message.stop_reason in ("end_turn", "length")
    assert message.text or message.thinking
    assert message.usage is not None
    assert message.usage.output_tokens > 0


def test_a_real_model_answers_through_the_openai_compatible_api() -> None:
    with OpenAI(base_url=f"{BASE_URL}/v1", api_key="ollama", model=MODEL) as model:
        message = model.complete(REQUEST)
    assert message.stop_reason in ("end_turn", "length")
    assert message.text or message.thinking
