"""The one source of ids and times: ``new_id`` (UUIDv7, time-ordered), ``derived_id`` (a
UUIDv8 that is a function of its inputs, for what an import reads), ``now`` (UTC).

Imports are idempotent: ``formats.from_request``, ``formats.read_request`` and ``msgwire.loads`` of
a legacy list give each message an id derived from the dialect, the message's position and its
own bytes as read, so the same body read twice gives the same ids, and a longer body that
repeats it (a conversation that grew) gives its first messages the same ids again; two messages
of one conversation never share one (their positions differ).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os

from . import _core

__all__ = ["derived_id", "new_id", "new_ids", "now"]

new_id = _core.new_id
"""A UUIDv7 string: time-ordered (sorts by creation), unique across processes.

Within one millisecond a 12-bit counter keeps ids from one process monotonic (RFC 9562, section
6.2, method 1); it starts at a random value below 2048 each new millisecond. The randomness
comes from the system, read 4 KiB at a time. The generator is the Rust core's
(``msgwire_core::ids``), so the ids the core makes (``from_response``) keep the same order."""

new_ids = _core.new_ids
"""``n`` ids of ``new_id``, in order."""

# A forked child reads its own randomness: never the parent's buffered bytes, which would give
# both the same ids in the same millisecond.
os.register_at_fork(after_in_child=_core.forget_randomness)


def derived_id(namespace: str, position: int | str, data: bytes) -> str:
    """A UUIDv8 string that is a function of its inputs (RFC 9562 section 5.8: the first 122 bits
    of SHA-256 over the namespace, the position and the data)."""
    digest = hashlib.sha256(b"%s\0%s\0%s" % (namespace.encode(), str(position).encode(), data)).digest()
    value = int.from_bytes(digest[:16], "big")
    value = value & ~(0xF << 76) | 0x8 << 76  # version 8
    value = value & ~(0b11 << 62) | 0b10 << 62  # the RFC 9562 variant
    return _format(value)


def _format(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def now() -> _dt.datetime:
    """The current time, timezone-aware UTC (the only kind of timestamp the schema stores)."""
    return _dt.datetime.now(_dt.UTC)
