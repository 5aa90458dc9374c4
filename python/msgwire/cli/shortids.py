"""Conversation ids typed short: the start or the end of one id.

msgwire's ids are UUIDv7: they begin with the time they were made, so the conversations of one
day share their first 8 to 11 characters, while the last 12 are random. So the end of an id
names it in a few characters (``msgwire sessions`` shows how many each needs); the start works
too, once it reaches where two ids differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["LEAST", "matching", "shortest_end"]

LEAST = 4
"""The fewest characters ``shortest_end`` offers: fewer would name another id tomorrow."""


def matching(ids: Iterable[str], wanted: str) -> list[str]:
    """The ids that begin or end with ``wanted``."""
    return [i for i in ids if i.startswith(wanted) or i.endswith(wanted)]


def shortest_end(cid: str, ids: Sequence[str]) -> str:
    """The last characters of ``cid`` (at least ``LEAST``) that begin or end no other of ``ids``,
    never starting with ``-`` (a command line would read an option); ``cid`` itself when none."""
    others = [i for i in ids if i != cid]
    for size in range(LEAST, len(cid)):
        end = cid[-size:]
        if not end.startswith("-") and not matching(others, end):
            return end
    return cid
