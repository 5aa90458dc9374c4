"""``ContextPipeline``: what goes into each model call's context, in one place.

An agent asks its pipeline three things, in this order, every step:

1. *resolve*: the pending blocks of the messages it has not looked at yet, by each
   ``Resolver`` in turn (file references, images, MCP resources: ``msgwire.harness.resources``);
   a message that changed is recorded again (decision ``resources_resolved``, its audit one
   record per block, each written by the resolver of that block);
2. *build*: the ``msgwire.Context`` of the call: ``build(conversation)`` when given (the swarm's
   builder), else ``msgwire.context.build`` over the conversation with ``window`` messages and
   the agent's encouragement counter, failed turns (assistant messages stopped by ``error`` or
   ``aborted``) left out;
3. *prune*: the token ``budget``, when given, takes MCP resources out of what is sent.

New user input goes through each resolver's ``read_prompt`` first (a ``FileResolver`` turns
``@path:10-20`` mentions into file references). ``role`` is whose permissions user messages are
resolved with; a tool result is resolved with its tool's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from msgwire import context as wire_context
from msgwire.types import (
    AssistantMessage,
    Context,
    EncouragementCounter,
    Message,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)

from .conversation import Conversation

if TYPE_CHECKING:
    from .resources import PruneRecord, Resolver, TokenBudget

__all__ = ["BuildContext", "ContextPipeline"]

BuildContext = Callable[[Conversation], Context]
"""``build(conversation) -> msgwire.Context``: what the model sees each step."""
_FAILED = ("error", "aborted")


class ContextPipeline:
    """See the module docs. ``resolvers``: run in order on every pending block; ``window``:
    messages of history per context (``None``: all of it); ``build``: a builder of its own
    instead (``window`` is then unused); ``budget``: a ``TokenBudget`` for what is sent;
    ``role``: whose permissions the user's references are read with."""

    def __init__(
        self,
        resolvers: Sequence[Resolver] = (),
        *,
        window: int | None = 50,
        build: BuildContext | None = None,
        budget: TokenBudget | None = None,
        role: str = "user",
    ) -> None:
        self.resolvers = list(resolvers)
        self.window = window
        self.build = build
        self.budget = budget
        self.role = role

    def __repr__(self) -> str:
        names = [type(r).__name__ for r in self.resolvers]
        return f"ContextPipeline(resolvers={names}, window={self.window}, budget={self.budget is not None})"

    def read_prompt(self, message: UserMessage) -> UserMessage:
        """New user input as the resolvers read it."""
        for resolver in self.resolvers:
            message = resolver.read_prompt(message)
        return message

    def resolve(self, conversation: Conversation, seen: set[str]) -> None:
        """Resolve the pending blocks of the messages not in ``seen`` (which it extends);
        record those that changed."""
        if not self.resolvers:
            return
        for message in conversation.messages():
            if not isinstance(message, (UserMessage, ToolResultMessage)) or message.id in seen:
                continue
            seen.add(message.id)
            if all(type(b) is TextBlock for b in message.content):
                continue
            role = self.role if isinstance(message, UserMessage) else message.tool_name or "agent"
            new: Message = message
            for resolver in self.resolvers:
                new = resolver.resolve_message(new, role)
            if new is not message:
                conversation.update(new, "resources_resolved", {"blocks": self._records(new)})

    def _records(self, message: Message) -> list[dict[str, Any]]:
        """The audit of a resolution: each resolver's record of each of its blocks."""
        out = []
        for block in getattr(message, "content", ()):
            for resolver in self.resolvers:
                record = resolver.audit_record(block)
                if record is not None:
                    out.append(record)
                    break
        return out

    def context(self, conversation: Conversation, counter: EncouragementCounter) -> Context:
        """The context of the next call (step 2 of the module docs)."""
        if self.build is not None:
            return self.build(conversation)
        session = conversation.session()
        messages = session.messages
        if any(type(m) is AssistantMessage and m.stop_reason in _FAILED for m in messages):
            session.messages = [m for m in messages if not (type(m) is AssistantMessage and m.stop_reason in _FAILED)]
        return wire_context.build(session, window=self.window, counter=counter)

    def prune(self, messages: list[Message]) -> tuple[list[Message], list[PruneRecord]]:
        """What is sent within the budget, and what was left out."""
        if self.budget is None:
            return messages, []
        kept = self.budget.prune(messages)
        return kept.messages, kept.removed
