"""``msgwire convert IN --to D2``: a session or a request body, from one format to another.

Formats: ``canonical`` (msgwire's session envelope; legacy shapes are read too) and every
request dialect of ``msgwire.formats``. A body goes through the whole canonical request
(``formats.read_request``, then ``formats.convert_request``): tools, tool choice, sampling,
limits, structured output, reasoning and metadata are carried where the target has them; every
lossy step of the way out is listed on standard error (the loss report). The input format is detected when
``--from`` is absent (see ``detect.request_kind``). The result goes to ``-o FILE`` or standard
output, as the compact JSON msgwire writes (indented and coloured on a terminal).

Exit codes: 0 converted, 1 the input is not what its format defines (the error names the byte
offset or JSON path), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json

from ..codec import dumps, loads
from ..errors import DecodeError
from ..formats import DIALECTS, convert_request, read_request
from ..types import Loss, LossReport, Request, Session
from .commands import SUMMARIES
from .detect import request_kind
from .inputs import read_all, write_output
from .render import console, loss_table

CANONICAL = "canonical"
FORMATS: tuple[str, ...] = (CANONICAL, *DIALECTS)


def read_input(data: bytes, kind: str) -> Request:
    """The request of ``data`` read as ``kind`` (``canonical``: a session, its conversation only)."""
    if kind == CANONICAL:
        session = loads(data)
        if not isinstance(session, Session):
            raise DecodeError(f"expected a session, got one {type(session).__name__}", path="$")
        return Request(messages=session.messages, system_prompt=session.system_prompt)
    return read_request(data, kind)  # type: ignore[arg-type]  # one of DIALECTS (argparse choices)


def _settings_dropped(request: Request) -> LossReport:
    """A session envelope keeps the conversation: every setting of the request is reported."""
    empty = Request()
    entries = [
        Loss(message=None, block=None, kind=name, action="drop", reason="a canonical session keeps no request settings")
        for name in request.__struct_fields__
        if name not in ("messages", "system_prompt") and getattr(request, name) != getattr(empty, name)
    ]
    return LossReport(entries=entries)


def write_format(request: Request, target: str) -> tuple[bytes, LossReport]:
    """``request`` as ``target``, with the loss report of the conversion."""
    if target == CANONICAL:
        session = Session(messages=request.messages, system_prompt=request.system_prompt)
        return dumps(session), _settings_dropped(request)
    converted = convert_request(request, target)  # type: ignore[arg-type]  # one of DIALECTS
    return converted.body, converted.report


def convert(data: bytes, source: str | None, target: str) -> tuple[bytes, LossReport, Request, str]:
    """The converted bytes, the loss report, the request in between and the input's format."""
    if source is None:
        try:
            body = json.loads(data)
        except json.JSONDecodeError as exc:
            raise DecodeError(f"the input is not JSON: {exc.msg} (byte {exc.pos})", offset=exc.pos) from None
        except UnicodeDecodeError as exc:
            raise DecodeError(f"the input is not UTF-8 (byte {exc.start})", offset=exc.start) from None
        source = request_kind(body)
    request = read_input(data, source)
    out, losses = write_format(request, target)
    return out, losses, request, source


def run(args: argparse.Namespace) -> int:
    data = read_all(args.input)
    out, losses, session, source = convert(data, args.source, args.to)
    err = console(stderr=True)
    if losses:
        title = f"loss report, {source} → {args.to}: {len(losses)} lossy step(s)"
        err.print(loss_table(losses, session.messages, title))
    if args.output is None and console().is_terminal:
        console().print_json(out.decode())
    else:
        write_output(out + (b"\n" if args.output is None else b""), args.output)
        if args.output is not None:
            err.print(f"wrote {args.output}: {len(session.messages)} messages as {args.to} ({len(out):,} bytes)")
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "convert",
        help=SUMMARIES["convert"],
        description="Convert a session (the canonical envelope) or a request body of a dialect to another format. "
        "Every lossy step is listed on standard error (the loss report).",
        epilog="Exit codes: 0 converted, 1 the input is not what its format defines, 2 a usage error.",
    )
    parser.add_argument("input", metavar="IN", help="a JSON file, or - for standard input")
    parser.add_argument("--from", dest="source", choices=FORMATS, help="the input's format (default: detected)")
    parser.add_argument("--to", required=True, choices=FORMATS, help="the output's format")
    parser.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    parser.set_defaults(run=run)
