"""A token budget for what is sent: MCP resources pruned least recently used first.

``TokenBudget(limit, counter=estimate_tokens, last_used=mcp.last_used).prune(messages)`` returns
``Pruned``: the messages to send, within ``limit`` tokens where removing resources can get them
there, and one ``PruneRecord`` per resource removed, which is also logged (logger
``msgwire.harness.resources``, INFO). The records are what the caller appends to its audit trail
(``Conversation`` of harness part 1, or its own log).

What is removed: only MCP resource blocks, least recently used first (``last_used(server, uri)``,
e.g. ``MCPResources.last_used``; then the block's ``retrieved_at``; then its position, older
first). A removed block leaves a one-line text in its place, so no message is ever removed or
emptied: a tool call and its result always stay together, the conversation still opens with
the same user message, and the model is told the resource was left out (it may read it again).
When removing every resource is not enough, ``over_budget`` says so; dropping turns is the
window's job (``msgwire.context.build``).

Counting: ``counter(text) -> int`` is pluggable (a tokenizer whose vocabulary ships with an
installed package, a provider's count endpoint). The default ``estimate_tokens`` works offline:
one token per 4 bytes of UTF-8, rounded up, the usual rule of thumb for English with the GPT and
Claude tokenizers (code and CJK text come out close as well, since their characters take more
bytes); a message counts the text the model reads (text, thinking, tool calls with their
arguments, file contents, recognized image text, resource content, a binary resource as its
base64) plus 4 for its framing. It is an estimate: leave a margin.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence

import msgspec

from msgwire.types import (
    AssistantMessage,
    ContentBlock,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    now,
)

__all__ = ["PruneRecord", "Pruned", "TokenBudget", "TokenCounter", "estimate_tokens"]

log = logging.getLogger("msgwire.harness.resources")

TokenCounter = Callable[[str], int]
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    """About one token per 4 bytes of UTF-8 (see the module docs)."""
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


class PruneRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One resource left out of a request, for the audit trail: ``decision`` and ``actor`` say
    what and who, the rest which resource, where, why and when."""

    decision: str = "context_pruned"
    actor: str = "resources.budget"
    message_id: str
    block: int
    server_name: str
    resource_uri: str
    tokens: int
    last_used: float | None
    reason: str
    at: dt.datetime = msgspec.field(default_factory=now)


class Pruned(msgspec.Struct, frozen=True, kw_only=True):
    messages: list[Message]
    removed: list[PruneRecord]
    tokens: int
    """The estimate for ``messages`` after pruning."""
    over_budget: bool


class TokenBudget:
    def __init__(
        self,
        limit: int,
        *,
        counter: TokenCounter = estimate_tokens,
        last_used: Callable[[str, str], float | None] | None = None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be positive, got {limit}")
        self.limit = limit
        self.counter = counter
        self.last_used = last_used

    def count(self, messages: Sequence[Message]) -> int:
        return sum(self.message_tokens(m) for m in messages)

    def message_tokens(self, message: Message) -> int:
        content: list[ContentBlock] = getattr(message, "content", [])
        return MESSAGE_OVERHEAD + sum(self.block_tokens(b) for b in content)

    def block_tokens(self, block: ContentBlock) -> int:
        return self.counter(_text(block))

    def prune(self, messages: Sequence[Message]) -> Pruned:
        """``messages`` within the budget by leaving out resources (see the module docs)."""
        per_message = [self.message_tokens(m) for m in messages]
        total = sum(per_message)
        out = list(messages)
        removed: list[PruneRecord] = []
        if total <= self.limit:
            return Pruned(messages=out, removed=removed, tokens=total, over_budget=False)
        for _, i, b in sorted(self._candidates(messages)):
            if total <= self.limit:
                break
            message = out[i]
            content = list(message.content)  # type: ignore[union-attr]
            block = content[b]
            assert type(block) is MCPResourceBlock
            note = TextBlock(
                text=f"(MCP resource {block.resource_uri} from {block.server_name} left out: token budget)"
            )
            saved = self.block_tokens(block) - self.block_tokens(note)
            if saved <= 0:
                continue
            content[b] = note
            out[i] = msgspec.structs.replace(message, content=content)  # type: ignore[type-var]
            total -= saved
            used = self.last_used(block.server_name, block.resource_uri) if self.last_used else None
            reason = f"least recently used resource; {saved} tokens saved to fit the budget of {self.limit}"
            record = PruneRecord(
                message_id=message.id,  # type: ignore[union-attr]
                block=b,
                server_name=block.server_name,
                resource_uri=block.resource_uri,
                tokens=saved,
                last_used=used,
                reason=reason,
            )
            removed.append(record)
            log.info(
                "pruned MCP resource %s from %s (message %s, %d tokens): %s",
                block.resource_uri,
                block.server_name,
                record.message_id,
                saved,
                reason,
            )
        return Pruned(messages=out, removed=removed, tokens=total, over_budget=total > self.limit)

    def _candidates(self, messages: Sequence[Message]) -> list[tuple[tuple[float, float], int, int]]:
        found = []
        for i, message in enumerate(messages):
            if not isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
                continue
            for b, block in enumerate(message.content):
                if type(block) is not MCPResourceBlock:
                    continue
                used = self.last_used(block.server_name, block.resource_uri) if self.last_used else None
                if used is None and block.retrieved_at is not None:
                    used = block.retrieved_at.timestamp()
                # unknown recency sorts first (oldest); ties go by position, older first
                found.append(((used if used is not None else float("-inf"), float(i)), i, b))
        return found


def _text(block: ContentBlock) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return block.thinking
    if isinstance(block, ToolCallBlock):
        return block.name + block.arguments
    if isinstance(block, FileReferenceBlock):
        return block.path + (block.resolved_content or block.error or "")
    if isinstance(block, ImageBlock):
        return block.recognized_text or block.vision_analysis or ""
    if isinstance(block, MCPResourceBlock):
        return block.resource_uri + (block.content or block.blob or block.error or "")
    raw = getattr(block, "raw", b"")
    return bytes(raw).decode("utf-8", "replace")
