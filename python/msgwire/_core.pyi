"""Stubs of the Rust extension ``msgwire._core`` (checked by ``mypy.stubtest``)."""

__version__: str

def normalize_session(data: bytes) -> bytes:
    """Read a canonical session envelope in Rust and write it back; raises
    ``msgwire.DecodeError`` (with ``offset``) on malformed or wrongly shaped input."""
