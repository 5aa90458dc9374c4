"""Stubs of the Rust extension ``msgwire._core`` (checked by ``mypy.stubtest``)."""

from collections.abc import Callable
from typing import Any, final

from msgwire.errors import StreamError
from msgwire.sse import ServerSentEvent
from msgwire.types import Dialect as _Dialect

__all__ = [
    "DIALECTS",
    "EMPTY_MESSAGE",
    "MISSING_RESULT",
    "Decoder",
    "Marks",
    "NDJSONParser",
    "PartialArgs",
    "RequestCache",
    "SSEParser",
    "SSEPending",
    "__version__",
    "canonical_arguments",
    "content_key",
    "forget_randomness",
    "from_request_json",
    "from_response_json",
    "from_response_parts",
    "new_id",
    "new_ids",
    "normalize_session",
    "to_request_json",
    "to_response_json",
]
__version__: str
MISSING_RESULT: str
EMPTY_MESSAGE: str
DIALECTS: tuple[_Dialect, ...]

def normalize_session(data: bytes) -> bytes:
    """Read a canonical session envelope in Rust and write it back; raises
    ``msgwire.DecodeError`` (with ``offset``) on malformed or wrongly shaped input."""

@final
class Marks:
    """A stream's tool calls for ``partial_args`` (``msgwire._partialargs.marks``)."""
    def __new__(cls, delta: type, new_call: Callable[[str], Any]) -> Marks: ...
    def attach(self, events: list[Any]) -> None:
        """Give each ``ToolCallDelta`` of ``events`` whose ``parsed`` slot holds a mark a
        ``PartialArgs``: its call gains the mark's text (a list of one text is a call's first
        mark: a new call, ``new_call(text)``)."""

@final
class PartialArgs:
    """The arguments parsed so far at one delta, computed on first read and kept."""
    def value(self) -> Any: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any]]: ...

def to_request_json(
    data: bytes, dialect: _Dialect, options: bytes | None = None, report: bool = True
) -> tuple[bytes, bytes | None]:
    """The request-body fields of a canonical session (or a JSON array of messages) for
    ``dialect``; ``options`` is the JSON of ``{system_prompt, system_role, tools, policy,
    missing_result, tool_call_ids}``.
    Returns ``(body, report)``, both JSON (the report ``None`` without ``report``)."""

def content_key(data: bytes) -> bytes:
    """The 16-byte content key of a message's canonical JSON (what ``RequestCache`` keys on)."""

@final
class RequestCache:
    """The messages read and the last requests written for one conversation: re-building its
    request after it grew writes only what is new (``msgwire.formats.RequestCache`` holds one)."""

    def __init__(self) -> None: ...
    def __len__(self) -> int:
        """How many messages are kept read."""
    def to_request_json(
        self, keys: bytes, data: list[bytes], dialect: _Dialect, options: bytes | None = None, report: bool = True
    ) -> tuple[bytes, bytes | None]:
        """``to_request_json`` of the messages whose canonical JSON is ``data`` (``keys`` the
        ``content_key`` of each, joined): the same ``(body, report)``."""

def canonical_arguments(block: Any) -> None:
    """``ToolCallBlock.__post_init__``: arguments equal to ``"{}"`` become the default object
    itself (the interned ``"{}"``), as msgspec's ``omit_defaults`` compares by identity."""

def new_id() -> str:
    """A new message id: a UUIDv7 string (RFC 9562), increasing within the process (a 12-bit
    counter within a millisecond; a spent counter borrows the next millisecond)."""

def new_ids(n: int) -> list[str]:
    """``n`` ids of ``new_id``, in order (one lock, one clock read)."""

def forget_randomness() -> None:
    """Drop the buffered randomness (4 KiB read at a time): a forked child's next id reads its own."""

def from_request_json(data: bytes, dialect: _Dialect) -> bytes:
    """A request body of ``dialect`` as canonical session JSON, without ids and timestamps."""

def to_response_json(data: bytes, dialect: _Dialect, options: bytes | None = None) -> tuple[bytes, bytes]:
    """The non-streamed response body of ``dialect`` for the canonical JSON of one assistant
    message; ``options`` is the JSON of ``{policy}``. Returns ``(body, report)``, both JSON."""

