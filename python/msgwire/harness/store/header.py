"""A conversation's row checked against its trail: what an agent resumes is what was audited.

The header columns of ``msgwire_conversations`` are copies, for SQL readers, listings and the
append transaction; the trail is what is chained. The ``chain`` column holds the header's links
(``audit.Link``), its origin (mode, system prompt and branch as made: ``audit.Origin``) and the
rest of the header as made (``made``: id, creation time, modes, parent, metadata; a row written
before msgwire kept it has none). The header the trail vouches for is that one: its own link
recomputed (``audit.header_link``) must be the link stored, the first entry after the link must
chain to it, and the entries' mode changes and branch switches (``audit.apply_change``) make
the live mode, system prompt and branch. Each column is compared with it (``HEADER_COLUMNS``):

- ``system_prompt``, ``mode``, ``branch``: with the origin and the changes;
- ``modes``, ``metadata``, ``created_at``, ``id``, ``parent_id``, ``parent_entry``,
  ``parent_hash``: with ``made`` (a row without it: with the link, which covers them all,
  and a mismatch is ``chain``: which of them was changed cannot be told);
- ``chain``: its link with the header it holds and with the entry after it (removed: the
  first entry does not chain to the genesis hash);
- ``head_seq``, ``head_hash``: with the last entry (an append chains after them).

Not compared, as nothing an agent sends depends on them: ``agent`` (which program's
conversation it is: ``conversations(agent=...)`` lists by it) and ``updated_at`` (the timestamp
of the last entry appended). A row written before headers were chained (``chain`` NULL, its first entry
chained to the genesis hash) has no chained header to compare with: it reads as it is stored,
and ``verify()`` says ``header="unchained"``.

A mismatch is refused (``HeaderMismatchError`` naming the columns) unless the caller accepts
those columns by name (``accept_header=``): the conversation then takes the stored values and
its ``verify()`` names them (``Conversation.unvouched``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, get_args

import msgspec

from msgwire.errors import HeaderMismatchError

from ..audit import GENESIS, AuditHeader, Link, Origin, Parent, chain_hash, header_link, made_header

__all__ = ["HEADER_COLUMNS", "Chain", "HeaderColumn", "Made", "Mismatch", "StoredHeader", "accepted", "refuse"]

HeaderColumn = Literal[
    "id",
    "created_at",
    "system_prompt",
    "mode",
    "modes",
    "branch",
    "parent_id",
    "parent_entry",
    "parent_hash",
    "metadata",
    "chain",
    "head_seq",
    "head_hash",
]
"""A column of ``msgwire_conversations`` that is checked against the trail (the module docs)."""
HEADER_COLUMNS: tuple[HeaderColumn, ...] = get_args(HeaderColumn)
"""Every checked column: ``accept_header=HEADER_COLUMNS`` reads a conversation whatever its columns say."""

RowAt = Callable[[int], tuple[bytes, str] | None]
"""The stored ``(body, hash)`` of the entry at a seq (``None``: no such entry)."""
Live = tuple[str | None, str | None, str]
"""The mode, system prompt and branch a header's changes lead to."""


class Made(msgspec.Struct, kw_only=True):
    """The header as it was made, besides its origin: what the link hashes with it."""

    conversation_id: str
    created_at: dt.datetime | None
    modes: dict[str, str]
    parent: Parent | None
    metadata: dict[str, Any]


class Chain(msgspec.Struct, kw_only=True):
    """A conversation's ``chain`` column: its header links, the header's origin, and the rest
    of the header as made (``None`` in a row written before msgwire kept it)."""

    links: list[Link]
    origin: Origin
    made: Made | None = None


class Mismatch(msgspec.Struct, frozen=True):
    """A column the trail does not vouch for, and how it differs."""

    column: HeaderColumn
    detail: str


