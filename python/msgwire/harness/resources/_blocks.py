"""Replacing a message's blocks (messages and blocks are frozen Structs: ``structs.replace``)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from msgwire.types import AssistantMessage, ContentBlock, Message, ToolResultMessage, UserMessage


def map_blocks(message: Message, change: Callable[[ContentBlock], ContentBlock]) -> Message:
    """``message`` with ``change`` applied to each block; the same object when no block changed
    (so a caller can tell what to persist by identity)."""
    if not isinstance(message, UserMessage | AssistantMessage | ToolResultMessage) or not message.content:
        return message
    blocks = [change(b) for b in message.content]
    if all(new is old for new, old in zip(blocks, message.content, strict=True)):
        return message
    return msgspec.structs.replace(message, content=blocks)
