"""The ``msgwire`` command. ``demo`` shows the library on the bundled examples."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from . import _core
from .codec import dumps, loads
from .errors import MsgwireError, StreamError
from .stream import assemble, stream
from .types import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
)
from .validate import validate


def _examples_dir() -> Path:
    """examples/ of a source checkout: next to the current directory or to this package."""
    for candidate in (Path.cwd() / "examples", Path(__file__).resolve().parents[2] / "examples"):
        if (candidate / "session.json").is_file():
            return candidate
    raise MsgwireError("examples/ not found: run the demo from a msgwire source checkout")


def _clip(text: str, width: int = 96) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def describe_block(block: Any) -> str:
    if isinstance(block, TextBlock):
        return f"text      {_clip(block.text)}"
    if isinstance(block, ThinkingBlock):
        signed = " (signed)" if block.signature else ""
        return f"thinking  {_clip(block.thinking or '[redacted]')}{signed}"
    if isinstance(block, ToolCallBlock):
        return f"tool_call {block.name}({_clip(block.arguments, 60)}) id={block.id} [{block.approval}]"
    if isinstance(block, FileReferenceBlock):
        lines = f":{block.start_line}-{block.end_line}" if block.start_line else ""
        return f"file      {block.path}{lines} [{block.status}]"
    if isinstance(block, ImageBlock):
        seen = f" -> {block.recognized_text!r} ({block.mode_used}, {block.confidence})" if block.recognized_text else ""
        return f"image     {block.source.type}{seen}"
    if isinstance(block, MCPResourceBlock):
        return f"mcp       {block.server_name} {block.resource_uri}"
    if isinstance(block, UnknownBlock):
        return f"unknown   type={block.type!r} ({len(block.raw)} bytes kept as-is)"
    return repr(block)


def describe_message(message: Any) -> list[str]:
    if isinstance(message, UnknownMessage):
        return [f"unknown message type={message.type!r}, {len(message.raw)} bytes kept as-is"]
    stamp = message.timestamp.strftime("%H:%M:%S")
    head = f"{message.type:<14} {stamp}"
    if isinstance(message, AssistantMessage):
        usage = message.usage
        tokens = f" in={usage.input_tokens} out={usage.output_tokens}" if usage else ""
        head += f"  {message.provider}/{message.model} stop={message.stop_reason}{tokens}"
    elif isinstance(message, ToolResultMessage):
        head += f"  {message.tool_name} ← {message.tool_call_id} status={message.status}"
        if message.duration_ms is not None:
            head += f" {message.duration_ms:.1f} ms"
    elif isinstance(message, SystemControlMessage):
        return [f"{head}  {message.control} {message.params} (never sent to a model)"]
    elif isinstance(message, UserMessage):
        head += f"  source={message.source}"
    return [head, *(f"    {describe_block(b)}" for b in message.content)]


def show_session(session: Session, out: Any) -> None:
    print(f"session {session.id}  v{session.version}  {len(session.messages)} messages", file=out)
    if session.system_prompt:
        print(f"  system: {_clip(session.system_prompt)}", file=out)
    for message in session.messages:
        for line in describe_message(message):
            print(f"  {line}", file=out)


def demo(out: Any = sys.stdout) -> int:
    examples = _examples_dir()
    rule = "─" * 100

    print(rule, file=out)
    print("1. A canonical session (examples/session.json): loaded, validated, shown per message type", file=out)
    print(rule, file=out)
    data = (examples / "session.json").read_bytes()
    session = loads(data)
    validate(session)
    show_session(session, out)
    kinds: dict[str, int] = {}
    for message in session.messages:
        kinds[message.type] = kinds.get(message.type, 0) + 1
    print(f"  valid: yes; by type: {kinds}", file=out)
    print(f"  sent to a model: {len(session.messages_for_model())} of {len(session.messages)} messages", file=out)

    print(rule, file=out)
    print("2. The same bytes through the Rust core: canonical JSON is the contract", file=out)
    print(rule, file=out)
    canonical = dumps(session)
    same = _core.normalize_session(canonical) == canonical
    print(f"  Python writes {len(canonical)} bytes; Rust reads and rewrites them identically: {same}", file=out)

    print(rule, file=out)
    print("3. Legacy database rows (examples/legacy-rows.json) migrate transparently", file=out)
    print(rule, file=out)
    legacy = loads((examples / "legacy-rows.json").read_bytes())
    show_session(legacy, out)

    print(rule, file=out)
    print("4. Recorded provider streams (examples/streams/), decoded by the Rust core", file=out)
    print(rule, file=out)
    for name, dialect in STREAMS:
        show_stream(examples / "streams" / name, dialect, out)

    print(rule, file=out)
    print("5. Speed of the codec on this session (best of 200)", file=out)
    print(rule, file=out)
    for name, call in (("dumps", lambda: dumps(session)), ("loads", lambda: loads(canonical))):
        best = min(_timed(call) for _ in range(200))
        print(f"  {name}: {best * 1e6:8.1f} µs  ({len(canonical) / best / 1e6:.0f} MB/s)", file=out)
    print("  (benches/README.md compares msgwire with pydantic-ai and plain msgspec on a 1 MB session)", file=out)
    return 0


STREAMS = (
    ("openai-parallel-tool-calls.sse", "openai"),
    ("anthropic-thinking.sse", "anthropic"),
    ("openai-responses-function-call.sse", "openai-responses"),
    ("gemini-thoughts.sse", "gemini"),
    ("ollama-thinking.ndjson", "ollama"),
    ("groq-error-midstream.sse", "openai"),
)


def show_stream(path: Path, dialect: str, out: Any) -> None:
    """Replay one recorded stream in network-sized pieces: events by type, the assembled
    message, and what a failure keeps."""
    data = path.read_bytes()
    pieces = [data[i : i + 512] for i in range(0, len(data), 512)]
    counts: dict[str, int] = {}
    events = stream(pieces, dialect)
    failure: StreamError | None = None
    try:
        for event in events:
            counts[event.type] = counts.get(event.type, 0) + 1
    except StreamError as exc:
        failure = exc
    print(f"\n  {path.name} ({dialect}, {len(data):,} bytes in {len(pieces)} pieces)", file=out)
    print(f"    events: {', '.join(f'{k} x{v}' for k, v in counts.items())}", file=out)
    for line in describe_message(events.message()):
        print(f"    {line}", file=out)
    for diagnostic in events.diagnostics:
        print(f"    diagnostic {diagnostic.code} at byte {diagnostic.offset}: {diagnostic.message}", file=out)
    if failure is not None:
        print(f"    ✗ {type(failure).__name__} at byte {failure.offset}: {_clip(str(failure), 80)}", file=out)
        kept = failure.partial_message
        print(
            f"      the partial message is kept: {len(kept.content)} block(s), stop_reason={kept.stop_reason}", file=out
        )
    else:
        best = min(_timed(lambda: assemble(data, dialect)) for _ in range(50))
        print(f"    assemble: {best * 1e6:.0f} µs ({len(data) / best / 1e6:.0f} MB/s)", file=out)


def _timed(call: Any) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="msgwire", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="show msgwire on the bundled examples")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return demo()
    except MsgwireError as exc:
        print(f"msgwire: {exc}", file=sys.stderr)
        return 1
    parser.error(textwrap.shorten(f"unknown command {args.command}", 80))
    return 2
