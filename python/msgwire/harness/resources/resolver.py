"""``Resolver``: the one shape of everything that fills a conversation's blocks from outside it
(file references, images, MCP resources), so that an agent runs them as one pipeline.

A resolver is asked three things, each with a default here (a resolver subclasses ``Resolver``
and overrides what it does):

- ``read_prompt(message)``: new user input as this resolver reads it (``FileResolver`` turns
  ``@path:10-20`` mentions into file references); the same object when nothing changed;
- ``resolve_message(message, role)``: the message with this resolver's *pending* blocks filled
  (``status`` resolved or error, never an exception for a bad reference), the same object when
  it has none; ``role`` is who asks (the user, a tool's name), for permissions;
- ``audit_record(block)``: what the audit trail says of one of its blocks after a resolution
  (``None`` for a block of another kind).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from msgwire.types import ContentBlock, Message, UserMessage

__all__ = ["Resolver"]


@runtime_checkable
class Resolver(Protocol):
    """What a resolver does (see the module docs). A class that subclasses it explicitly gets
    the do-nothing defaults of the methods it does not define."""

    def read_prompt(self, message: UserMessage, /) -> UserMessage:
        return message

    def resolve_message(self, message: Message, role: str = "user", /) -> Message:
        return message

    def audit_record(self, block: ContentBlock, /) -> dict[str, Any] | None:
        return None
