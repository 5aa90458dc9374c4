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
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import MissingExtraError, MsgwireError
from . import audit, bench, chat, convert, demo, parse, sessions, transcode
from .inputs import NotReadable, UsageError

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="msgwire",
        description="Typed LLM conversation messages: parse provider streams, convert formats, compare speed.",
        epilog="Exit codes: 0 success, 1 the input failed (with its byte offset or JSON path), 2 a usage error.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (parse, convert, transcode, chat, sessions, audit, bench, demo):
        module.add_parser(commands)
    return parser


def _where(error: MsgwireError) -> str:
    offset = getattr(error, "offset", None)
    path = getattr(error, "path", None)
    if offset is not None and f"byte {offset}" not in str(error):
        return f" (byte {offset})"
    if path is not None and path != "$" and path not in str(error):
        return f" (at {path})"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