def from_response_json(
    data: bytes,
    dialect: _Dialect,
    *,
    id: str | None = None,  # noqa: A002 - the message id
    timestamp: str | None = None,
) -> bytes:
    """A non-streamed response body of ``dialect`` as the canonical JSON of an assistant message
    with this ``id`` (``new_id()`` by default), and this ``timestamp`` unless the body has a
    creation time (now, the core's clock, by default: an RFC 3339 UTC time). Raises
    ``msgwire.ProviderError`` for an error body, ``msgwire.DecodeError`` (``offset``, ``path``)
    for a body of the wrong shape."""

def from_response_parts(
    data: bytes,
    dialect: _Dialect,
    *,
    id: str | None = None,  # noqa: A002 - the message id
    timestamp: str | None = None,
) -> tuple[bytes, list[tuple[int, str, str]]]:
    """``from_response_json`` in two parts: the message's JSON with its long texts, thinking and
    tool arguments left empty, and those strings as ``(block index, field name, str)`` in block
    order, to put back in the decoded blocks (each decoded once, from the body)."""

@final
class Decoder:
    """One provider stream: every method returns canonical JSON bytes for msgspec to decode.

    With ``target``, ``feed`` and ``finish`` return the stream in that dialect's wire format."""

    def __new__(
        cls,
        dialect: _Dialect,
        *,
        id: str,  # noqa: A002 - the message id
        timestamp: str,
        provider: str | None = None,
        events: bool = True,
        partial_args: bool = False,
        target: str | None = None,
        max_event_size: int | None = None,
        max_line_size: int | None = None,
        max_tool_args_size: int | None = None,
        max_depth: int | None = None,
    ) -> Decoder: ...
    def feed(self, data: bytes | bytearray | memoryview) -> bytes:
        """Decode the next bytes (any buffer); the events they completed, as a JSON array (or
        target bytes). Raises ``msgwire.UsageError`` for bytes after the end; a stream failure
        is reported by ``error()``."""
    def finish(self) -> bytes:
        """End the stream; the last events, as a JSON array (or target bytes)."""
    def abort(self, reason: str) -> None:
        """End the stream because its source failed."""
    def message(self) -> bytes:
        """The assembled message so far (canonical JSON)."""
    def take_message(self) -> bytes:
        """The assembled message (canonical JSON), moved out: the decoder keeps an empty one."""
    def diagnostics(self) -> bytes:
        """A JSON array of ``{code, message, offset}``."""
    def error(self) -> StreamError | None:
        """The ``msgwire.StreamError`` that ended the stream, if one did."""
    @property
    def ended(self) -> bool: ...
    @property
    def offset(self) -> int: ...
    @property
    def dialect(self) -> _Dialect: ...

@final
class SSEPending:
    """What an SSE stream left when it ended: ``SSEParser.finish()``."""

    @property
    def partial_line(self) -> bool:
        """The stream did not end with a line terminator: its last line was cut."""
    @property
    def undispatched(self) -> int | None:
        """The offset of a block with data that no blank line dispatched (an event lost)."""
    @property
    def clean(self) -> bool:
        """Nothing was lost: the stream ended on a line terminator, no event undispatched."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: None  # type: ignore[assignment]

@final
class SSEParser:
    """An incremental WHATWG server-sent-events parser: one stream at a time."""

    def __new__(cls, *, max_line_size: int = ..., max_event_size: int = ...) -> SSEParser: ...
    def feed(self, data: bytes | bytearray | memoryview) -> list[ServerSentEvent]:
        """Parse the next bytes of the stream (split anywhere); the events they completed.
        Raises ``msgwire.LimitExceededError`` (with ``offset`` and ``events``)."""
    def finish(self) -> SSEPending:
        """End the stream (an unfinished block is discarded); ready for a new stream."""
    @property
    def last_event_id(self) -> str: ...
    @property
    def reconnection_time(self) -> int | None: ...
    @property
    def comments_seen(self) -> int: ...
    @property
    def offset(self) -> int: ...

@final
class NDJSONParser:
    """An incremental NDJSON line splitter: one stream at a time."""

    def __new__(cls, *, max_line_size: int = ...) -> NDJSONParser: ...
    def feed(self, data: bytes | bytearray | memoryview) -> list[str]:
        """Split the next bytes of the stream; the non-blank lines they completed."""
    def finish(self) -> list[str]:
        """End the stream: its last line if no LF ended it; ready for a new stream."""
    @property
    def offset(self) -> int: ...
