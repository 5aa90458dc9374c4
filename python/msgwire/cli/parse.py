"""``msgwire parse FILE|-``: decode a recorded provider stream, as a person would watch it.

The file is read in 64 KiB chunks through one ``msgwire.Decoder`` and never held whole, so a
100 MB recording runs in bounded memory (what grows is the assembled message itself). Output:

- a terminal: the live view while the bytes are decoded (``--live``), then the assembled message;
- not a terminal: the assembled message only;
- ``--json``: the canonical JSON of the assembled message (of the partial one when it failed);
- ``--events``: one JSON event per line, as it is decoded.

Exit codes: 0 decoded, 1 the stream failed (malformed, truncated, a provider error: the error,
its byte offset and the partial message are shown), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import msgspec
from rich.console import Console
from rich.live import Live
from rich.text import Text

from ..codec import dumps
from ..errors import StreamError
from ..stream import Decoder
from ..types import AssistantMessage, Diagnostic, Dialect, Event
from .commands import SUMMARIES
from .detect import SNIFF_SIZE, STREAM_DIALECTS, sniff_stream, stream_dialect
from .inputs import open_input, read_chunks
from .live import LiveView
from .render import console, diagnostics_table, error_text, message_panel

REFRESH_SECONDS = 1 / 15  # how often the live view is redrawn


@dataclass
class Outcome:
    """What decoding one stream gave: the message (partial when it failed) and how it went."""

    dialect: Dialect
    message: AssistantMessage
    diagnostics: list[Diagnostic]
    failure: StreamError | None
    size: int
    events: int
    seconds: float
    paced: bool = False  # replayed at a readable speed: the time is the replay's

    def summary(self, name: str) -> Text:
        rate = f", {self.size / self.seconds / 1e6:,.0f} MB/s" if self.seconds > 0 and self.size > 1e6 else ""
        counted = f", {self.events:,} events" if self.events else ""
        return Text(
            f"{name}: {self.dialect}, {self.size:,} bytes{counted}, "
            + (
                f"replayed in {self.seconds:,.1f} s" if self.paced else f"decoded in {self.seconds * 1e3:,.1f} ms{rate}"
            ),
            style="dim",
        )


def with_head(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first bytes, enough to tell the dialect (up to ``SNIFF_SIZE``, or all of a short
    stream), and every chunk again, those first bytes included."""
    head: list[bytes] = []
    size = 0
    for chunk in chunks:
        head.append(chunk)
        size += len(chunk)
        if size >= SNIFF_SIZE or sniff_stream(b"".join(head)) is not None:
            break
    first = b"".join(head)
    return first, _chain(first, chunks)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def decode(
    chunks: Iterable[bytes], dialect: Dialect, on_events: Callable[[list[Event]], None] | None = None
) -> Outcome:
    """Feed every chunk to one decoder; ``on_events`` gets each batch of events (without it,
    the decoder builds no event objects: the fast path)."""
    decoder = Decoder(dialect, events=on_events is not None)
    handle = on_events or (lambda _events: None)
    counted = 0
    start = time.perf_counter()
    failure: StreamError | None = None
    size = 0
    try:
        for chunk in chunks:
            size += len(chunk)
            events = decoder.feed(chunk)
            counted += len(events)
            handle(events)
        events = decoder.end()
        counted += len(events)
        handle(events)
    except StreamError as exc:
        failure = exc
        counted += len(exc.events)
        handle(exc.events)
    seconds = time.perf_counter() - start
    message = failure.partial_message if failure is not None and failure.partial_message else decoder.message()
    return Outcome(dialect, message, decoder.diagnostics, failure, size, counted, seconds)


def watch(chunks: Iterable[bytes], dialect: Dialect, out: Console, title: str, pace: float = 0.0) -> Outcome:
    """Decode with the live view on ``out``; ``pace`` seconds between events replays a
    recording at a speed a person can follow."""
    view = LiveView(title)
    last = 0.0
    with Live(view, console=out, auto_refresh=False, transient=True, vertical_overflow="visible") as live:

        def show(events: list[Event]) -> None:
            nonlocal last
            for event in events:
                view.add(event)
                if pace:
                    live.refresh()
                    time.sleep(pace)
            now = time.monotonic()
            if now - last >= REFRESH_SECONDS:
                live.refresh()
                last = now

        outcome = decode(chunks, dialect, show)
    outcome.paced = pace > 0
    return outcome


def report(outcome: Outcome, out: Console, name: str, max_lines: int | None = None) -> None:
    """The assembled (or partial) message, its diagnostics and the failure, as rendered output."""
    out.print(message_panel(outcome.message, max_lines=max_lines))
    if outcome.diagnostics:
        out.print(diagnostics_table(outcome.diagnostics))
    if outcome.failure is not None:
        out.print(error_text(outcome.failure))
        kept = outcome.message
        out.print(f"  the partial message is kept: {len(kept.content)} block(s), stop_reason={kept.stop_reason}")
    out.print(outcome.summary(name))


def _plain_problems(outcome: Outcome) -> None:
    """Diagnostics and the failure on standard error, when standard output carries JSON."""
    err = console(stderr=True)
    for diagnostic in outcome.diagnostics:
        err.print(f"diagnostic {diagnostic.code} at byte {diagnostic.offset}: {diagnostic.message}", markup=False)
    if outcome.failure is not None:
        err.print(error_text(outcome.failure))
        err.print(f"  the partial message is kept ({len(outcome.message.content)} block(s))", markup=False)


def _write_events(events: list[Event]) -> None:
    write = sys.stdout.buffer.write
    for event in events:
        write(msgspec.json.encode(event) + b"\n")


def run(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    out = console()
    with open_input(args.file) as source:
        head, chunks = with_head(read_chunks(source))
        dialect: Dialect = args.dialect or stream_dialect(head, name)
        if args.events:
            outcome = decode(chunks, dialect, _write_events)
            sys.stdout.buffer.flush()
            _plain_problems(outcome)
        elif args.json:
            outcome = decode(chunks, dialect)
            data = dumps(outcome.message)
            if out.is_terminal:
                out.print_json(data.decode())
            else:
                sys.stdout.buffer.write(data + b"\n")
            _plain_problems(outcome)
        else:
            live = args.live if args.live is not None else out.is_terminal
            outcome = watch(chunks, dialect, out, name, args.pace) if live else decode(chunks, dialect)
            report(outcome, out, name)
    return 1 if outcome.failure is not None else 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "parse",
        help=SUMMARIES["parse"],
        description="Decode a recorded provider stream (SSE or NDJSON), read in 64 KiB chunks: live on a terminal, "
        "then the assembled message, its diagnostics and any failure with its byte offset.",
        epilog="Exit codes: 0 decoded, 1 the stream failed (the partial message is shown), 2 a usage error.",
    )
    parser.add_argument("file", metavar="FILE|-", help="the recording, or - for standard input")
    parser.add_argument("--dialect", choices=STREAM_DIALECTS, help="the provider dialect (default: detected)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the canonical JSON of the assembled message")
    output.add_argument("--events", action="store_true", help="print one JSON event per line")
    output.add_argument(
        "--live",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the message growing while it is decoded (default: on a terminal)",
    )
    parser.add_argument(
        "--pace", type=float, default=0.0, metavar="SECONDS", help="wait between events in the live view (a replay)"
    )
    parser.set_defaults(run=run)
