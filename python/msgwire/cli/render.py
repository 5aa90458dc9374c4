"""How the command shows msgwire's values in a terminal (rich): messages, sessions, diagnostics,
stream errors and loss reports. Only renderables are built here; the commands print them."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..errors import StreamError
from ..types import (
    AssistantMessage,
    Diagnostic,
    FileReferenceBlock,
    ImageBlock,
    LossReport,
    MCPResourceBlock,
    Message,
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

THINKING = "dim italic"
TOOL = "bold cyan"
ERROR = "bold red"
WIDTH_WHEN_PIPED = 120  # rich's default of 80 columns cuts the tables when output is not a terminal


def console(stderr: bool = False) -> Console:
    """A console on standard output (or error): colours and live display only on a terminal."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else WIDTH_WHEN_PIPED
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


def plain_help(doc: str | None) -> str:
    """A command's docstring as its ``--help`` text: without reStructuredText's double
    backquotes (a terminal would show them as they are), each paragraph of prose filled to the
    terminal's width (at most 100 columns) as the options' help is; indented lines (a table of
    commands) stay as they are."""
    width = max(min(shutil.get_terminal_size().columns - 2, 100), 40)
    paragraphs = []
    for paragraph in (doc or "").replace("``", "").strip().split("\n\n"):
        lines = paragraph.splitlines()
        prose = all(line and not line[0].isspace() for line in lines)
        paragraphs.append(textwrap.fill(" ".join(lines), width) if prose else paragraph)
    return "\n\n".join(paragraphs)


