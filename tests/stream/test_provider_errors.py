"""The retry rule (``ProviderError.retryable``), one for an error inside a 200 stream and for an
HTTP error status: each error below is read by the wire layer from its real shape, in its
dialect's frame, and is retryable exactly when the same error as a status would be. An HTTP
error body framed as server-sent events is read for its error object like a JSON body.

Shapes: OpenAI's in-band ``server_error`` and rate limit (the API's error object; the newcomer
review, finding 9, saw ``server_error`` with ``code: 503`` from a compatible server), LiteLLM's
proxy (``litellm/proxy/common_request_processing.py``: ``{"message", "type":
"internal_server_error", "param", "code": "500"}`` and, when the stream fails to start,
``{"message", "code": 500}``), Anthropic's ``event: error`` (its streaming docs), a Responses
``response.failed`` and ``error`` event, Gemini's ``{"error": {"code", "message", "status"}}``;
two recordings of real servers (Groq, OpenRouter) are the non-retryable ones."""

from __future__ import annotations

from pathlib import Path

import pytest

import msgwire
from msgwire import ProviderError
from msgwire.formats import http_error

WIRE = Path(__file__).resolve().parents[1] / "fixtures" / "wire"

CHAT_START = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"It is"},"finish_reason":null}]}\n\n'
)


def chat(error: bytes) -> bytes:
    return CHAT_START + b'data: {"error": ' + error + b"}\n\n"


# (dialect, stream, error_type, retryable)
IN_BAND: dict[str, tuple[str, bytes, str, bool]] = {
    "openai-server-error-503": (
        "openai",
        chat(b'{"message": "upstream overloaded", "type": "server_error", "param": null, "code": 503}'),
        "server_error",
        True,
    ),
    "openai-rate-limit-exceeded-code-only": (
        "openai",
        chat(b'{"message": "Rate limit reached", "code": "rate_limit_exceeded"}'),
        "rate_limit_exceeded",
        True,
    ),
    "openai-insufficient-quota": (
        "openai",
        chat(b'{"message": "You exceeded your quota", "type": "insufficient_quota", "code": "insufficient_quota"}'),
        "insufficient_quota",
        False,
    ),
    "litellm-internal-server-error": (
        "openai",
        chat(b'{"message": "upstream failed", "type": "internal_server_error", "param": null, "code": "500"}'),
        "internal_server_error",
        True,
    ),
    "litellm-code-only-500": (
        "openai",
        chat(b'{"message": "Error processing stream start", "code": 500}'),
        "500",
        True,
    ),
    "code-only-429": ("openai", chat(b'{"message": "slow down", "code": "429"}'), "429", True),
    "code-only-404": ("openai", chat(b'{"message": "no such model", "code": 404}'), "404", False),
    "openrouter-400-recorded": (
        "openai",
        (WIRE / "openai-compat" / "openrouter-midstream-error.sse").read_bytes(),
        "400",
        False,
    ),
    "groq-invalid-request-recorded": (
        "openai",
        (WIRE / "openai-compat" / "groq-event-error.sse").read_bytes(),
        "invalid_request_error",
        False,
    ),
    "anthropic-overloaded": (
        "anthropic",
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
        "overloaded_error",
        True,
    ),
    "anthropic-api-error": (
        "anthropic",
        b'event: error\ndata: {"type": "error", "error": {"type": "api_error", "message": "Internal error"}}\n\n',
        "api_error",
        True,
    ),
    "anthropic-invalid-request": (
        "anthropic",
        b'event: error\ndata: {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}\n\n',
        "invalid_request_error",
        False,
    ),
    "responses-failed-server-error": (
        "openai-responses",
        b'event: response.failed\ndata: {"type": "response.failed", "response": {"id": "r1", "object": "response",'
        b' "status": "failed", "error": {"code": "server_error", "message": "The model failed"}}}\n\n',
        "server_error",
        True,
    ),
    "responses-error-rate-limit": (
        "openai-responses",
        b'event: error\ndata: {"type": "error", "code": "rate_limit_exceeded", "message": "slow down",'
        b' "param": null}\n\n',
        "rate_limit_exceeded",
        True,
    ),
    "gemini-unavailable": (
        "gemini",
        b'data: {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}\r\n\r\n',
        "UNAVAILABLE",
        True,
    ),
    "gemini-invalid-argument": (
        "gemini",
        b'data: {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}\r\n\r\n',
        "INVALID_ARGUMENT",
        False,
    ),
}


