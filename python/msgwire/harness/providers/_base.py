"""What every provider shares: validation, the request body, and the calls (``stream``,
``astream``, ``complete``, ``acomplete``). A dialect's class says only what differs: its URL,
its auth headers, the body fields of a call that no setting carries, and its own rules.

The body is the wire layer's: ``msgwire.formats.convert_request`` writes the whole
``msgwire.Request`` (conversation, tools and every setting, in the dialect's own fields, in
Rust) and reports what the dialect cannot carry. A provider adds only what belongs to the call:
the model when the request names none, the stream flag, and a few fields of its server
(``extra`` of its dialect: OpenAI's ``stream_options``)."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping
from typing import Any, ClassVar, TypedDict
from urllib.parse import urlsplit

import msgspec

from msgwire.errors import DecodeError, ProviderError, StreamError, TransportError, ValidationError
from msgwire.formats import RequestCache, convert_request, from_response
from msgwire.stream import AsyncStream, Stream, StreamOptions
from msgwire.types import (
    AssistantMessage,
    Dialect,
    Event,
    Extra,
    ImageBlock,
    LossReport,
    NamedTool,
    PathSource,
    Policy,
    Request,
    ToolResultMessage,
    UserMessage,
)
from msgwire.validate import validate as wire_validate

from ._http import AsyncBody, AsyncClient, Body, Client, Deadline, Retry, Tap, Timeout, Transport, request_id
from .capabilities import Capabilities, lookup

__all__ = [
    "AsyncProviderStream",
    "AsyncStreamManager",
    "HTTPCall",
    "HTTPProvider",
    "Problems",
    "ProviderOptions",
    "ProviderStream",
]

Problems = list[tuple[str, str]]
"""``(JSON path, message)`` pairs, as ``msgwire.ValidationError.errors`` lists them."""

# The top-level fields the conversation is written in (any dialect): `extra` cannot replace them.
_CONVERSATION_FIELDS = frozenset(
    {"messages", "system", "tools", "contents", "systemInstruction", "input", "instructions"}
)
_NO_MODEL = "no model: name one in the request or give the provider a default model"


_VERSION = re.compile(r"v[0-9][0-9a-z.]*")  # a path segment naming an API version: v1, v1beta, v2.1

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})


class HTTPCall(msgspec.Struct, frozen=True, kw_only=True):
    """What a provider sends for one request: ``POST url`` with ``headers`` (the provider's,
    its API key included; the repr masks keys) and the JSON ``body``
    (``provider.prepare(request)``, to see it without sending it); ``report`` lists what the
    dialect could not carry as it was (``msgwire.formats.convert_request``'s ``LossReport``)."""

    url: str
    headers: dict[str, str]
    body: bytes
    report: LossReport = msgspec.field(default_factory=LossReport)

    def json(self) -> Any:
        return msgspec.json.decode(self.body)

    def __repr__(self) -> str:
        shown = {k: ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        return f"HTTPCall(url={self.url!r}, headers={shown!r}, body=<{len(self.body)} bytes>)"


class _ProviderReply:
    """What a provider's stream adds to msgwire's, sync or async: the request id (also set on a
    ``ProviderError`` the stream raises), the report of what the request could not carry, and
    whether the stream ended (read to its end, or failed) or was aborted before."""

    interrupted = False
    """The stream was stopped from another thread (``ProviderStream.interrupt``)."""

    def __init__(
        self,
        source: Any,
        dialect: Dialect,
        *,
        request_id: str | None = None,
        report: LossReport | None = None,
        **options: Any,
    ) -> None:
        super().__init__(source, dialect, **options)  # type: ignore[call-arg]  # Stream's, or AsyncStream's
        self.request_id = request_id
        self.report = report if report is not None else LossReport()
        self._ended = self._aborted = False

    def _stopped(self, reason: BaseException) -> None:
        """The iteration stopped with ``reason``: its end or a failure ends the stream; anything
        else (``KeyboardInterrupt``, a cancelled task) aborts it."""
        if isinstance(reason, (StopIteration, StopAsyncIteration, StreamError)):
            self._ended = True
            if isinstance(reason, ProviderError):
                reason.request_id = reason.request_id or self.request_id
        else:
            self._aborted = True

    def _closing(self) -> None:
        self._aborted = self._aborted or not self._ended

    def _marked(self, message: AssistantMessage) -> AssistantMessage:
        stop = message.stop_reason
        if (self._aborted and stop is None) or (self.interrupted and stop in (None, "error")):
            return msgspec.structs.replace(message, stop_reason="aborted")
        return message


class ProviderStream(_ProviderReply, Stream):
    """A ``msgwire.Stream`` over a provider's HTTP response. ``request_id`` is the provider's
    id of the request (also set on a ``ProviderError`` the stream raises), ``report`` what the
    request could not carry (``HTTPCall.report``); closing the stream
    (``close()``, leaving ``with``) closes the HTTP response at once. A stream closed (or
    interrupted: ``KeyboardInterrupt``, ``interrupt()``) before its end gives a ``message()``
    with ``stop_reason="aborted"``; one that failed, ``stop_reason="error"``."""

    def interrupt(self) -> None:
        """Stop the stream from another thread, while one reads it (``close()`` belongs to the
        reading thread): the HTTP connection is shut down at once (the server sees the client
        leave), the read in progress returns, and the reader's iteration raises
        ``msgwire.TransportError`` caused by ``Interrupted``, its partial message
        ``stop_reason="aborted"``. The reader still closes the stream. (An HTTP/2 connection
        carries other requests: it is left alone, and the read ends at its timeout.)"""
        self.interrupted = True
        interrupt = getattr(self._source, "interrupt", None)
        if callable(interrupt):  # a Body (a stream over a source of the caller's: nothing to end)
            interrupt()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        try:
            return super().__next__()
        except BaseException as reason:
            self._stopped(reason)
            raise

    def close(self) -> None:
        self._closing()
        super().close()

    def message(self) -> AssistantMessage:
        return self._marked(super().message())

    def until_done(self) -> AssistantMessage:
        for _ in self:
            pass
        return self.message()


class AsyncProviderStream(_ProviderReply, AsyncStream):
    """``ProviderStream`` for ``async for``; cancelling the task that reads it closes the HTTP
    response too (and its message is ``aborted``)."""

    def __aiter__(self) -> AsyncProviderStream:
        return self

    async def next_batch(self) -> list[Event]:
        # iteration (``__anext__``) reads through here too: the end and failures are told once
        try:
            events = await super().next_batch()
        except BaseException as reason:
            self._stopped(reason)
            raise
        if not events:
            self._ended = True
        return events

    async def aclose(self) -> None:
        self._closing()
        await super().aclose()

    def message(self) -> AssistantMessage:
        return self._marked(super().message())


class AsyncStreamManager:
    """What ``provider.astream(request)`` returns: the request is sent when it is awaited or
    entered. ``async with provider.astream(r) as stream:`` closes the stream on exit;
    ``stream = await provider.astream(r)`` leaves closing to you (``await stream.aclose()``)."""

    __slots__ = ("_open", "_stream")

    def __init__(self, open_stream: Callable[[], Awaitable[AsyncProviderStream]]) -> None:
        self._open = open_stream
        self._stream: AsyncProviderStream | None = None

    def __await__(self) -> Generator[Any, None, AsyncProviderStream]:
        return self._open().__await__()

    async def __aenter__(self) -> AsyncProviderStream:
        self._stream = await self._open()
        return self._stream

    async def __aexit__(self, *exc_info: object) -> None:
        if self._stream is not None:
            await self._stream.aclose()


class ProviderOptions(TypedDict, total=False):
    """The constructor options every provider class takes (``HTTPProvider``), as keyword
    arguments: what ``providers.create`` passes on (tests/harness/providers/
    test_providers_options.py keeps them the constructor's)."""

    model: str | None
    base_url: str | None
    api_key: str | None
    headers: Mapping[str, str] | None
    timeout: float | Timeout | None
    deadline: float | None
    max_retries: int
    retry: Retry | None
    client: Client | None
    async_client: AsyncClient | None
    capabilities: Mapping[str, Capabilities] | None
    policy: Policy | None
    stream_options: StreamOptions | None


class HTTPProvider:
    """A model API over HTTP (subclassed per dialect: ``OpenAI``, ``OpenAIResponses``,
    ``Anthropic``, ``Gemini``, ``Ollama``).

    Constructor (keyword-only): ``model`` (the default model of requests that name none),
    ``base_url`` (the dialect's env variable or public URL by default), ``api_key`` (from the
    usual environment variables when not given), ``headers`` (added to every request),
    ``timeout`` (seconds or an ``httpx.Timeout``: the limit of each wait for the network,
    connecting or one read; 600 s, connect 10 s by default: a stream that sends a keep-alive
    now and then never trips it), ``deadline`` (seconds: the limit of a whole call, from
    sending the request to the reply's last byte, retries and their waits included; past it the
    call raises ``TransportError`` caused by ``DeadlineExceeded``, the partial message kept;
    ``None``, the default: no limit),
    ``max_retries`` (2) or ``retry`` (a ``Retry``), ``client`` / ``async_client`` (your
    ``httpx.Client`` / ``httpx.AsyncClient``, left open by ``close()``; async calls without one
    go through aiohttp: at 1,000 conversations at once httpx's pool cost 158 ms of CPU a
    conversation against aiohttp's 3.8-4.4 ms, benches/README.md: pass an ``AsyncClient`` only
    for what httpx alone gives, such as its event hooks or transports), ``capabilities``
    (model name or prefix -> ``Capabilities``, over the built-in table), ``policy`` (how
    blocks the dialect cannot carry are replayed: ``msgwire.Policy``; a call's ``policy=``
    wins) and ``stream_options`` (``msgwire.Stream`` options for every stream:
    ``partial_args``, limits).
    """

    dialect: ClassVar[Dialect]
    env_api_key: ClassVar[tuple[str, ...]] = ()
    env_base_url: ClassVar[str | None] = None
    default_base_url: ClassVar[str]
    needs_api_key: ClassVar[bool] = True
    tool_name: ClassVar[re.Pattern[str] | None] = None
    tool_name_rule: ClassVar[str] = ""
    api_prefix: ClassVar[str | None] = None
    """Where servers of this dialect usually serve its API (``/v1`` for OpenAI's): a base URL
    without a version in its path, answered with a 404, is told so."""

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | Timeout | None = None,
        deadline: float | None = None,
        max_retries: int = 2,
        retry: Retry | None = None,
        client: Client | None = None,
        async_client: AsyncClient | None = None,
        capabilities: Mapping[str, Capabilities] | None = None,
        policy: Policy | None = None,
        stream_options: StreamOptions | None = None,
    ) -> None:
        _check_seconds("deadline", deadline, "no limit")
        if not isinstance(timeout, Timeout):
            _check_seconds("timeout", timeout, "600 s, connect 10 s")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool):
            raise TypeError(f"max_retries is an int, got {type(max_retries).__name__}")
        if base_url is not None and not isinstance(base_url, str):
            raise TypeError(f"base_url is a URL (a str), got {type(base_url).__name__}")
        env_url = os.environ.get(self.env_base_url) if self.env_base_url else None
        given = base_url or env_url or self.default_base_url
        self.base_url = self._normal_url(given.rstrip("/"))
        _check_url(self.base_url, "base_url" if base_url else str(self.env_base_url), given)
        self.api_key = api_key if api_key is not None else _first_env(self.env_api_key)
        if self.needs_api_key and not self.api_key and base_url is None and env_url is None:
            names = " or ".join(self.env_api_key)
            raise ValueError(f"{type(self).__name__}: no API key: pass api_key= or set {names}")
        self.model = model
        self.deadline = deadline
        self.capability_overrides = dict(capabilities or {})
        self.policy = policy
        self.stream_options = dict(stream_options or {})
        auth = self._auth_headers(self.api_key) if self.api_key else {}
        self.transport = Transport(
            dialect=self.dialect,
            headers={"content-type": "application/json", **auth, **(headers or {})},
            timeout=timeout,
            retry=retry if retry is not None else Retry(max_retries=max_retries),
            client=client,
            async_client=async_client,
            hint=self._base_url_hint,
            tls=urlsplit(self.base_url).scheme == "https",
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def retry(self) -> Retry:
        """When a request is sent again (the constructor's ``retry``, or ``max_retries``); an
        ``Agent`` waits as long between the attempts of a stream that failed midway."""
        return self.transport.retry

    # --- what a dialect says -----------------------------------------------------------------

    def _normal_url(self, base_url: str) -> str:
        """The base URL as given (or from the environment), as this dialect reads it."""
        return base_url

    def _base_url_hint(self, error: ProviderError) -> str | None:
        """For a 404 (an error status names its URL): the two common ``base_url`` mistakes, a
        base URL that already ends in what the call adds (``.../v1/chat/completions``), and one
        without the version the API is under (``http://host:8000`` for ``.../v1``)."""
        if error.status != 404 or error.url is None:
            return None
        base = [p for p in urlsplit(self.base_url).path.split("/") if p]
        added = [p for p in urlsplit(error.url).path.split("/") if p][len(base) :]
        for n in range(len(added), 0, -1):  # the longest start of what is added that base ends in
            if base[len(base) - n :] == added[:n]:
                doubled = "/" + "/".join(added[:n])
                right = self.base_url[: -len(doubled)]
                return f"is base_url right? It ends in {doubled}, which msgwire adds itself: base_url={right!r}"
        prefix = self.api_prefix
        if prefix is not None and not any(_VERSION.fullmatch(p) for p in base):
            return f"is base_url right? This API is usually under {prefix}: base_url={self.base_url + prefix!r}"
        return None

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def _url(self, model: str, stream: bool) -> str:
        raise NotImplementedError

    def _call_fields(self, request: Request, stream: bool) -> dict[str, Any]:
        """Body fields of this call that no setting of ``msgwire.Request`` carries (the server's
        own: OpenAI's ``stream_options``), sent as ``extra`` of the dialect; the request's own
        ``extra`` wins over them."""
        return {}

    def _format_options(self) -> dict[str, Any]:
        """Extra options of ``formats.convert_request`` (``system_role``, ``tool_call_ids``)."""
        return {}

    def _rules(self, request: Request, model: str, caps: Capabilities) -> Problems:
        """The dialect's own rules, beyond the universal ones and the capabilities."""
        return []

    # --- validation ----------------------------------------------------------------------------

    def capabilities(self, model: str | None = None) -> Capabilities:
        """What ``model`` (the default model when ``None``) takes, where known."""
        return lookup(self.dialect, model or self.model, self.capability_overrides)

    def problems(self, request: Request, *, messages: bool = True, policy: Policy | None = None) -> Problems:
        """Every problem ``validate`` would raise, as ``(path, message)`` pairs."""
        model = request.model or self.model or ""
        found: Problems = []
        try:
            wire_validate(request if request.model else _with_model(request, model), messages=messages)
        except ValidationError as error:
            found += error.errors
        if not model:
            found = [("$.model", _NO_MODEL), *(p for p in found if p[0] != "$.model")]
        caps = self.capabilities(model)
        found += self._tool_name_problems(request)
        found += _capability_problems(request, model, caps, policy or self.policy)
        found += _extra_problems(request, self.dialect)
        found += self._rules(request, model, caps)
        return found

    def validate(self, request: Request, *, messages: bool = True, policy: Policy | None = None) -> None:
        """Raise ``msgwire.ValidationError`` listing every problem of ``request`` for this
        provider: the universal rules (``msgwire.validate``, with this provider's default
        model), what the model is known not to take (``capabilities``), and the dialect's own
        rules.

        Every call (``stream``, ``complete``, ``prepare``) runs it with ``messages=False``: all
        of it but ``msgwire.validate``'s walk over the history (the settings, the tools, what
        the model takes, the images it would be sent), which costs about 5 us a message. A
        history is checked once, as it grows (``validate(request)`` does it all)."""
        found = self.problems(request, messages=messages, policy=policy)
        if found:
            raise ValidationError(found)

    def _tool_name_problems(self, request: Request) -> Problems:
        pattern = self.tool_name
        if pattern is None:
            return []
        return [
            (f"$.tools[{i}].name", f"{self.dialect} refuses the tool name {tool.name!r}: {self.tool_name_rule}")
            for i, tool in enumerate(request.tools)
            if tool.name and not pattern.fullmatch(tool.name)
        ]

    # --- the calls -----------------------------------------------------------------------------

    def outgoing(self, request: Request, *, stream: bool = True) -> Request:
        """The request as this provider sends it: the default model filled in, the stream flag
        set, and the call's own fields (``_call_fields``) added to ``extra``."""
        model = request.model or self.model
        fields = self._call_fields(request, stream)
        extra = request.extra
        if fields and (extra is None or extra.dialect == self.dialect):
            extra = Extra(dialect=self.dialect, fields={**fields, **(extra.fields if extra else {})})
        elif fields:  # another dialect's extra goes nowhere here (see prepare for its report)
            extra = Extra(dialect=self.dialect, fields=fields)
        return msgspec.structs.replace(request, model=model, stream=stream, extra=extra)

    def prepare(
        self,
        request: Request,
        *,
        stream: bool = True,
        policy: Policy | None = None,
        cache: RequestCache | None = None,
    ) -> HTTPCall:
        """Validate ``request`` (``validate(request, messages=False)``) and return the HTTP call
        that would send it (nothing is sent), with the report of what the dialect could not carry.
        ``cache``: the ``formats.RequestCache`` of the conversation (the agent loop passes its
        own), so that the body of a grown conversation is written from where it changed."""
        policy = policy or self.policy
        self.validate(request, messages=False, policy=policy)
        sent = self.outgoing(request, stream=stream)
        converted = convert_request(sent, self.dialect, policy=policy, cache=cache, **self._format_options())
        report = converted.report
        foreign = request.extra
        if foreign is not None and foreign.dialect != self.dialect and sent.extra is not foreign:
            # the extra fields of another dialect were replaced by the call's: report them as the
            # wire layer does (a request of nothing else costs microseconds)
            lost = convert_request(Request(extra=foreign), self.dialect).report
            report = LossReport(entries=[*lost.entries, *report.entries])
        return HTTPCall(
            url=self._url(sent.model or "", stream),
            headers=dict(self.transport.headers),
            body=converted.body,
            report=report,
        )

    def _options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**self.stream_options, **options}

    def stream(
        self,
        request: Request,
        *,
        policy: Policy | None = None,
        cache: RequestCache | None = None,
        retry: Retry | None = None,
        tap: Tap | None = None,
        **options: Any,
    ) -> ProviderStream:
        """Send ``request`` and return its reply's events as they arrive, once the response
        headers came (retrying before that as ``retry`` says: this call's, else the
        provider's). Use it in ``with``: leaving it closes the HTTP response at once.
        ``options``: ``msgwire.Stream`` options; ``cache``: see ``prepare``; ``tap``: called with
        the reply's headers and each piece of its body before it is decoded (``Tap``)."""
        call = self.prepare(request, stream=True, policy=policy, cache=cache)
        deadline = self._deadline()
        response = self.transport.send(call.url, call.body, call.headers, deadline, retry=retry)
        body = Body(response, deadline, tap)
        try:
            return ProviderStream(
                body,
                self.dialect,
                request_id=request_id(response.headers),
                report=call.report,
                **self._options(options),
            )
        except BaseException:
            body.close()
            raise

    def astream(
        self,
        request: Request,
        *,
        policy: Policy | None = None,
        cache: RequestCache | None = None,
        retry: Retry | None = None,
        tap: Tap | None = None,
        **options: Any,
    ) -> AsyncStreamManager:
        """``stream`` for asyncio: ``async with provider.astream(request) as stream`` (or
        ``await`` it). Cancelling the task reading it closes the HTTP response."""
        call = self.prepare(request, stream=True, policy=policy, cache=cache)
        merged = self._options(options)

        async def open_stream() -> AsyncProviderStream:
            deadline = self._deadline()
            response = await self.transport.asend(call.url, call.body, call.headers, deadline, retry=retry)
            try:
                return AsyncProviderStream(
                    AsyncBody(response, deadline, tap),
                    self.dialect,
                    request_id=request_id(response.headers),
                    report=call.report,
                    **merged,
                )
            except BaseException:
                await response.aclose()
                raise

        return AsyncStreamManager(open_stream)

    def complete(
        self,
        request: Request,
        *,
        policy: Policy | None = None,
        cache: RequestCache | None = None,
        retry: Retry | None = None,
        tap: Tap | None = None,
    ) -> AssistantMessage:
        """Send ``request`` without streaming and return the reply (``msgwire.from_response``);
        ``retry`` and ``tap`` as for ``stream``."""
        call = self.prepare(request, stream=False, policy=policy, cache=cache)
        deadline = self._deadline()
        response = self.transport.send(call.url, call.body, call.headers, deadline, retry=retry)
        rid = request_id(response.headers)
        try:
            data = Body(response, deadline, tap).read_all()
        except Exception as cause:
            raise self._read_failed(cause, rid) from cause
        return self._reply(data, rid)

    async def acomplete(
        self,
        request: Request,
        *,
        policy: Policy | None = None,
        cache: RequestCache | None = None,
        retry: Retry | None = None,
        tap: Tap | None = None,
    ) -> AssistantMessage:
        """``complete`` for asyncio."""
        call = self.prepare(request, stream=False, policy=policy, cache=cache)
        deadline = self._deadline()
        response = await self.transport.asend(call.url, call.body, call.headers, deadline, retry=retry)
        rid = request_id(response.headers)
        try:
            data = await AsyncBody(response, deadline, tap).read_all()
        except Exception as cause:
            raise self._read_failed(cause, rid) from cause
        return self._reply(data, rid)

    def _deadline(self) -> Deadline | None:
        """The clock of a call starting now."""
        return Deadline(self.deadline) if self.deadline is not None else None

    def _read_failed(self, cause: Exception, rid: str | None) -> StreamError:
        where = f" [request id {rid}]" if rid else ""
        return TransportError(
            f"{self.dialect}: reading the reply failed: {type(cause).__name__}: {cause}{where}", dialect=self.dialect
        )

    def _reply(self, data: bytes, rid: str | None) -> AssistantMessage:
        try:
            return from_response(data, self.dialect)
        except ProviderError as error:  # an error inside a 200 body (a failed Responses response)
            error.request_id = error.request_id or rid
            raise
        except DecodeError as error:
            if data.lstrip()[:1] in (b"{", b"["):
                raise  # JSON of the wrong shape: the error names the path
            raise _not_json(self.dialect, data, rid) from error

    # --- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP client this provider made (a client you gave stays open); after
        async calls, ``await aclose()`` (it closes both)."""
        self.transport.close()

    async def aclose(self) -> None:
        await self.transport.aclose()

    def __enter__(self) -> HTTPProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> HTTPProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


_SHOWN = 80  # bytes of a body that is not JSON shown in the error (as a stream shows them)


def _not_json(dialect: Dialect, data: bytes, rid: str | None) -> DecodeError:
    """The error of a non-streamed reply that is no JSON (an HTML page from a proxy, a stream
    from a server that ignored ``"stream": false``), showing how it starts."""
    head = msgspec.json.encode(data[:_SHOWN].decode("utf-8", "replace")).decode()
    streamed = data.lstrip().startswith((b"data:", b"event:", b":"))
    hint = ': a stream, from a server that ignored "stream": false' if streamed else ""
    where = f" [request id {rid}]" if rid else ""
    return DecodeError(
        f"{dialect} response: not a JSON body{hint} (it starts with {head}){where}", offset=0, kind="json_malformed"
    )


def _check_seconds(name: str, value: object, otherwise: str) -> None:
    """``value`` is ``None`` or a number of seconds above 0 (a ``TypeError`` / ``ValueError``
    naming the option, at construction rather than at the first call)."""
    if value is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} is a number of seconds (or None: {otherwise}), got {type(value).__name__}")
    if not value > 0:
        raise ValueError(f"{name} is a number of seconds above 0 (or None: {otherwise}), got {value!r}")


def _check_url(url: str, name: str, given: str) -> None:
    """A base URL is ``http://`` or ``https://`` and a host: ``localhost:8000`` would fail at
    every call ("missing an 'http://' or 'https://' protocol"), so it fails here, once."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return
    if "://" not in url:
        hint = f": it needs its scheme, e.g. 'http://{given}'"
    else:
        hint = ": a base URL starts with http:// or https://"
    raise ValueError(f"{name} {given!r} is no HTTP URL{hint}")


