"""The ``msgwire`` command (also ``python -m msgwire``).

- ``msgwire parse FILE|-``: decode a recorded provider stream, live, then the assembled message;
- ``msgwire convert IN --to D``: a session or request body between the canonical envelope and
  every dialect, with the loss report;
- ``msgwire transcode FILE|- --to D``: a recorded stream rewritten in another dialect's format;
- ``msgwire bench``: msgwire beside the installed peers, on the same bytes;
- ``msgwire chat``: a live agent session (streamed answers, tool calls approved one by one),
  stored as it goes (``--resume`` continues one);
- ``msgwire sessions``: the conversations ``msgwire chat`` stored;
- ``msgwire audit FILE`` (or ``--store URL ID``): an audit trail as a timeline, its hash chain
  verified;
- ``msgwire demo``: all of it on the bundled examples (``make demo``).

Exit codes: 0 success, 1 the input failed (a malformed or cut stream, a body of the wrong
shape: the error names the byte offset or JSON path), 2 a usage error (a missing file, an
unknown or undetectable dialect, an extra not installed: the error names its pip install).

Only the module of the command named is imported (``commands.py``): ``msgwire --help`` loads no
command, no rich and no wire layer.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Collection, Sequence

from ..errors import MissingExtraError, MsgwireError
from .commands import SUMMARIES
from .inputs import NotReadable, UsageError

__all__ = ["main"]


def build_parser(full: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The command's parser. ``full``: the commands whose own parsers (options, description) are
    built, their modules imported (every one by default); the others are listed by name and
    summary alone, as ``msgwire --help`` shows them."""
    parser = argparse.ArgumentParser(
        prog="msgwire",
        description="Typed LLM conversation messages: parse provider streams, convert formats, compare speed.",
        epilog="Exit codes: 0 success, 1 the input failed (with its byte offset or JSON path), 2 a usage error.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, summary in SUMMARIES.items():
        if full is None or name in full:
            importlib.import_module(f".{name}", __name__).add_parser(commands)
        else:
            commands.add_parser(name, help=summary)
    return parser


def _named(argv: Sequence[str]) -> set[str]:
    """The command ``argv`` names: its first argument that is not an option (the command's
    parser takes only ``-h`` before it)."""
    return {next((arg for arg in argv if not arg.startswith("-")), "")} & SUMMARIES.keys()


def _where(error: MsgwireError) -> str:
    offset = getattr(error, "offset", None)
    path = getattr(error, "path", None)
    if offset is not None and f"byte {offset}" not in str(error):
        return f" (byte {offset})"
    if path is not None and path != "$" and path not in str(error):
        return f" (at {path})"
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_named(argv))
    args = parser.parse_args(argv)
    prog = f"msgwire {args.command}"
    try:
        code: int = args.run(args)
    except (UsageError, MissingExtraError) as exc:  # an extra not installed: a usage error, said in one line
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except NotReadable as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except MsgwireError as exc:  # bad input the command could not get past
        print(f"{prog}: {type(exc).__name__}: {exc}{_where(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `msgwire parse --events x.sse | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code
