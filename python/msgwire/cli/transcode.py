"""``msgwire transcode FILE|- --to D``: a recorded stream rewritten in another dialect's wire
format, written as it is read (``msgwire.transcode``: what a gateway does)."""

from __future__ import annotations

import argparse
import sys

from ..errors import StreamError
from ..transcode import transcode
from ..types import Dialect
from .commands import SUMMARIES
from .detect import STREAM_DIALECTS, stream_dialect
from .inputs import open_input, read_chunks
from .parse import with_head


def run(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    write = sys.stdout.buffer.write
    with open_input(args.file) as source:
        head, chunks = with_head(read_chunks(source))
        dialect: Dialect = args.dialect or stream_dialect(head, name)
        try:
            for output in transcode(chunks, dialect, args.to):
                write(output)
                sys.stdout.buffer.flush()
        except StreamError as failure:
            # the target's error frame is already written: the client of a gateway sees it too
            print(f"msgwire transcode: {type(failure).__name__}: {failure}", file=sys.stderr)
            return 1
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "transcode",
        help=SUMMARIES["transcode"],
        description="Rewrite a recorded provider stream (read in 64 KiB chunks) in another dialect's wire format, "
        "written as it is read. A failing source ends the output with the target's error frame.",
        epilog="Exit codes: 0 rewritten, 1 the source stream failed (its error frame was written), 2 a usage error.",
    )
    parser.add_argument("file", metavar="FILE|-", help="the recording, or - for standard input")
    parser.add_argument("--dialect", choices=STREAM_DIALECTS, help="the source dialect (default: detected)")
    parser.add_argument("--to", required=True, choices=STREAM_DIALECTS, help="the target dialect")
    parser.set_defaults(run=run)
