"""``msgwire demo`` (``make demo``): what msgwire does, on the bundled examples, in the terminal.

1. a canonical session, loaded, validated and shown message by message;
2. the same bytes through the Rust core (canonical JSON is the contract);
3. legacy database rows migrating transparently;
4. a recorded stream of every provider dialect, replayed live, and its assembled message
   (one of them fails mid-stream: the error, its byte offset, and the partial message kept);
5. a session converted from one provider's request format to another's, with the loss report;
6. a gateway: the recorded Anthropic stream re-emitted as OpenAI chunks (``msgwire.transcode``);
7. a short speed comparison with the installed peers (``msgwire bench`` has the full one);
8. an agent session against the local scripted model server (``demo_agent.py``): what goes into
   the context, two tool calls at once (one approved and run, one denied), the answer, the audit
   trail verified, a replay on another provider.
9. a swarm of three agents sharing one SQLite store (``demo_swarm.py``).

The examples ship inside the package (``msgwire/examples``), so ``msgwire demo`` works from an
installed wheel too.

On a terminal the streams are replayed at a readable pace (the whole demo takes ~15 s);
otherwise (a pipe, a test) they are decoded at full speed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from .. import _core
from ..codec import dumps, loads
from ..errors import MsgwireError
from ..stream import assemble
from ..transcode import transcode
from ..types import Dialect
from ..validate import validate
from .bench import quick_subset
from .commands import SUMMARIES
from .convert import convert
from .demo_agent import show_agent
from .demo_swarm import show_swarm
from .parse import decode, report, watch
from .render import console, loss_table, section, session_renderable

STREAMS: tuple[tuple[str, Dialect], ...] = (
    ("openai-parallel-tool-calls.sse", "openai"),
    ("anthropic-thinking.sse", "anthropic"),
    ("openai-responses-function-call.sse", "openai-responses"),
    ("gemini-thoughts.sse", "gemini"),
    ("ollama-thinking.ndjson", "ollama"),
    ("groq-error-midstream.sse", "openai"),
)
REPLAY_SECONDS = 1.6  # per recording, on a terminal
DEMO_LINES = 12  # of each block of an assembled message (`msgwire parse` shows them whole)
SPEED = (
    ("openai stream", "msgwire"),
    ("openai stream", "openai SDK"),
    ("openai stream", "httpx-sse + json"),
    ("loads", "msgwire"),
    ("loads", "msgspec Structs"),
    ("loads", "pydantic-ai"),
)


def examples_dir() -> Path:
    """The examples the package ships (msgwire/examples/: package data, so the demo runs from an
    installed wheel as from a checkout)."""
    examples = Path(__file__).resolve().parents[1] / "examples"
    if not (examples / "session.json").is_file():
        raise MsgwireError(f"the bundled examples are missing ({examples}): reinstall msgwire")
    return examples


def show_session(out: Console, examples: Path) -> Any:
    section(out, 1, "A canonical session (examples/session.json): loaded, validated, shown per message type")
    session = loads((examples / "session.json").read_bytes())
    validate(session)
    out.print(session_renderable(session))
    kinds: dict[str, int] = {}
    for message in session.messages:
        kinds[message.type] = kinds.get(message.type, 0) + 1
    out.print(f"  valid: yes; by type: {kinds}")
    out.print(f"  sent to a model: {len(session.messages_for_model())} of {len(session.messages)} messages")
    return session


def show_contract(out: Console, session: Any) -> None:
    section(out, 2, "The same bytes through the Rust core: canonical JSON is the contract")
    canonical = dumps(session)
    same = _core.normalize_session(canonical) == canonical
    out.print(f"  Python writes {len(canonical):,} bytes; Rust reads and rewrites them identically: {same}")


def show_legacy(out: Console, examples: Path) -> None:
    section(out, 3, "Legacy database rows (examples/legacy-rows.json) migrate transparently")
    out.print(session_renderable(loads((examples / "legacy-rows.json").read_bytes())))


def show_streams(out: Console, examples: Path) -> None:
    section(out, 4, "Recorded provider streams (examples/streams/), decoded by the Rust core as they arrive")
    for name, dialect in STREAMS:
        data = (examples / "streams" / name).read_bytes()
        lines = data.splitlines(keepends=True)  # network-sized pieces: the decoder takes any split
        out.print(Text(f"\n{name}", style="bold"), f"({dialect}, {len(data):,} bytes)")
        if out.is_terminal:
            events = decode([data], dialect, lambda _events: None).events
            outcome = watch(lines, dialect, out, name, pace=min(0.03, REPLAY_SECONDS / max(events, 1)))
        else:
            outcome = decode(lines, dialect, lambda _events: None)
        report(outcome, out, name, max_lines=DEMO_LINES)


def show_conversion(out: Console, examples: Path) -> None:
    section(out, 5, "One session, from Anthropic's request format to OpenAI's (msgwire convert)")
    session_json = (examples / "session.json").read_bytes()
    anthropic_body, first, _, _ = convert(session_json, "canonical", "anthropic")
    out.print(f"  msgwire convert examples/session.json --to anthropic: {len(anthropic_body):,} bytes")
    out.print(loss_table(first, title=f"  canonical → anthropic: {len(first)} lossy step(s)"))
    openai_body, losses, session, source = convert(anthropic_body, None, "openai")
    out.print(f"  msgwire convert anthropic.json --to openai (detected: {source}): {len(openai_body):,} bytes")
    out.print(loss_table(losses, session.messages, f"  anthropic → openai: {len(losses)} lossy step(s)"))
    for message in json.loads(openai_body)["messages"]:
        content = message.get("content")
        text = content if isinstance(content, str) else " ".join(p.get("text", f"[{p['type']}]") for p in content or [])
        calls = " ".join(
            f"→ {c['function']['name']}({c['function']['arguments']})" for c in message.get("tool_calls", [])
        )
        out.print(Text(f"    {message['role']:<9} {text} {calls}".rstrip(), no_wrap=True, overflow="ellipsis"))


def show_transcoding(out: Console, examples: Path) -> None:
    section(out, 6, "A gateway: the Anthropic stream re-emitted as OpenAI chunks as it arrives (msgwire.transcode)")
    data = (examples / "streams" / "anthropic-thinking.sse").read_bytes()
    pieces = data.splitlines(keepends=True)
    started = time.perf_counter()
    output = b"".join(transcode(pieces, "anthropic", "openai"))
    elapsed = time.perf_counter() - started
    lines = [line for line in output.decode().split("\n") if line]
    out.print(f"  {len(data):,} bytes of Anthropic events in, {len(lines)} OpenAI chunks out, {elapsed * 1e3:.2f} ms")
    head = lines[0][: lines[0].find(',"choices"')]
    out.print(Text(f"  every chunk starts {head}, then:"))
    width = max(40, out.width - 6)
    for line in [*lines[:3], "…", *lines[-3:]]:
        shown = line[line.find('"choices"') :] if '"choices"' in line else line
        out.print(Text(f"    {shown if len(shown) <= width else shown[: width - 1] + '…'}"))
    source, back = assemble(data, "anthropic"), assemble(output, "openai")
    same = (back.text, back.thinking, back.usage) == (source.text, source.thinking, source.usage)
    out.print(f"  read back as OpenAI chunks: the same text, reasoning and usage: {same}")
    out.print("  (the thinking signature has no place in a chunk: OpenAI's format cannot carry it)")


def show_speed(out: Console) -> None:
    section(out, 7, "Speed beside the installed peers (a quick subset: `msgwire bench` runs them all)")
    out.print(quick_subset(SPEED))


def show_harness(out: Console, examples: Path) -> None:
    section(out, 8, "An agent session against the local scripted model (msgwire.harness: no network)")
    show_agent(out, examples)


def demo(out: Console) -> int:
    examples = examples_dir()
    session = show_session(out, examples)
    show_contract(out, session)
    show_legacy(out, examples)
    show_streams(out, examples)
    show_conversion(out, examples)
    show_transcoding(out, examples)
    show_speed(out)
    show_harness(out, examples)
    show_swarm(out, 9)
    return 0


def run(args: argparse.Namespace) -> int:
    return demo(console())


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("demo", help=SUMMARIES["demo"])
    parser.set_defaults(run=run)
