"""Stubs of the Rust extension ``msgwire._core`` (checked by ``mypy.stubtest``)."""

from typing import final

__all__ = ["Decoder", "__version__", "normalize_session"]
__version__: str

def normalize_session(data: bytes) -> bytes:
    """Read a canonical session envelope in Rust and write it back; raises
    ``msgwire.DecodeError`` (with ``offset``) on malformed or wrongly shaped input."""

@final
class Decoder:
    """One provider stream: every method returns canonical JSON bytes for msgspec to decode."""

    def __new__(
        cls,
        dialect: str,
        *,
        id: str,  # noqa: A002 - the message id
        timestamp: str,
        provider: str | None = None,
        events: bool = True,
        partial_args: bool = False,
        max_event_size: int | None = None,
        max_line_size: int | None = None,
        max_tool_args_size: int | None = None,
        max_depth: int | None = None,
    ) -> Decoder: ...
    def feed(self, data: bytes | bytearray | memoryview) -> bytes:
        """Decode the next bytes; the events they completed, as a JSON array."""
    def finish(self) -> bytes:
        """End the stream; the last events, as a JSON array."""
    def abort(self, reason: str) -> None:
        """End the stream because its source failed."""
    def message(self) -> bytes:
        """The assembled message so far (canonical JSON)."""
    def diagnostics(self) -> bytes:
        """A JSON array of ``{code, message, offset}``."""
    def error(self) -> BaseException | None:
        """The ``msgwire.StreamError`` that ended the stream, if one did."""
    @property
    def ended(self) -> bool: ...
    @property
    def offset(self) -> int: ...
    @property
    def dialect(self) -> str: ...