@pytest.mark.parametrize("case", IN_BAND)
def test_an_error_inside_a_200_stream_is_retryable_as_the_same_error_as_a_status(case: str) -> None:
    dialect, data, error_type, retryable = IN_BAND[case]
    with pytest.raises(ProviderError) as failure:
        msgwire.assemble(data, dialect)
    error = failure.value
    assert (error.error_type, error.status) == (error_type, None)
    assert error.retryable is retryable
    assert error.partial_message is not None
    assert error.partial_message.stop_reason == "error"


def test_the_partial_message_before_an_in_band_error_is_kept() -> None:
    _, data, _, _ = IN_BAND["openai-server-error-503"]
    with pytest.raises(ProviderError) as failure:
        msgwire.assemble(data, "openai")
    assert failure.value.partial_message is not None
    assert failure.value.partial_message.text == "It is"


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (429, "rate_limit_error", True),
        (429, "insufficient_quota", False),  # OpenAI's spent balance: no wait fixes it
        (503, None, True),
        (400, "server_error", False),  # with a status, the status decides (the SDKs' rule: test_providers_retry_oracle)
        (500, "invalid_request_error", True),
        (400, "invalid_request_error", False),
        (401, None, False),
    ],
)
def test_the_rule_for_an_http_status(status: int, error_type: str | None, retryable: bool) -> None:
    error = ProviderError("x", status=status, error_type=error_type)
    assert error.retryable is retryable


@pytest.mark.parametrize(
    ("error", "error_type", "code", "retryable"),
    [
        (
            b'{"message": "Rate limit", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}',
            "tokens",
            "rate_limit_exceeded",
            True,
        ),
        (b'{"message": "upstream failed", "type": null, "param": null, "code": "500"}', "500", "500", True),
        (b'{"message": "upstream failed", "type": "None", "code": 502}', "502", "502", True),
        (
            b'{"message": "no money", "type": "tokens", "code": "insufficient_quota"}',
            "tokens",
            "insufficient_quota",
            False,
        ),
        (b'{"message": "bad", "type": "invalid_request_error", "code": null}', "invalid_request_error", None, False),
    ],
)
def test_an_in_band_code_beside_a_type_reaches_the_rule(
    error: bytes, error_type: str, code: str | None, retryable: bool
) -> None:
    """The error object's code travels beside its type (JSON null and LiteLLM's "None" are no
    value), and either one decides the retry rule."""
    with pytest.raises(ProviderError) as failure:
        msgwire.assemble(chat(error), "openai")
    assert (failure.value.error_type, failure.value.code, failure.value.retryable) == (error_type, code, retryable)


# --- an HTTP error body framed as server-sent events -----------------------------------------------

SSE_ERROR = b'data: {"error": {"message": "upstream failed", "type": "internal_server_error", "code": "500"}}\n\n'


@pytest.mark.parametrize("dialect", ["openai", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize(
    "body",
    [SSE_ERROR, SSE_ERROR.rstrip(), b": keep-alive\n\n" + SSE_ERROR],
    ids=["terminated", "unterminated", "after-a-comment"],
)
def test_an_sse_framed_error_body_is_read_for_its_error_object(dialect: str, body: bytes) -> None:
    error = http_error(500, {"x-request-id": "req_1"}, body, dialect)  # type: ignore[arg-type]
    assert (error.error_type, error.provider_message) == ("internal_server_error", "upstream failed")
    assert (error.status, error.request_id, error.retryable) == (500, "req_1", True)


def test_an_sse_framed_body_in_the_dialects_own_error_frame_is_read() -> None:
    body = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    error = http_error(529, {}, body, "anthropic")
    assert (error.error_type, error.provider_message) == ("overloaded_error", "Overloaded")


def test_a_body_without_an_error_object_still_shows_its_start() -> None:
    error = http_error(502, {}, b"data: not json\n\n<html>Bad gateway</html>", "openai")
    assert error.error_type == "http_502"
    assert error.provider_message is not None
    assert error.provider_message.startswith("data: not json")