def clip(text: str, width: int = 96) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def arguments_text(arguments: str) -> str:
    """Tool-call arguments indented when they are JSON, else exactly as streamed."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def block_renderable(block: Any) -> RenderableType:
    """One content block as a person reads it: text plain, thinking dimmed, tool calls with
    their arguments, the other blocks in one line."""
    if isinstance(block, TextBlock):
        return Text(block.text)
    if isinstance(block, ThinkingBlock):
        if not block.thinking:  # encrypted or redacted reasoning: nothing to read, only its size
            size = f"redacted, {len(block.redacted):,} bytes" if block.redacted else "signature only"
            return Text(f"thinking: [{size}]", THINKING)
        label = "thinking (signed)" if block.signature else "thinking"
        return Text.assemble((f"{label}: ", "dim bold"), (block.thinking, THINKING))
    if isinstance(block, ToolCallBlock):
        head = Text.assemble(("⚙ ", TOOL), (block.name, TOOL), f"  id={block.id}  [{block.approval}]")
        return Group(head, Text(arguments_text(block.arguments), style="cyan"))
    return Text(block_line(block), style="magenta")


def block_line(block: Any) -> str:
    """A block in one line (``kind  details``), for tables and lists."""
    if isinstance(block, TextBlock):
        return f"text      {clip(block.text)}"
    if isinstance(block, ThinkingBlock):
        signed = " (signed)" if block.signature else ""
        return f"thinking  {clip(block.thinking or '[opaque]')}{signed}"
    if isinstance(block, ToolCallBlock):
        return f"tool_call {block.name}({clip(block.arguments, 60)}) id={block.id} [{block.approval}]"
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


def assistant_title(message: AssistantMessage) -> str:
    title = f"assistant · {message.provider or '?'} · {message.model or '?'} · stop={message.stop_reason}"
    if message.raw_stop_reason and message.raw_stop_reason != message.stop_reason:
        title += f" ({message.raw_stop_reason})"
    if message.usage:
        title += f" · in={message.usage.input_tokens} out={message.usage.output_tokens}"
    return title


def _first_lines(renderable: RenderableType, max_lines: int | None) -> RenderableType:
    if max_lines is None or not isinstance(renderable, Text):
        return renderable
    lines = renderable.split("\n")
    if len(lines) <= max_lines:
        return renderable
    kept = Text("\n").join(lines[:max_lines])
    return Text.assemble(kept, (f"\n… {len(lines) - max_lines} more lines", "dim"))


def message_panel(message: AssistantMessage, title: str | None = None, max_lines: int | None = None) -> Panel:
    """The assembled message of a stream: every block in order (each cut to ``max_lines`` when
    given), in a panel titled with its provider, model, stop reason and usage."""
    blocks: list[RenderableType] = [_first_lines(block_renderable(b), max_lines) for b in message.content]
    blocks = blocks or [Text("(no content)", "dim")]
    style = "red" if message.stop_reason == "error" else "green"
    return Panel(Group(*blocks), title=title or assistant_title(message), title_align="left", border_style=style)


def message_head(message: Message) -> str:
    if isinstance(message, UnknownMessage):
        return f"unknown message type={message.type!r}, {len(message.raw)} bytes kept as-is"
    head = f"{message.type:<14} {message.timestamp:%H:%M:%S}"
    if isinstance(message, AssistantMessage):
        usage = message.usage
        tokens = f" in={usage.input_tokens} out={usage.output_tokens}" if usage else ""
        made = f"{message.provider or '?'}/{message.model or '?'} " if message.provider or message.model else ""
        stop = f"stop={message.stop_reason}" if message.stop_reason else ""
        head += f"  {made}{stop}{tokens}"
    elif isinstance(message, ToolResultMessage):
        head += f"  {message.tool_name} ← {message.tool_call_id} status={message.status}"
        if message.duration_ms is not None:
            head += f" {message.duration_ms:.1f} ms"
    elif isinstance(message, SystemControlMessage):
        head += f"  {message.control} {message.params} (never sent to a model)"
    elif isinstance(message, UserMessage):
        head += f"  source={message.source}"
    return head


def session_renderable(session: Session) -> RenderableType:
    """A session message by message: one line per message, one indented line per block."""
    lines = [Text(f"session {session.id}  v{session.version}  {len(session.messages)} messages", style="bold")]
    if session.system_prompt:
        lines.append(Text(f"  system: {session.system_prompt}"))
    for message in session.messages:
        lines.append(Text(f"  {message_head(message)}", style=_MESSAGE_STYLE.get(message.type, "")))
        lines.extend(
            Text(f"      {block_line(block)}", style=THINKING if isinstance(block, ThinkingBlock) else "")
            for block in getattr(message, "content", ())
        )
    for line in lines:  # one line each, cut to the width of the terminal
        line.no_wrap = True
        line.overflow = "ellipsis"
    return Group(*lines)


_MESSAGE_STYLE = {"user": "bold blue", "assistant": "bold green", "tool_result": "bold yellow", "system_control": "dim"}


def diagnostics_table(diagnostics: Sequence[Diagnostic]) -> Table:
    table = Table(title="diagnostics: what the stream did that was unusual", box=box.SIMPLE, title_justify="left")
    table.add_column("byte", justify="right")
    table.add_column("code", style="yellow")
    table.add_column("message")
    for diagnostic in diagnostics:
        table.add_row(str(diagnostic.offset), diagnostic.code, diagnostic.message)
    return table


def error_text(error: StreamError) -> Text:
    """``MalformedStreamError at byte 123: ...``: the class, where, and what."""
    text = str(error)
    where = ""
    if error.offset is not None:
        where = f" at byte {error.offset}"
        text = text.removesuffix(f" (byte {error.offset})")  # said once, up front
    return Text.assemble((f"✗ {type(error).__name__}{where}", ERROR), f": {text}")


def loss_table(report: LossReport, messages: Sequence[Message] | None = None, title: str = "") -> Table:
    """Every lossy step of a conversion: which message and block, what was done, why."""
    table = Table(title=title or f"loss report: {len(report)} lossy step(s)", box=box.SIMPLE, title_justify="left")
    table.add_column("message", justify="right")
    table.add_column("block", justify="right")
    table.add_column("kind", style="magenta")
    table.add_column("action", style="yellow")
    table.add_column("reason")
    for loss in report.entries:
        where = "request" if loss.message is None else str(loss.message)
        if messages is not None and loss.message is not None and loss.message < len(messages):
            where += f" ({messages[loss.message].type})"
        table.add_row(where, "" if loss.block is None else str(loss.block), loss.kind, loss.action, loss.reason)
    return table


def section(out: Console, number: int, title: str) -> None:
    """A numbered section of the demo: a blank line and a rule with its title."""
    out.print()
    out.print(Rule(f"[bold]{number}. {title}", align="left", style="blue"))
