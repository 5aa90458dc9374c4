"""``msgwire sessions``: the conversations ``msgwire chat`` stored, the latest first (id,
started, last activity, messages, first words), and where they are stored.

The store is ``--store URL`` (``sqlite:///path.db``, a plain path, or
``postgresql://user@host/db``), else ``MSGWIRE_STORE``, else ``sessions.db`` in the user's data
directory: ``$XDG_DATA_HOME/msgwire/``, else ``~/.local/share/msgwire/`` (made on first use,
readable by its owner only). ``msgwire chat --resume ID`` continues one; ``msgwire audit --store
URL ID`` shows its trail. The end of an id is enough when it ends no other (ids begin with the
time they were made, so their last characters tell them apart): the table shows it in bold, at
least 4 characters; the start of an id works too, when it begins no other.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

from ..errors import MsgwireError, StoreNotFoundError
from ..types import UserMessage
from .commands import SUMMARIES
from .inputs import UsageError
from .render import clip, console, plain_help
from .shortids import matching, shortest_end

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
    "store_flag",
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


def open_chat_store(location: str, *, create: bool = True) -> Store:
    """The store at ``location`` (the default one's folder made when missing); one that cannot
    be opened is a ``UsageError`` naming it (without its password). ``create=False``, for the
    commands that only read: a store that does not exist is a ``UsageError`` saying so, and
    nothing is made (a mistyped path gets no empty database)."""
    from ..harness.store import open_store, redacted  # the harness is imported by the commands that use it

    try:
        if create and location == str(default_store()):
            default_store().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return open_store(location, create=create)
    except StoreNotFoundError as exc:
        raise UsageError(str(exc)) from None
    except (MsgwireError, ValueError, OSError) as exc:
        shown = redacted(location)
        raise UsageError(f"cannot open the store {shown}: {str(exc).removeprefix(shown + ': ')}") from None


def store_flag(store: Store, *, always: bool = False) -> tuple[str, str]:
    """What a command to copy needs to reach ``store`` again: ``" --store URL"`` (shell-quoted;
    empty for the store used without ``--store``, ``MSGWIRE_STORE``'s or the default, unless
    ``always``) and a note for the end of the hint when the URL shown lacks the password
    the store was opened with (never shown: the command then works once the password is back,
    in the URL or where libpq finds one, PGPASSWORD or ~/.pgpass)."""
    from ..harness.store import url_of
    from ..harness.store.redact import redacted_conninfo

    try:
        implicit = url_of(store_location(None))
    except ValueError:  # MSGWIRE_STORE names no store: --store is needed
        implicit = None
    if store.url == implicit and not always:
        return "", ""
    conninfo = getattr(store, "conninfo", None)  # a PostgreSQL store's, the password kept
    hidden = isinstance(conninfo, str) and redacted_conninfo(conninfo) != conninfo
    return f" --store {shlex.quote(store.url)}", "; add the password, left out of the URL here" if hidden else ""


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
    """The conversation ``wanted`` names: its id, or the first or the last characters of
    exactly one id in the store (``shortids``); ``None`` (or empty): msgwire chat's latest.
    ``UsageError`` when there is none or the characters begin or end several."""
    if not wanted:
        latest = chat_conversations(store)
        if not latest:
            raise UsageError(f"no conversation of msgwire chat in {store.url}")
        return latest[0]
    try:
        return store.info(wanted)
    except KeyError:
        pass
    everything = {info.id: info for info in store.conversations()}
    matches = matching(everything, wanted)
    if len(matches) == 1:
        return everything[matches[0]]
    flag, note = store_flag(store)
    if not matches:
        raise UsageError(f"no conversation {wanted!r} in {store.url} (msgwire sessions{flag} lists them{note})")
    ids = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise UsageError(
        f"{wanted!r} begins or ends {len(matches)} conversation ids in {store.url}: {ids} (ids begin with the "
        f"time they were made: their last characters tell them apart; msgwire sessions{flag} shows how many{note})"
    )


def _when(moment: dt.datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _row(store: Store, info: ConversationInfo, end: str) -> list[Text]:
    """The table's row of ``info``, the ``end`` of its id that names it in bold."""
    messages = store.messages(info.id)
    said = next((m.text for m in messages if isinstance(m, UserMessage) and m.source == "direct" and m.text), "")
    fork = " (fork)" if info.parent is not None else ""
    cid = Text.assemble(info.id.removesuffix(end), (end, "bold"), fork)
    texts = (_when(info.created_at), _when(last_activity(info)), str(len(messages)), clip(said, 60))
    return [cid, *(Text(text) for text in texts)]


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise UsageError(f"--limit takes 0 (every one) or more, got {args.limit}")
    location = store_location(args.store)
    out = console()
    if never_used(location):
        out.print(f"no conversations yet: msgwire chat stores them in {location}")
        return 0
    store = open_chat_store(location, create=False)
    try:
        everything = store.conversations()
        chats = latest_first([info for info in everything if info.agent == CHAT_AGENT])
        shown = chats if args.limit == 0 else chats[: args.limit]
        table = Table(box=box.SIMPLE_HEAD, title=f"msgwire chat's conversations in {store.url}", title_justify="left")
        for column in ("id", "started", "last activity", "messages"):
            table.add_column(column, justify="right" if column == "messages" else "left", no_wrap=True)
        table.add_column("first words")
        ids = [info.id for info in everything]
        ends = {info.id: shortest_end(info.id, ids) for info in shown}
        for info in shown:
            table.add_row(*_row(store, info, ends[info.id]))
        out.print(table if chats else f"no conversations of msgwire chat in {store.url}")
        if shown:
            flag, note = store_flag(store)
            resume = f"msgwire chat{flag} --resume {ends[shown[0].id]}"
            out.print(
                Text(f"({resume} continues the latest: an id's last characters are enough{note})", "dim"),
                soft_wrap=True,
            )
        if len(shown) < len(chats):
            out.print(Text(f"the latest {len(shown)} of {len(chats)}: --limit 0 lists every one", "dim"))
        others = len(everything) - len(chats)
        if others:
            flag, note = store_flag(store, always=True)
            hint = f"msgwire audit{flag} ID shows one{note}"
            out.print(Text(f"{others} other conversation(s) in this store ({hint})", "dim"), soft_wrap=True)
    finally:
        store.close()
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "sessions",
        help=SUMMARIES["sessions"],
        description=plain_help(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--store", metavar="URL", help=f"the store (default: MSGWIRE_STORE, else {default_store()})")
    parser.add_argument("--limit", type=int, default=20, help="list the latest N (20; 0 lists every one)")
    parser.set_defaults(run=run)
