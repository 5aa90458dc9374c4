"""openai-agents' ``Model`` on msgwire's providers: ``MsgwireModel(provider)`` sends each model
call of an openai-agents run through a msgwire provider (``OpenAI`` and its presets for
compatible servers, ``OpenAIResponses``, ``Anthropic``, ``Gemini``, ``Ollama``), its reply read by
msgwire's Rust stream decoder, and gives openai-agents what its own models give::

    from agents import Agent, RunConfig, Runner
    from msgwire.harness.providers import OpenAI
    from msgwire.interop.openai_agents import MsgwireModel, MsgwireModelProvider

    agent = Agent(name="a", model=MsgwireModel(OpenAI(model="gpt-4o")))   # was: model="gpt-4o"
    Runner.run(agent, "Hi", run_config=RunConfig(model_provider=MsgwireModelProvider(OpenAI())))

What each call gives:

- ``stream_response``: the Responses stream events openai-agents' own models yield, in their
  order, ending with ``response.completed`` whose response holds the output items and the usage:
  for a Responses provider, the server's own events, read as the openai SDK reads them
  (``openai_agents_passthrough``); for every other dialect, the events openai-agents' Chat
  Completions model makes of its reply (``openai_agents_events``).
- ``get_response``: the reply not streamed, as a ``ModelResponse`` with the same items.
- the request (``openai_agents_request``): the instructions, the input items read by msgwire's
  Responses reader (reasoning items sent back: Responses reasoning by its id and encrypted
  content, Anthropic's signed and redacted thinking and Gemini's signatures as that provider's
  own), function tools, handoffs, the output schema (``json_schema`` named ``final_output``) and
  the model settings; what the provider cannot be sent is refused with ``UserError``.

Failures, as openai-agents expects them: a Responses stream that ends ``response.incomplete`` or
``response.failed`` (or with an ``error`` event) yields that event, then raises openai-agents'
``ModelBehaviorError``; a reply cut by its token limit before anything was said raises it too;
an HTTP error or an error inside the stream raises ``msgwire.ProviderError`` (``status``,
``retryable``, ``request_id``), the network ``msgwire.TransportError``. One retry layer:
msgwire's provider retries before the reply's first byte (``provider.retry``: the SDKs' status
rules), and ``stream_response`` sends the call again after a failure only while nothing but
``response.created`` went out; when openai-agents' runner retries itself (its
``ModelSettings.retry``) and says so, the call is sent once. ``get_retry_advice`` tells the
runner what a msgwire error means. A call without an id gets a unique one. Cancelling the run
closes the HTTP response at once. ``previous_response_id``, ``conversation_id`` and ``prompt``
(server-side state of OpenAI's Responses API) are refused: msgwire sends the whole history.

``close()`` closes the provider's own HTTP client on the running event loop (a client you gave
the provider stays open); ``MsgwireModelProvider.aclose()`` the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ProviderError, StreamError, TransportError, TruncatedStreamError
from ..formats import request_id
from ..harness.providers import DeadlineExceeded, HTTPProvider, Retry
from ..types import AssistantMessage, Request
from .openai_agents_events import LENGTH_WITHOUT_OUTPUT, ChatEvents, base_response, output_items, response_usage
from .openai_agents_hints import ChatHints
from .openai_agents_passthrough import Events, failure_of, response_of, response_terminal_failure_error
from .openai_agents_request import request_of

try:
    from agents.exceptions import ModelBehaviorError, UserError
    from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
    from agents.models.interface import Model, ModelProvider, ModelTracing
    from agents.tracing import generation_span
    from agents.usage import Usage as AgentsUsage
    from openai.types.responses import ResponseUsage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
except ImportError as exc:  # pragma: no cover - the package's import says which extra
    from ..errors import MissingExtraError

    raise MissingExtraError("msgwire.interop.openai_agents (MsgwireModel)", "openai-agents", exc) from None

try:  # the runner's own retries say to the model "send once" (openai-agents 0.24)
    from agents.models._retry_runtime import should_disable_provider_managed_retries as _runner_retries
except ImportError:  # pragma: no cover - older releases have no runner retries

    def _runner_retries() -> bool:
        return False


try:
    from agents.retry import ModelRetryAdvice, ModelRetryAdviceRequest, ModelRetryNormalizedError
except ImportError:  # pragma: no cover - older releases: no retry advice
    ModelRetryAdvice = ModelRetryAdviceRequest = ModelRetryNormalizedError = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.model_settings import ModelSettings
    from openai.types.responses.response_prompt_param import ResponsePromptParam

__all__ = ["MsgwireModel", "MsgwireModelProvider"]

_ONCE = Retry(max_retries=0)
_STARTED = "_msgwire_response_started"  # set on an error raised after events other than response.created


def _worth_another_try(failure: StreamError) -> bool:
    """A failure the same request may not meet again: the network, a cut stream, a provider
    error its retry rule calls retryable (overloaded, rate limited, 5xx)."""
    if isinstance(failure, ProviderError):
        return failure.retryable
    return isinstance(failure, (TransportError, TruncatedStreamError))


def _agents_usage(usage: ResponseUsage | None) -> AgentsUsage:
    """A reply's usage as openai-agents counts it: one request."""
    if usage is None:
        return AgentsUsage(requests=1)  # the request was made, and counts, even without usage
    return AgentsUsage(
        requests=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        input_tokens_details=usage.input_tokens_details
        or InputTokensDetails.model_validate({"cached_tokens": 0, "cache_write_tokens": 0}),
        output_tokens_details=usage.output_tokens_details or OutputTokensDetails(reasoning_tokens=0),
    )


