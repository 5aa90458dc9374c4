"""A Responses reply as openai-agents' own Responses model gives it: the server's events are
already the events openai-agents wants, so ``MsgwireModel`` passes them on, each read from the
reply's bytes as the openai SDK reads it (so that they equal what ``OpenAIResponsesModel``
yields, every event the server sent, in its order), while msgwire's decoder reads the same bytes
(its errors, its message). A reply not streamed is read the same way, from its JSON.

``Events`` is fed each piece of the body as the provider reads it (its ``tap``), and gives the
events those pieces completed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..sse import SSEParser

try:
    from agents.exceptions import ModelBehaviorError
    from openai._models import construct_type
    from openai.types.responses import Response, ResponseStreamEvent
except ImportError as exc:  # pragma: no cover - the package's import says which extra
    from ..errors import MissingExtraError

    raise MissingExtraError("msgwire.interop.openai_agents (MsgwireModel)", "openai-agents", exc) from None


def _construct(*, type_: Any, value: object) -> Any:
    """``value`` as ``type_``, read as the openai SDK reads a reply: ``construct_type``, lenient
    (an event type it does not know is kept), the objects ``OpenAIResponsesModel`` yields."""
    return construct_type(type_=type_, value=value)


try:  # openai-agents' own errors of a Responses stream that ended failed (0.24)
    from agents.models._response_terminal import (
        response_error_event_failure_error,
        response_terminal_failure_error,
    )
except ImportError:  # pragma: no cover - older releases: the same message, without its draining mark

    def response_terminal_failure_error(event_type: str, response: Response | None) -> ModelBehaviorError:
        details = [] if response is None else [f"status={response.status}"]
        if response is not None and response.error is not None:
            details.append(f"error={response.error}")
        if response is not None and response.incomplete_details is not None:
            details.append(f"incomplete_details={response.incomplete_details}")
        said = f" {'; '.join(details)}." if details else ""
        return ModelBehaviorError(f"Responses stream ended with terminal event `{event_type}`.{said}")

    def response_error_event_failure_error(event_type: str, event: Any) -> ModelBehaviorError:
        details = [f"{k}={getattr(event, k)}" for k in ("code", "message", "param") if getattr(event, k, None)]
        said = f" {'; '.join(details)}." if details else ""
        return ModelBehaviorError(f"Responses stream ended with terminal event `{event_type}`.{said}")


try:
    from agents.usage import _mark_request_completed_without_usage as _mark_without_usage
except ImportError:  # pragma: no cover

    def _mark_without_usage(response: Any) -> None:
        return None


__all__ = [
    "FAILED",
    "TERMINAL",
    "Events",
    "failure_of",
    "response_of",
    "response_terminal_failure_error",
]

TERMINAL = frozenset({"response.completed", "response.failed", "response.incomplete", "error", "response.error"})
FAILED = frozenset({"response.failed", "response.incomplete"})
_decode = msgspec.json.Decoder().decode


def failure_of(event: Any) -> ModelBehaviorError | None:
    """openai-agents' error for a terminal event that is not ``response.completed``."""
    kind = getattr(event, "type", None)
    if kind in FAILED:
        response = getattr(event, "response", None)
        return response_terminal_failure_error(kind, response if isinstance(response, Response) else None)
    if kind in ("error", "response.error"):
        return response_error_event_failure_error(kind, event)
    return None


def _attach(response: Any, request_id: str | None) -> None:
    if request_id is not None and response is not None:
        try:
            response._request_id = request_id
        except Exception:  # an object refusing the attribute: a debugging field only
            return


class Events:
    """The Responses events of a reply's bytes, as the openai SDK reads them."""

    def __init__(self) -> None:
        self._sse = SSEParser()
        self.pending: list[ResponseStreamEvent] = []
        self.request_id: str | None = None
        self.done = False  # `[DONE]` was read: what follows is not read (as the SDK)

    def tap(self, headers: Mapping[str, str], piece: bytes) -> None:
        if self.request_id is None:
            self.request_id = headers.get("x-request-id")
        if self.done:
            return
        for sse in self._sse.feed(piece):
            if sse.data.startswith("[DONE]"):
                self.done = True
                return
            data = _decode(sse.data)
            if isinstance(data, dict) and data.get("error"):
                continue  # the SDK raises it; msgwire's decoder raises it as a ProviderError
            event = _construct(type_=ResponseStreamEvent, value=data)
            kind = getattr(event, "type", None)
            if kind in TERMINAL:
                response = getattr(event, "response", None)
                _attach(response, self.request_id)
                if kind == "response.completed" and isinstance(response, Response) and response.usage is None:
                    _mark_without_usage(response)
            self.pending.append(event)

    def take(self) -> list[ResponseStreamEvent]:
        taken, self.pending = self.pending, []
        return taken


def response_of(body: bytes, request_id: str | None) -> Response:
    """A reply not streamed, as the openai SDK reads it."""
    response: Response = _construct(type_=Response, value=_decode(body))
    _attach(response, request_id)
    if response.usage is None:
        _mark_without_usage(response)
    return response
