"""The one exception hierarchy of msgwire.

Bad data raises ``DecodeError``, a ``ValueError``, so ``except ValueError`` keeps working for
callers that treat msgwire like ``json``. Every message names where the problem is: a byte
offset into the input (``offset``) or a JSON path (``path``, e.g. ``$.messages[3].tool_call_id``).
A caller's mistake (a wrong argument type is ``TypeError``; bytes fed after a stream ended) is
``UsageError``, a ``RuntimeError``: never bad data, never worth a retry.

Every exception has ``kind``, a stable name for programs to match on (``"json_malformed"``,
``"schema"``, ``"body_shape"``, ``"not_a_stream"``, ``"limit"``, ``"json_too_deep"``,
``"provider"``, ``"truncated"``, ``"transport"``, ``"validation"``, ``"usage"``...).
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `msgwire --help` needs none of it
if TYPE_CHECKING:
    from typing import Any

    from .types import AssistantMessage, Diagnostic, Event

__all__ = [
    "DecodeError",
    "HeaderMismatchError",
    "LimitExceededError",
    "MalformedStreamError",
    "MissingExtraError",
    "MsgwireError",
    "ProviderError",
    "ResourceError",
    "StoreError",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "StreamError",
    "TransportError",
    "TruncatedStreamError",
    "UsageError",
    "ValidationError",
]


class MsgwireError(Exception):
    """Base of every error msgwire raises on purpose."""

    kind: str = "error"


class UsageError(MsgwireError, RuntimeError):
    """The API was used wrongly (bytes fed after a stream ended, a sync call on an async
    source): a bug in the caller, not bad data and not a transport failure."""

    kind = "usage"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class MissingExtraError(MsgwireError, ImportError):
    """A part of msgwire needs an optional library that is not installed (or cannot be
    imported): the message names the part, the library and the ``pip install 'msgwire[extra]'``
    that brings it. An ``ImportError``, so ``except ImportError`` keeps working; ``name`` is the
    module that failed to import (as ``ImportError.name``), ``extra`` the extra to install.

    Raised by the one module that imports the library, when it is imported (or, for an import
    made on first use, such as httpx for an image URL, when it is used)."""

    kind = "missing_extra"

    def __init__(self, part: str, extra: str, cause: ImportError) -> None:
        name = cause.name or ""
        library = name.partition(".")[0]
        if isinstance(cause, ModuleNotFoundError) and sys.modules.get(library) is None:
            why = f"needs {library}, which is not installed"
        else:  # installed, but of another version (a module or name it lacks), or failing as it loads
            why = f"needs {library or 'a library'}, which cannot be imported ({cause})"
        super().__init__(f"{part} {why}: pip install 'msgwire[{extra}]'", name=cause.name)
        self.extra = extra


class DecodeError(MsgwireError, ValueError):
    """Input that cannot be read as msgwire data: malformed JSON, wrong shape, wrong type."""

    kind = "decode"

    def __init__(
        self, message: str, *, offset: int | None = None, path: str | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.offset = offset
        self.path = path
        if kind is not None:
            self.kind = kind


class ValidationError(DecodeError):
    """Well-formed data that breaks a rule of the schema or of ``msgwire.validate``.

    ``errors`` lists every problem found as ``(path, message)`` pairs; the exception message
    shows the first ones.
    """

    kind = "validation"

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        shown = "; ".join(f"{msg} - at `{path}`" for path, msg in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(shown + more, path=errors[0][0] if errors else None)


_AT_PATH = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_BYTE = re.compile(r"\(byte (\d+)\)")
_MISSING_FIELD = re.compile(r"missing required field `([^`]+)`")


def from_msgspec(exc: Exception, prefix: str = "$", *, size: int | None = None) -> DecodeError:
    """Our error for a msgspec error, its path rebased under ``prefix`` (the path of the value
    that was decoded on its own) and extended to the missing field when one is named. ``size``
    is the length of the whole input: where input that ends too soon went wrong."""
    import msgspec

    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        match = _BYTE.search(text)
        if match:
            return DecodeError(text, offset=int(match.group(1)))
        if size is not None and text == "Input data was truncated":  # msgspec names no byte here
            return DecodeError(f"{text} (byte {size})", offset=size)
        return DecodeError(text)
    found = _AT_PATH.match(text)
    assert found is not None  # the pattern matches any text
    message, path = found.group("msg"), found.group("path") or "$"
    path = prefix + path[1:]
    missing = _MISSING_FIELD.search(message)
    if missing:
        path = f"{path}.{missing.group(1)}"
    return ValidationError([(path, message)])


# --- streams --------------------------------------------------------------------------------


class StreamError(MsgwireError):
    """A provider stream failed. Nothing already received is lost:

    - ``partial_message``: the assistant message assembled so far (``stop_reason = "error"``);
    - ``events``: the events decoded from the last chunk before the failure;
    - ``diagnostics``: what the stream did that was unusual;
    - ``dialect`` and ``offset``: where, as a byte offset into the stream;
    - ``output``: for ``msgwire.transcode``, the last bytes of the rewritten stream, ending with
      the target dialect's error frame (forward them, so the client sees the failure too).
    """

    kind = "stream"

    def __init__(
        self,
        message: str,
        *,
        dialect: str = "",
        offset: int | None = None,
        error_type: str | None = None,
        provider_message: str | None = None,
        limit_name: str | None = None,
        limit: int | None = None,
        kind: str | None = None,
    ) -> None:
        # cooperative: in the MalformedStreamError diamond this runs DecodeError.__init__ too
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.dialect = dialect
        self.offset = offset
        self.path: str | None = None
        self.error_type = error_type
        self.provider_message = provider_message
        self.limit_name = limit_name
        self.limit = limit
        self.partial_message: AssistantMessage | None = None
        self.events: list[Event] = []
        self.diagnostics: list[Diagnostic] = []
        self.output = b""


# The retry rule's words (``ProviderError.retryable`` states the rule): HTTP statuses worth a
# retry besides every 5xx, error types that say the same without a status, and the one that
# never does.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
RETRYABLE_TYPES = frozenset(
    {
        "server_error",
        "internal_server_error",
        "rate_limit_exceeded",
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        "timeout_error",
        "UNAVAILABLE",
        "INTERNAL",
        "RESOURCE_EXHAUSTED",
        "DEADLINE_EXCEEDED",
    }
)
FINAL_TYPES = frozenset({"insufficient_quota"})
_STATUS = re.compile(r"[1-5][0-9][0-9]")


def _retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


class ProviderError(StreamError):
    """The provider reported an error: inside the stream (``event: error``, an ``error``
    object, Anthropic's ``overloaded_error``...) or as an HTTP error response.

    - ``error_type`` and ``provider_message``: the provider's own words;
    - ``status``: the HTTP status code when the error came with an HTTP response (``None`` for
      an error inside a 200 stream or a body read on its own);
    - ``request_id``: the provider's request id header (``x-request-id``, ``request-id``...), for
      its support;
    - ``url``: the URL of the request an HTTP error status answered (named in the message too,
      without its query), ``None`` when unknown;
    - ``code``: the error object's own ``code`` when it has one beside its ``type`` (OpenAI's
      ``rate_limit_exceeded`` with a ``type`` of ``tokens``; LiteLLM's ``"500"``);
    - ``body``: the HTTP error response's body as received (at most 64 KiB), ``None`` for an error
      inside a stream;
    - ``retryable``: whether sending the same request again may succeed (the retry rule, below).
    """

    kind = "provider"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        request_id: str | None = None,
        code: str | None = None,
        url: str | None = None,
        body: bytes | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(message, **fields)
        self.status = status
        self.request_id = request_id
        self.code = code
        self.url = url
        self.body = body

    @property
    def retryable(self) -> bool:
        """The retry rule, one for an HTTP error status and for an error the provider reports
        inside a 200 stream (OpenAI's and compatible servers' ``data: {"error": ...}``,
        Anthropic's ``event: error``, a Responses ``response.failed`` or ``error`` event,
        Gemini's ``{"error": ...}``): a gateway such as LiteLLM reports an upstream failure after
        the headers this way, so it is retried like the same error as a status. Retryable:

        - the statuses 408, 409, 429 and every 5xx (``RETRYABLE_STATUSES``);
        - without a status (an error inside a stream), the error types that say the same
          (``RETRYABLE_TYPES``; with a status, it alone decides, as the official SDKs read it: a
          400 whose body says ``api_error`` is not retried): OpenAI's
          ``server_error`` and ``rate_limit_exceeded``, LiteLLM's ``internal_server_error``;
          Anthropic's ``overloaded_error``, ``api_error``, ``rate_limit_error`` and
          ``timeout_error``; Google's ``UNAVAILABLE``, ``INTERNAL``, ``RESOURCE_EXHAUSTED`` and
          ``DEADLINE_EXCEEDED``;
        - an error type that is a status number (``"503"``: a server that sent only a ``code``),
          read as that status;

        never ``insufficient_quota`` (``FINAL_TYPES``: OpenAI's 429 for a spent balance, which
        no wait fixes). The words read are the error object's ``type`` (else its ``status``, else
        its ``code``: ``error_type``) and its ``code`` beside it: either one decides.

        Who retries: a provider's transport before the first byte of a reply (``Retry``: backoff
        with jitter, ``Retry-After``); ``Agent(retries=N)`` after it, sending the failed call
        again whole."""
        words = [w for w in (self.error_type, self.code) if w is not None]
        if any(w in FINAL_TYPES for w in words):
            return False
        if self.status is not None:  # the status decides, as the SDKs read it; the words stand in for one
            return _retryable_status(self.status)
        return any(_retryable_status(int(w)) if _STATUS.fullmatch(w) else w in RETRYABLE_TYPES for w in words)


class TruncatedStreamError(StreamError):
    """The stream ended before the provider's terminal marker (``[DONE]``, ``message_stop``,
    ``response.completed``, a finish reason, ``done: true``)."""

    kind = "truncated"


class TransportError(StreamError):
    """The source of the bytes raised (a network error, a closed connection); the original
    exception is the ``__cause__``."""

    kind = "transport"


class MalformedStreamError(StreamError, DecodeError):
    """A payload in the stream is not the JSON its dialect defines, or the body is no stream at
    all (an HTML page, random bytes: ``kind == "not_a_stream"``, the first bytes shown); a
    ``ValueError``."""

    kind = "json_malformed"


class LimitExceededError(StreamError, DecodeError):
    """A configured limit was exceeded (``limit_name``, ``limit``): the stream was refused
    rather than buffered without bound (a ``ValueError``)."""

    kind = "limit"


class ResourceError(MsgwireError):
    """A file, image or MCP resource the harness could not read or was not allowed to
    (``msgwire.harness.resources``). Only explicit look-ups raise it; ``resolve()`` records the
    same message on the block (``status="error"``) instead, so one bad reference never loses a
    message."""

    kind = "resource"


class StoreError(MsgwireError):
    """A store (``msgwire.harness.store``) could not do what was asked: the database refused
    the connection (a wrong password, a database that does not exist) or the write after the
    retries, a conversation that does not exist, a schema newer than this msgwire. The message
    gives the database's own words. A row that cannot be decoded is a ``DecodeError`` instead,
    naming the conversation and the seq."""

    kind = "store"


class StoreNotFoundError(StoreError):
    """A store opened with ``create=False`` (to read one that exists, as ``msgwire sessions`` and
    ``msgwire audit`` do) is not there: no such SQLite file, or a database without msgwire's
    tables. Nothing was created."""

    kind = "store_not_found"


class StoreUnavailableError(StoreError):
    """The database server could not be reached for the store's whole ``connect_timeout``
    (nothing listening, shutting down, the connection lost mid-call): the same call may succeed
    once it is back, and the store reconnects by itself. Nothing of the call was stored, except
    when the connection was lost while committing: then the message says the transaction may
    have been stored (appends are idempotent on the message id, so repeating one is safe)."""

    kind = "store_unavailable"


class HeaderMismatchError(StoreError, ValueError):
    """A stored conversation whose header columns (its system prompt, mode, modes, metadata...)
    are not what its audit trail says: a column was rewritten behind the store's back, so what
    an agent would send is not what was audited. ``columns`` names each column found, in the
    words ``accept_header=`` takes, ``details`` says how each differs, ``conversation_id`` is the
    conversation. A ``ValueError``: bad data, not a failure worth a retry."""

    kind = "header_mismatch"

    def __init__(
        self, message: str, *, conversation_id: str, columns: tuple[str, ...], details: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id
        self.columns = columns
        self.details = details