class _Attempts:
    """How far a streamed call went across its attempts, and whether to send it again:
    ``opened`` (the reply's headers came: a failure after them is this model's to retry, one
    before them was the provider's, which retried it), ``created`` (``response.created`` went out:
    once a call), ``started`` (anything else went out: the call is not sent again). ``retry``:
    the provider's ``Retry`` for each attempt (``None``: its own; one attempt when openai-agents'
    runner retries itself, and then no attempt here either)."""

    __slots__ = ("attempt", "created", "opened", "policy", "retry", "started")

    def __init__(self, retry: Retry | None, policy: Retry) -> None:
        self.retry, self.policy = retry, retry or policy
        self.opened = self.created = self.started = False
        self.attempt = 0

    def passes(self, kind: str) -> bool:
        """Whether a server event of type ``kind`` goes out (a created event, once)."""
        if kind == "response.created":
            if self.created:
                return False
            self.created = True
        elif kind != "response.in_progress":
            self.started = True
        return True

    def after(self, failure: StreamError) -> float:
        """The wait before sending the call again after ``failure``; raises it when the call is
        not sent again."""
        if self.started:
            setattr(failure, _STARTED, True)
            raise failure
        if self.retry is _ONCE or not self.opened or not _worth_another_try(failure):
            raise failure
        wait = self.policy.delay(self.attempt)
        if wait is None:
            raise failure
        self.attempt += 1
        return wait


class _RequestId:
    """A tap that keeps the reply's request id and, when asked, its body and what it says
    that msgwire's message does not (``ChatHints``)."""

    def __init__(self, keep_body: bool, hints: ChatHints | None = None) -> None:
        self.id: str | None = None
        self.body = bytearray() if keep_body else None
        self.hints = hints

    def __call__(self, headers: Mapping[str, str], piece: bytes) -> None:
        if self.id is None:
            self.id = request_id(headers)
        if self.body is not None:
            self.body += piece
        if self.hints is not None:
            self.hints.tap(headers, piece)


