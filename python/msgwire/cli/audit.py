"""``msgwire audit FILE``: an exported audit trail (``Conversation.export_audit``, ``/save`` in
``msgwire chat``; JSON or JSON Lines) as a readable timeline (decisions, who and why, durations,
denials, errors), then its hash chain verified. Exit code 0 when the chain holds, 1 when it is
broken (the first entry changed, removed or reordered is named) or the file is no audit trail."""

from __future__ import annotations

import argparse
from pathlib import Path

from .inputs import UsageError
from .render import console

__all__ = ["add_parser", "run"]


def run(args: argparse.Namespace) -> int:
    from ..harness import Conversation  # the harness is imported by the commands that use it
    from .timeline import show

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    conversation = Conversation.load_audit(path)
    return 0 if show(conversation, console(), head=args.head) else 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "audit",
        help="show an exported audit trail as a timeline and verify its hash chain",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="an audit export (JSON or JSON Lines)")
    parser.add_argument("--head", help="the last entry's hash as kept elsewhere: a cut or rewritten tail is caught too")
    parser.set_defaults(run=run)
