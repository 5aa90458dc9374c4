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
import threading
import time

__all__ = ["derived_id", "new_id", "new_ids", "now"]

_id_lock = threading.Lock()
_id_last_ms = 0
_id_counter = 0
_id_prefix = ""  # the formatted time part of the current millisecond's ids: "tttttttt-tttt-7"
_POOL = 4096  # bytes of randomness read at once (one system call per 409 ids)
_pool = b""
_pool_at = _POOL


def _forget_randomness() -> None:
    """A forked child reads its own randomness: never the parent's buffered bytes, which would
    give both the same ids in the same millisecond."""
    global _pool, _pool_at
    _pool, _pool_at = b"", _POOL


os.register_at_fork(after_in_child=_forget_randomness)


def new_id() -> str:
    """A UUIDv7 string: time-ordered (sorts by creation), unique across processes.

    Within one millisecond a 12-bit counter keeps ids from one process monotonic (RFC 9562,
    section 6.2, method 1); it starts at a random value below 2048 each new millisecond. The
    randomness comes from ``os.urandom``, read 4 KiB at a time.
    """
    global _id_last_ms, _id_counter, _id_prefix, _pool, _pool_at
    with _id_lock:
        if _pool_at > _POOL - 10:
            _pool, _pool_at = os.urandom(_POOL), 0
        at = _pool_at
        _pool_at = at + 10
        ms = time.time_ns() // 1_000_000
        if ms > _id_last_ms:
            _id_last_ms, _id_counter = ms, int.from_bytes(_pool[at : at + 2], "big") >> 5
            _id_prefix = _time_part(ms)
        elif _id_counter < 0xFFF:
            _id_counter += 1
        else:  # counter spent within one millisecond: borrow the next one
            _id_last_ms, _id_counter = _id_last_ms + 1, 0
            _id_prefix = _time_part(_id_last_ms)
        prefix, counter = _id_prefix, _id_counter
        tail = _pool[at + 2 : at + 10]
    rest = (bytes((tail[0] & 0x3F | 0x80,)) + tail[1:]).hex()  # the RFC 9562 variant: 0b10
    return f"{prefix}{counter:03x}-{rest[:4]}-{rest[4:]}"


def _time_part(ms: int) -> str:
    h = f"{ms & 0xFFFF_FFFF_FFFF:012x}"
    return f"{h[:8]}-{h[8:]}-7"


def new_ids(n: int) -> list[str]:
    """``n`` ids of ``new_id``, in order."""
    return [new_id() for _ in range(n)]


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