def _first_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _with_model(request: Request, model: str) -> Request:
    return msgspec.structs.replace(request, model=model)


def thinks(request: Request) -> bool:
    """Whether ``request`` asks the model to reason (a ``reasoning`` setting that is not off)."""
    return request.reasoning is not None and request.reasoning.enabled is not False


def forces_a_tool(request: Request) -> bool:
    """Whether ``request``'s tool choice makes the model call a tool (``required`` or one by name)."""
    return request.tool_choice == "required" or isinstance(request.tool_choice, NamedTool)


def _capability_problems(request: Request, model: str, caps: Capabilities, policy: Policy | None) -> Problems:
    found: Problems = []
    if caps.tools is False and request.tools:
        found.append(("$.tools", f"{model} takes no tools"))
    if caps.thinking is False and thinks(request):
        found.append(("$.reasoning", f"{model} does not reason: leave reasoning unset"))
    if caps.sampling is False:
        for name in ("temperature", "top_p"):
            if getattr(request, name) is not None:
                found.append((f"$.{name}", f"{model} takes no {name} (its provider refuses it): leave it unset"))
    if caps.vision is False and (policy is None or policy.images == "keep"):
        for i, message in enumerate(request.messages):
            if not isinstance(message, (UserMessage, ToolResultMessage)):
                continue
            for j, block in enumerate(message.content):
                # A path image is never sent as an image (formats.to_request sends its text).
                if type(block) is ImageBlock and not isinstance(block.source, PathSource):
                    found.append(
                        (
                            f"$.messages[{i}].content[{j}]",
                            f"{model} takes no images: recognize their text and send that (Policy(images='to_text'))",
                        )
                    )
    return found


def _extra_problems(request: Request, dialect: str) -> Problems:
    """``extra`` fields of this dialect that would collide with the conversation's."""
    extra = request.extra
    if extra is None or extra.dialect != dialect:
        return []
    return [
        (f"$.extra.fields.{name}", f"{name!r} is written from the request's conversation; extra cannot replace it")
        for name in extra.fields
        if name in _CONVERSATION_FIELDS
    ]