class StoredHeader:
    """A conversation's row, as stored: ``columns`` its header columns (the live mode, system
    prompt and branch; ``chain`` the links), ``chain`` the column (``None``: unchained), and its
    head."""

    __slots__ = ("chain", "columns", "head_hash", "head_seq")

    def __init__(self, columns: AuditHeader, chain: Chain | None, head_seq: int, head_hash: str) -> None:
        self.columns = columns
        self.chain = chain
        self.head_seq = head_seq
        self.head_hash = head_hash

    def made(self) -> AuditHeader | None:
        """The header as made, as the trail holds it (``None``: unchained): from ``made``, else
        (an older row) the columns with the origin's mode, system prompt and branch."""
        chain = self.chain
        if chain is None:
            return None
        origin, kept = chain.origin, chain.made
        if kept is None:
            return made_header(self.columns, origin)
        return AuditHeader(
            conversation_id=kept.conversation_id,
            created_at=kept.created_at,
            system_prompt=origin.system_prompt,
            mode=origin.mode,
            modes=dict(kept.modes),
            branch=origin.branch,
            parent=kept.parent,
            metadata=kept.metadata,
            chain=list(chain.links),
        )

    def mismatches(self, made: AuditHeader | None, live: Live | None, row_at: RowAt) -> list[Mismatch]:
        """Every column the trail does not vouch for. ``made``: ``self.made()``; ``live``: the
        mode, system prompt and branch the entries' changes make of it (``None`` when ``made``
        is); ``row_at``: the stored entries up to ``head_seq`` (the head, the link's neighbours)."""
        if made is None:
            return self._unchained(row_at) or self._head(row_at)
        found = self._head(row_at)
        assert self.chain is not None
        assert live is not None
        found += self._link(made, row_at)
        columns = self.columns
        if self.chain.made is not None:
            cp, mp = columns.parent, made.parent
            if columns.created_at != made.created_at:  # the same moment: PostgreSQL gives it in UTC
                found.append(_differs("created_at", columns.created_at, made.created_at))
            pairs: list[tuple[HeaderColumn, Any, Any]] = [
                ("id", columns.conversation_id, made.conversation_id),
                ("modes", columns.modes, made.modes),
                ("metadata", columns.metadata, made.metadata),
                ("parent_id", cp and cp.conversation_id, mp and mp.conversation_id),
                ("parent_entry", cp and cp.entry_id, mp and mp.entry_id),
                ("parent_hash", cp and cp.hash, mp and mp.hash),
            ]
            found += [_differs(c, stored, trail) for c, stored, trail in pairs if _encode(stored) != _encode(trail)]
        mode, prompt, branch = live
        lives: list[tuple[HeaderColumn, Any, Any]] = [
            ("system_prompt", columns.system_prompt, prompt),
            ("mode", columns.mode, mode),
            ("branch", columns.branch, branch),
        ]
        found += [_differs(c, stored, trail) for c, stored, trail in lives if stored != trail]
        return found

    def _head(self, row_at: RowAt) -> list[Mismatch]:
        """``head_seq`` names the last entry and ``head_hash`` is the trail's last hash."""
        seq, links = self.head_seq, self.columns.chain
        if seq >= 0 and row_at(seq) is None:
            return [Mismatch("head_seq", f"head_seq: stored {seq}, the trail has no entry at that seq")]
        if links and links[-1].at > seq:
            expected = links[-1].hash
        else:
            last = row_at(seq) if seq >= 0 else None
            expected = last[1] if last is not None else GENESIS
        if self.head_hash != expected:
            return [_differs("head_hash", self.head_hash, expected)]
        return []

    def _link(self, made: AuditHeader, row_at: RowAt) -> list[Mismatch]:
        """The conversation's own link: recomputed from the header as made, and the first
        entry after it chained to it."""
        links = made.chain
        own = links[-1]
        if len(links) > 1 and links[-2].at == own.at:
            prev: str | None = links[-2].hash
        elif own.at == 0:
            prev = GENESIS
        else:
            before = row_at(own.at - 1)
            prev = before[1] if before is not None else None
        if prev is None or header_link(made, prev) != own.hash:
            what = "the header it keeps" if self.chain is not None and self.chain.made is not None else "the columns"
            covered = "" if what == "the header it keeps" else " (id, created_at, modes, parent_*, metadata)"
            return [Mismatch("chain", f"chain: its link at seq {own.at} is not the hash of {what}{covered}")]
        after = row_at(own.at)
        if after is not None and chain_hash(own.hash, after[0]) != after[1]:
            return [Mismatch("chain", f"chain: the entry at seq {own.at} does not chain to its link")]
        return []

    def _unchained(self, row_at: RowAt) -> list[Mismatch]:
        """A row without ``chain``: its trail must begin at the genesis hash (else the column
        was emptied)."""
        first = row_at(0)
        if (first is not None and chain_hash(GENESIS, first[0]) != first[1]) or (
            first is None and self.head_hash != GENESIS
        ):
            return [Mismatch("chain", "chain: empty, but the trail's first hash is not chained to the genesis hash")]
        return []


def accepted(accept_header: Iterable[HeaderColumn]) -> frozenset[HeaderColumn]:
    """The columns named by ``accept_header``, checked (``TypeError`` / ``ValueError`` naming
    the argument)."""
    if isinstance(accept_header, (str, bytes)):
        raise TypeError(f"accept_header takes column names, e.g. ('system_prompt',); got the string {accept_header!r}")
    names = frozenset(accept_header)
    unknown = sorted(str(n) for n in names if n not in HEADER_COLUMNS)
    if unknown:
        raise ValueError(
            f"accept_header: no header column {', '.join(unknown)} (the columns: {', '.join(HEADER_COLUMNS)})"
        )
    return names


def refuse(
    found: Sequence[Mismatch], accept: frozenset[HeaderColumn], *, conversation_id: str, url: str
) -> tuple[str, ...]:
    """Raise ``HeaderMismatchError`` for the mismatches not accepted; the details of the ones
    accepted (what the conversation's ``verify()`` names)."""
    refused = [m for m in found if m.column not in accept]
    if refused:
        names = tuple(dict.fromkeys(m.column for m in refused))
        said = "; ".join(m.detail for m in refused)
        raise HeaderMismatchError(
            f"conversation {conversation_id!r} in {url}: its stored header is not what its audit trail says: {said}. "
            f"A column was changed behind the store's back; accept_header={names!r} reads it as stored "
            "(verify() still names it)",
            conversation_id=conversation_id,
            columns=names,
            details=tuple(m.detail for m in refused),
        )
    return tuple(m.detail for m in found)


def _differs(column: HeaderColumn, stored: Any, trail: Any) -> Mismatch:
    return Mismatch(column, f"{column}: stored {_clip(stored)}, the trail says {_clip(trail)}")


def _encode(value: Any) -> bytes:
    return msgspec.json.encode(value)


def _clip(value: Any, width: int = 60) -> str:
    text = repr(value.isoformat() if isinstance(value, dt.datetime) else value)
    return text if len(text) <= width else text[: width - 1] + "…"
