"""The live view of a stream: what a person watching it sees, built from its events.

Text streams in, thinking is dimmed, a tool call shows its name and then its arguments as they
grow. Each block keeps only its last ``TAIL`` characters (and how many came before), so a
refresh costs the same at the end of a 100 MB recording as at its start, and the view's memory
stays bounded; the whole message is printed from the decoder once the stream is over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from ..types import (
    Event,
    MessageEnd,
    MessageStart,
    TextDelta,
    ThinkingDelta,
    ToolCallBegin,
    ToolCallDelta,
    ToolCallEnd,
    UsageEvent,
)
from .render import THINKING, TOOL

TAIL = 1500  # characters of each block the view keeps


@dataclass
class _Growing:
    """One block being streamed: its kind, its label and the tail of its text."""

    kind: str
    label: str = ""
    tail: str = ""
    dropped: int = 0  # characters no longer kept
    done: bool = False

    def append(self, text: str) -> None:
        self.tail += text
        if len(self.tail) > 2 * TAIL:  # trim now and then, not on every delta
            cut = len(self.tail) - TAIL
            self.dropped += cut
            self.tail = self.tail[cut:]

    def renderable(self) -> RenderableType:
        more = Text(f"… {self.dropped:,} characters above\n", style="dim") if self.dropped else Text()
        if self.kind == "thinking":
            return Text.assemble(("thinking: ", "dim bold"), more, (self.tail, THINKING))
        if self.kind == "tool":
            state = "" if self.done else " …"
            head = Text.assemble(("⚙ ", TOOL), (self.label, TOOL), state)
            return Group(head, more, Text(self.tail, style="cyan"))
        return Text.assemble(more, self.tail)


@dataclass
class LiveView:
    """Fed each event with ``add``; rich renders it (``__rich__``) on every refresh."""

    title: str
    events: int = 0
    blocks: dict[tuple[str, int], _Growing] = field(default_factory=dict)
    status: str = "streaming…"

    def _block(self, kind: str, index: int) -> _Growing:
        key = (kind, index)
        block = self.blocks.get(key)
        if block is None:
            block = self.blocks[key] = _Growing(kind)
        return block

    def add(self, event: Event) -> None:
        self.events += 1
        if isinstance(event, TextDelta):
            self._block("text", event.index).append(event.text)
        elif isinstance(event, ThinkingDelta):
            if event.thinking:
                self._block("thinking", event.index).append(event.thinking)
        elif isinstance(event, ToolCallBegin):
            self._block("tool", event.index).label = f"{event.name}  id={event.id}"
        elif isinstance(event, ToolCallDelta):
            self._block("tool", event.index).append(event.fragment)
        elif isinstance(event, ToolCallEnd):
            block = self._block("tool", event.index)
            block.label = f"{event.block.name}  id={event.block.id}"
            block.done = True
        elif isinstance(event, MessageStart):
            self.title += f" · {event.provider or '?'} · {event.model or '?'}"
        elif isinstance(event, UsageEvent):
            self.status = f"usage in={event.usage.input_tokens} out={event.usage.output_tokens}"
        elif isinstance(event, MessageEnd):
            self.status = f"stop={event.stop_reason}"

    def __rich__(self) -> Panel:
        body = [b.renderable() for b in self.blocks.values()] or [Text("waiting for the first delta…", "dim")]
        subtitle = f"{self.events:,} events · {self.status}"
        return Panel(Group(*body), title=self.title, title_align="left", subtitle=subtitle, border_style="blue")
