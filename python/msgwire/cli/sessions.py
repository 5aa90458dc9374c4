"""``msgwire sessions``: the conversations ``msgwire chat`` stored, the latest first (id,
started, last activity, messages, first words), and where they are stored.

The store is ``--store URL`` (``sqlite:///path.db``, a plain path, or
``postgresql://user@host/db``), else ``MSGWIRE_STORE``, else ``sessions.db`` in the user's data
directory: ``$XDG_DATA_HOME/msgwire/``, else ``~/.local/share/msgwire/`` (made on first use,
readable by its owner only). ``msgwire chat --resume ID`` continues one (the first characters of
an id are enough when they begin no other); ``msgwire audit --store URL ID`` shows its trail.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

from ..errors import MsgwireError
from ..types import UserMessage
from .inputs import UsageError
from .render import clip, console, plain_help

if TYPE_CHECKING:
    from ..harness.store import ConversationInfo, Store

__all__ = [
    "CHAT_AGENT",
    "add_parser",
    "chat_conversations",
    "data_dir",
    "default_store",
    "find",
    "last_activity",
    "never_used",
    "open_chat_store",
    "run",
    "store_location",
]

CHAT_AGENT = "msgwire chat"
"""The ``agent`` msgwire chat stores its conversations under (a store may hold others' too)."""
STORE_FILE = "sessions.db"


def data_dir() -> Path:
    """The user's data directory for msgwire, by the XDG rule: ``$XDG_DATA_HOME/msgwire`` when
    that is an absolute path (the rule ignores a relative one), else ``~/.local/share/msgwire``."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "msgwire"


def default_store() -> Path:
    """Where msgwire chat keeps its conversations when told nowhere else."""
    return data_dir() / STORE_FILE


def store_location(given: str | None) -> str:
    """The store to use: ``given`` (``--store``), else ``MSGWIRE_STORE``, else ``default_store()``."""
    return given or os.environ.get("MSGWIRE_STORE") or str(default_store())


def open_chat_store(location: str) -> Store:
    """The store at ``location`` (the default one's folder made when missing); one that cannot
    be opened is a ``UsageError`` naming it."""
    from ..harness.store import open_store  # the harness is imported by the commands that use it

    try:
        if location == str(default_store()):
            default_store().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return open_store(location)
    except (MsgwireError, ValueError, OSError) as exc:
        raise UsageError(f"cannot open the store {location}: {exc}") from None


def never_used(location: str) -> bool:
    """The default store, not made yet: nothing was stored (a listing makes no file)."""
    return location == str(default_store()) and not default_store().exists()


def last_activity(info: ConversationInfo) -> dt.datetime:
    """The later of its last entry and its making (a fork is made after the entries it keeps)."""
    return max(info.updated_at, info.created_at)


def chat_conversations(store: Store) -> list[ConversationInfo]:
    """msgwire chat's conversations in the store, the latest activity first."""
    return latest_first(store.conversations(agent=CHAT_AGENT))


def latest_first(infos: list[ConversationInfo]) -> list[ConversationInfo]:
    return sorted(infos, key=last_activity, reverse=True)


def find(store: Store, wanted: str | None) -> ConversationInfo:
    """The conversation ``wanted`` names: its id, or the first characters of exactly one id in
    the store; ``None`` (or empty): msgwire chat's latest. ``UsageError`` when there is none
    or the characters begin several."""
    if not wanted:
        latest = chat_conversations(store)
        if not latest:
            raise UsageError(f"no conversation of msgwire chat in {store.url}")
        return latest[0]
    try:
        return store.info(wanted)
    except KeyError:
        pass
    matches = [info for info in store.conversations() if info.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no conversation {wanted!r} in {store.url} (msgwire sessions lists them)")
    ids = ", ".join(info.id for info in matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise UsageError(f"{wanted!r} begins {len(matches)} conversation ids in {store.url}: {ids}")


def _when(moment: dt.datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _row(store: Store, info: ConversationInfo) -> tuple[str, ...]:
    messages = store.messages(info.id)
    said = next((m.text for m in messages if isinstance(m, UserMessage) and m.source == "direct" and m.text), "")
    fork = " (fork)" if info.parent is not None else ""
    return info.id + fork, _when(info.created_at), _when(last_activity(info)), str(len(messages)), clip(said, 60)


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise UsageError(f"--limit takes 0 (every one) or more, got {args.limit}")
    location = store_location(args.store)
    out = console()
    if never_used(location):
        out.print(f"no conversations yet: msgwire chat stores them in {location}")
        return 0
    store = open_chat_store(location)
    try:
        everything = store.conversations()
        chats = latest_first([info for info in everything if info.agent == CHAT_AGENT])
        shown = chats if args.limit == 0 else chats[: args.limit]
        table = Table(box=box.SIMPLE_HEAD, title=f"msgwire chat's conversations in {store.url}", title_justify="left")
        for column in ("id", "started", "last activity", "messages"):
            table.add_column(column, justify="right" if column == "messages" else "left", no_wrap=True)
        table.add_column("first words")
        for info in shown:
            table.add_row(*(Text(cell) for cell in _row(store, info)))
        out.print(table if chats else f"no conversations of msgwire chat in {store.url}")
        if len(shown) < len(chats):
            out.print(Text(f"the latest {len(shown)} of {len(chats)}: --limit 0 lists every one", "dim"))
        others = len(everything) - len(chats)
        if others:
            out.print(Text(f"{others} other conversation(s) in this store (msgwire audit --store shows one)", "dim"))
    finally:
        store.close()
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "sessions",
        help="the conversations msgwire chat stored: id, started, last activity, messages, first words",
        description=plain_help(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--store", metavar="URL", help=f"the store (default: MSGWIRE_STORE, else {default_store()})")
    parser.add_argument("--limit", type=int, default=20, help="list the latest N (20; 0 lists every one)")
    parser.set_defaults(run=run)