class MsgwireModel(Model):
    """An openai-agents ``Model`` whose calls go through ``provider`` (a msgwire provider);
    ``model_name`` is the model its requests name (the provider's default model when ``None``).
    See the module docs."""

    def __init__(self, provider: HTTPProvider, *, model_name: str | None = None) -> None:
        if not isinstance(provider, HTTPProvider):
            raise TypeError(
                f"provider must be a msgwire provider (msgwire.harness.providers: OpenAI(...), "
                f"Anthropic(...), ...), got {type(provider).__name__}"
            )
        if model_name is not None and (not isinstance(model_name, str) or not model_name):
            raise ValueError(f"model_name must be a non-empty string or None, got {model_name!r}")
        self.provider = provider
        self.model_name = model_name
        self.model = model_name or provider.model or ""

    def __repr__(self) -> str:
        return f"MsgwireModel({self.provider!r}, model_name={self.model_name!r})"

    # --- the request --------------------------------------------------------------------------

    def _request(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 - openai-agents' name
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff[Any, Any]],
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> Request:
        given = [
            name
            for name, value in (
                ("previous_response_id", previous_response_id),
                ("conversation_id", conversation_id),
                ("prompt", prompt),
            )
            if value is not None
        ]
        if given:
            raise UserError(
                f"MsgwireModel does not send {', '.join(given)} (server-side state of OpenAI's Responses "
                "API): msgwire sends the whole history with every call"
            )
        return request_of(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            model=self.model_name,
            dialect=self.provider.dialect,
        )

    def _retry(self) -> Retry | None:
        """``None``: the provider's own; one attempt when openai-agents' runner retries itself."""
        return _ONCE if _runner_retries() else None

    # --- not streamed -------------------------------------------------------------------------

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 - openai-agents' name
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff[Any, Any]],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: ResponsePromptParam | None = None,
    ) -> ModelResponse:
        request = self._request(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            previous_response_id,
            conversation_id,
            prompt,
        )
        responses = self.provider.dialect == "openai-responses"
        hints = ChatHints() if self.provider.dialect == "openai" else None
        tap = _RequestId(keep_body=responses, hints=hints)
        with generation_span(model=self.model, disabled=tracing.is_disabled()) as span:
            try:
                message = await self.provider.acomplete(request, retry=self._retry(), tap=tap)
            except ProviderError as error:
                failed = self._failed_response(tap)
                if failed is not None:
                    raise failed from error
                raise
            if responses:
                assert tap.body is not None
                response = response_of(bytes(tap.body), tap.id)
                if response.status in ("failed", "incomplete"):
                    raise response_terminal_failure_error(f"response.{response.status}", response)
                output, response_id, usage = list(response.output), response.id, _agents_usage(response.usage)
            else:
                output, response_id = self._chat_output(message, hints), None
                usage = _agents_usage(response_usage(message.usage))
            span.span_data.usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        return ModelResponse(output=output, usage=usage, response_id=response_id, request_id=tap.id)

    def _failed_response(self, tap: _RequestId) -> ModelBehaviorError | None:
        """A Responses reply whose body is a failed response: openai-agents' own error for it."""
        if tap.body is None or not tap.body:
            return None
        try:
            response = response_of(bytes(tap.body), tap.id)
        except Exception:
            return None
        status = getattr(response, "status", None)
        if status in ("failed", "incomplete"):
            return response_terminal_failure_error(f"response.{status}", response)
        return None

    def _chat_output(self, message: AssistantMessage, hints: ChatHints | None) -> list[Any]:
        has_output = any(b.type in ("text", "tool_call") for b in message.content)
        if message.stop_reason == "length" and not has_output:
            dialect = "Chat Completions" if self.provider.dialect == "openai" else self.provider.dialect
            raise ModelBehaviorError(LENGTH_WITHOUT_OUTPUT.format(dialect=dialect).replace(" stream ", " response "))
        return list(output_items(message, self.model, hints))

    # --- streamed -----------------------------------------------------------------------------

    def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 - openai-agents' name
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff[Any, Any]],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: ResponsePromptParam | None = None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        request = self._request(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            previous_response_id,
            conversation_id,
            prompt,
        )
        attempts = _Attempts(self._retry(), self.provider.retry)
        if self.provider.dialect == "openai-responses":
            return self._passthrough(request, attempts, tracing)
        return self._chat(request, model_settings, attempts, tracing)

    async def _chat(
        self, request: Request, settings: ModelSettings, attempts: _Attempts, tracing: ModelTracing
    ) -> AsyncIterator[TResponseStreamEvent]:
        """A call of a dialect other than Responses (``openai_agents_events``), sent again as
        ``attempts`` says."""
        with generation_span(model=self.model, disabled=tracing.is_disabled()):
            while True:
                hints = ChatHints() if self.provider.dialect == "openai" else None
                base = base_response(self.model, settings, bool(request.tools))
                events = ChatEvents(base, self.model, self.provider.dialect, hints)
                try:
                    attempts.opened = False
                    stream = await self.provider.astream(
                        request, retry=attempts.retry, tap=hints.tap if hints is not None else None
                    )
                    attempts.opened = True
                    try:
                        feed = events.feed
                        async for event in stream:
                            if not attempts.created:  # on the reply's first event, as openai-agents does
                                attempts.created = True
                                yield events.start()
                            out = feed(event)
                            if out:
                                attempts.started = True
                                for each in out:
                                    yield each
                        message = stream.message()
                    finally:
                        await stream.aclose()
                    if not attempts.created:
                        attempts.created = True
                        yield events.start()
                    for each in events.finish(message):
                        yield each
                    return
                except StreamError as failure:
                    wait = attempts.after(failure)
                await asyncio.sleep(wait)

    async def _passthrough(
        self, request: Request, attempts: _Attempts, tracing: ModelTracing
    ) -> AsyncIterator[TResponseStreamEvent]:
        """A Responses call: the server's events as they come (``openai_agents_passthrough``),
        a terminal failure raised as openai-agents raises it, after its event."""
        with generation_span(model=self.model, disabled=tracing.is_disabled()):
            while True:
                events = Events()
                try:
                    attempts.opened = False
                    stream = await self.provider.astream(request, retry=attempts.retry, tap=events.tap)
                    attempts.opened = True
                    failure: StreamError | None = None
                    try:
                        try:
                            async for _ in stream:
                                for each in events.take():
                                    if attempts.passes(each.type):
                                        yield each
                                    terminal = failure_of(each)
                                    if terminal is not None:
                                        raise terminal  # after its event, as openai-agents' own model
                        except StreamError as error:
                            failure = error
                        for each in events.take():  # what the last piece held, the failed event included
                            if attempts.passes(each.type):
                                yield each
                            terminal = failure_of(each)
                            if terminal is not None:
                                raise terminal from failure
                        if failure is not None:
                            raise failure
                    finally:
                        await stream.aclose()
                    return
                except StreamError as failure:
                    wait = attempts.after(failure)
                await asyncio.sleep(wait)

    # --- retries ------------------------------------------------------------------------------

    if ModelRetryAdvice is not None:

        def get_retry_advice(self, request: ModelRetryAdviceRequest) -> ModelRetryAdvice | None:
            """What a msgwire error means for openai-agents' runner: worth another try (the
            provider's retry rule: the network, a cut stream, 408/409/429/5xx and the providers'
            words for overload), its status, request id, whether it was the network or the
            deadline, and whether the reply had begun."""
            error = request.error
            if not isinstance(error, StreamError):
                return None
            network = isinstance(error, (TransportError, TruncatedStreamError))
            timeout = isinstance(error.__cause__, (DeadlineExceeded, TimeoutError))
            status = error.status if isinstance(error, ProviderError) else None
            normalized = ModelRetryNormalizedError(
                status_code=status,
                error_code=error.error_type,
                message=str(error),
                request_id=getattr(error, "request_id", None),
                is_network_error=network,
                is_timeout=timeout,
            )
            return ModelRetryAdvice(
                suggested=_worth_another_try(error),
                reason=str(error),
                normalized=normalized,
                response_started=bool(getattr(error, _STARTED, False)),
            )

    # --- lifetime -----------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the provider's own HTTP client on this event loop (one given to it stays open;
        a later call opens another)."""
        await self.provider.aclose()


class MsgwireModelProvider(ModelProvider):
    """An openai-agents ``ModelProvider`` of ``MsgwireModel`` on one msgwire provider:
    ``get_model(name)`` is the model ``name`` (the provider's default model when ``None``)::

        Runner.run(agent, "Hi", run_config=RunConfig(model_provider=MsgwireModelProvider(OpenAI())))
    """

    def __init__(self, provider: HTTPProvider) -> None:
        if not isinstance(provider, HTTPProvider):
            raise TypeError(f"provider must be a msgwire provider, got {type(provider).__name__}")
        self.provider = provider
        self._models: dict[str | None, MsgwireModel] = {}

    def get_model(self, model_name: str | None) -> Model:
        model = self._models.get(model_name)
        if model is None:
            model = self._models[model_name] = MsgwireModel(self.provider, model_name=model_name or None)
        return model

    async def aclose(self) -> None:
        await self.provider.aclose()
