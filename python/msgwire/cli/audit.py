"""``msgwire audit FILE``: an exported audit trail (``Conversation.export_audit``, ``/save`` in
``msgwire chat``; JSON or JSON Lines) as a readable timeline (decisions, who and why, durations,
denials, errors), then its hash chain verified. ``msgwire audit --store URL [ID]`` does the same
for a stored conversation (``msgwire sessions`` lists them; the last characters of an id are
enough, or its first; without an id, the latest of ``msgwire chat``), its stored header columns
checked against the trail too. Exit code 0 when the chain holds, 1 when it is broken (the first
entry changed, removed or reordered is named, or the header column the trail does not vouch for)
or the file is no audit trail, 2 when there is no such file or conversation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MsgwireError
from .commands import SUMMARIES
from .inputs import NotReadable, UsageError
from .render import console, plain_help

if TYPE_CHECKING:
    from ..harness import Conversation

__all__ = ["add_parser", "run"]

_NOT_A_TRAIL = "not an audit trail: "


def run(args: argparse.Namespace) -> int:
    from .timeline import show

    if args.store is not None:
        conversation = _stored(args.store, args.source)
    elif args.source is None:
        raise UsageError("which trail? msgwire audit FILE, or msgwire audit --store URL ID")
    else:
        conversation = _load(Path(args.source))
    return 0 if show(conversation, console(), head=args.head) else 1


def _load(path: Path) -> Conversation:
    """The trail in the file (``NotReadable`` when it holds none)."""
    from ..harness import Conversation  # the harness is imported by the commands that use it

    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    try:
        return Conversation.load_audit(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except MsgwireError as exc:  # not JSON, not an object, no trail's fields
        raise NotReadable(f"{_NOT_A_TRAIL}{path}: {str(exc).removeprefix(_NOT_A_TRAIL)}") from exc


def _stored(location: str, wanted: str | None) -> Conversation:
    from ..harness.store import HEADER_COLUMNS
    from .sessions import find, open_chat_store

    store = open_chat_store(location, create=False)
    try:
        # every column as stored: a header column its trail does not vouch for is shown as a failed check
        return store.load(find(store, wanted).id, accept_header=HEADER_COLUMNS)
    finally:
        store.close()


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "audit",
        help=SUMMARIES["audit"],
        description=plain_help(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "source", nargs="?", metavar="FILE|ID", help="an audit export (JSON or JSON Lines), or with --store an id"
    )
    parser.add_argument("--store", metavar="URL", help="read the conversation ID from this store (msgwire sessions)")
    parser.add_argument("--head", help="the last entry's hash as kept elsewhere: a cut or rewritten tail is caught too")
    parser.set_defaults(run=run)
