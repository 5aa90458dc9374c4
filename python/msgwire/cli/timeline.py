"""An audit trail as a readable timeline (``msgwire audit FILE``, ``/audit`` in ``msgwire chat``,
the demo): one row per entry (when, the decision, what it is about, who and why, how long),
then the totals and whether the hash chain holds."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..types import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    Message,
    SystemControlMessage,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
)
from .render import ERROR, TOOL, clip

if TYPE_CHECKING:
    from ..harness import Conversation, Entry, Verification

__all__ = ["show", "summary_line", "timeline", "verification_text"]

_STYLES = {
    "tool_call_denied": ERROR,
    "permission_denied": ERROR,
    "tool_failed": ERROR,
    "error": ERROR,
    "tool_call_approved": "green",
    "tool_executed": "green",
    "tool_call_requested": TOOL,
    "planning": "bold",
    "user_input": "bold blue",
}


def _subject(message: Message) -> str:
    """What an entry is about, in a few words."""
    if isinstance(message, UserMessage):
        attached = [
            _attachment(b) for b in message.content if type(b) in (FileReferenceBlock, ImageBlock, MCPResourceBlock)
        ]
        source = "" if message.source == "direct" else f"({message.source})"
        text = clip(message.text, 60) if message.text else ""
        return " ".join(p for p in ("user", source, text, *(f"[{a}]" for a in attached)) if p)
    if isinstance(message, AssistantMessage):
        calls = ", ".join(f"{c.name}{_approval(c.approval)}" for c in message.tool_calls)
        text = clip(message.text, 50) if message.text else ""
        stop = f" (stop: {message.stop_reason})" if message.stop_reason in ("error", "aborted", "length") else ""
        return "assistant " + " · ".join(p for p in (text, f"calls {calls}" if calls else "") if p) + stop
    if isinstance(message, ToolResultMessage):
        return f"result of {message.tool_name or message.tool_call_id}: {clip(message.text, 50)}"
    if isinstance(message, SystemControlMessage):
        return f"{message.control} {message.params.get('old')} → {message.params.get('new')}"
    if isinstance(message, UnknownMessage):
        return f"unknown message ({message.type})"
    return type(message).__name__


def _approval(approval: str) -> str:
    return {"approved": " ✓", "denied": " ✗"}.get(approval, "")


def _attachment(block: Any) -> str:
    if type(block) is FileReferenceBlock:
        lines = f":{block.start_line}-{block.end_line}" if block.start_line is not None else ""
        return f"@{block.path}{lines} {block.status}"
    if type(block) is ImageBlock:
        return f"image {block.status}" + (f" by {block.mode_used}" if block.mode_used else "")
    return f"{block.server_name}:{block.resource_uri} {block.status}"


def _details(entry: Entry) -> str:
    audit = entry.audit
    parts: list[str] = []
    if "step" in audit:
        parts.append(f"step {audit['step']}")
    if "attempt" in audit:
        parts.append(f"attempt {audit['attempt']}")
    if "by" in audit:
        parts.append(f"by {audit['by']}")
    if audit.get("edited"):
        parts.append("arguments edited")
    if "reason" in audit:
        parts.append(f"why: {audit['reason']}")
    if "status" in audit and entry.decision.startswith("tool"):
        parts.append(str(audit["status"]))
    if "kind" in audit:
        parts.append(str(audit["kind"]))
    if "error" in audit:
        parts.append(clip(str(audit["error"]), 60))
    if "replayed_from" in audit and entry.decision != "user_input":
        parts.append("replayed")
    if audit.get("lossy_steps"):
        parts.append(f"{audit['lossy_steps']} lossy step(s)")
    if audit.get("pruned"):
        parts.append(f"{len(audit['pruned'])} resource(s) pruned")
    if "blocks" in audit:
        parts.append(", ".join(f"{b.get('type')} {b.get('status')}" for b in audit["blocks"]))
    prompt = audit.get("system_prompt")
    if entry.decision == "mode_change" and isinstance(prompt, dict) and prompt.get("old") != prompt.get("new"):
        parts.append("system prompt changed")
    return "; ".join(parts)


def _duration(entry: Entry) -> str:
    value = entry.audit.get("duration_ms")
    return f"{value:,.1f} ms" if isinstance(value, (int, float)) else ""


def timeline(entries: list[Entry], *, title: str | None = None) -> Table:
    """The entries as a table: seq, seconds since the first, decision, subject, details, duration."""
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("+s", justify="right", style="dim")
    table.add_column("decision", no_wrap=True)
    table.add_column("what", overflow="fold", max_width=64)
    table.add_column("who / why", overflow="fold", max_width=48)
    table.add_column("took", justify="right", no_wrap=True)
    start = entries[0].timestamp if entries else None
    for entry in entries:
        offset = (entry.timestamp - start).total_seconds() if start is not None else 0.0
        style = _STYLES.get(entry.decision, "")
        table.add_row(  # Text, not markup: a message may hold "[brackets]"
            str(entry.seq),
            f"{offset:.3f}",
            Text(entry.decision, style=style),
            Text(_subject(entry.message)),
            Text(_details(entry)),
            _duration(entry),
        )
    return table


def summary_line(entries: list[Entry]) -> str:
    """Totals: model calls and their time, tools run and theirs, denials, errors."""
    decisions = Counter(e.decision for e in entries)
    model = [e for e in entries if e.decision in ("planning", "tool_call_requested") and "duration_ms" in e.audit]
    tools = [e for e in entries if e.decision in ("tool_executed", "tool_failed") and "duration_ms" in e.audit]
    model_ms = sum(float(e.audit["duration_ms"]) for e in model)
    tool_ms = sum(float(e.audit["duration_ms"]) for e in tools)
    denied = decisions["tool_call_denied"]
    return (
        f"{len(entries)} entries · {len(model)} model call(s) {model_ms:,.1f} ms · "
        f"{len(tools)} tool run(s) {tool_ms:,.1f} ms · {denied} denied · {decisions['error']} error(s)"
    )


def verification_text(result: Verification, head: str) -> Text:
    if result:
        return Text(f"✓ hash chain verified: {result.checked} entries, head {head[:16]}…", style="green")
    where = f" at seq {result.seq}" if result.seq is not None else ""
    return Text(f"✗ hash chain broken{where}: {result.problem} {result.detail}".rstrip(), style=ERROR)


def show(conversation: Conversation, out: Console, *, head: str | None = None) -> bool:
    """Print the conversation's timeline, totals and verification; whether the chain holds."""
    entries = conversation.entries
    header = f"conversation {conversation.id}"
    if conversation.parent is not None:
        header += f" (forked from {conversation.parent.conversation_id})"
    if conversation.mode is not None:
        header += f" · mode {conversation.mode}"
    result = conversation.verify(head=head)
    renderables: list[RenderableType] = [
        timeline(entries, title=header),
        Text(summary_line(entries)),
        verification_text(result, conversation.head),
    ]
    out.print(Group(*renderables))
    return bool(result)
