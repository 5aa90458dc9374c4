"""``Request``: what one model call asks for, before a dialect shapes it.

The conversation (``messages``, ``system_prompt``, ``tools``) becomes the request body through
``msgwire.formats.to_request``; the settings (``max_tokens``, ``temperature``, ...) are merged
into it by each provider under its own field names. ``extra`` is merged last, as it is, for
what this type has no field for (``{"seed": 7}``, ``{"store": False}``).

Why a type of its own beside ``msgwire.Request``: that one is the wire layer's record of call
settings, and ``msgwire.validate`` checks it; a model call also needs tools, a tool choice, a
thinking setting and the replay policy, and its model may travel elsewhere (Gemini's URL) or
come from the provider's default. ``validate()`` hands the shared part to ``msgwire.validate``
(the universal rules live there, once) and adds the rules of the fields it alone has.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ...errors import ValidationError
from ...types import Context, Message, Policy, Tool
from ...types import Request as WireRequest
from ...validate import validate as wire_validate

__all__ = ["TOOL_CHOICE_MODES", "Effort", "Problems", "Request"]

Effort = Literal["low", "medium", "high"]
TOOL_CHOICE_MODES = ("auto", "none", "required")
"""``tool_choice`` values that are modes; any other value names the one tool the model must call."""

Problems = list[tuple[str, str]]
"""``(JSON path, message)`` pairs, as ``msgwire.ValidationError.errors`` lists them."""


class Request(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One model call: the conversation, the tools, and the settings.

    - ``messages``, ``system_prompt``: what ``msgwire.context.build`` gives (``from_context``);
    - ``model``: the model, or ``None`` for the provider's default;
    - ``tools`` and ``tool_choice``: ``"auto"``, ``"none"``, ``"required"`` (call some tool), or
      the name of the one tool to call;
    - ``max_tokens``, ``temperature`` ([0, 2]; Anthropic [0, 1]), ``top_p``, ``stop``;
    - ``thinking``: a reasoning effort (``"low"``, ``"medium"``, ``"high"``: OpenAI, Gemini 3,
      Ollama) or a token budget (Anthropic, Gemini 2.5);
    - ``policy``: how blocks the dialect cannot carry are replayed (``msgwire.Policy``);
    - ``metadata``: yours, never sent; ``extra``: body fields merged last, as they are.
    """

    messages: list[Message] = msgspec.field(default_factory=list)
    system_prompt: str | None = None
    model: str | None = None
    tools: list[Tool] = msgspec.field(default_factory=list)
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    thinking: Effort | int | None = None
    policy: Policy | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    @classmethod
    def from_context(cls, context: Context, **settings: Any) -> Request:
        """The request for what ``msgwire.context.build`` chose to send, with ``settings``
        (``model=``, ``tools=``, ``max_tokens=``, ...)."""
        return cls(messages=context.messages, system_prompt=context.system_prompt, **settings)

    def validate(self, *, default_model: str | None = None, messages: bool = True) -> None:
        """Raise ``msgwire.ValidationError`` listing every problem found by the universal rules:
        a model named (here or as ``default_model``), temperature in [0, 2], top_p in [0, 1],
        max_tokens > 0, well-formed messages (``msgwire.validate``; ``messages=False`` skips
        that walk over the history), tools with distinct non-empty names, a tool choice that is
        a mode or names one of the tools, a positive thinking budget. A provider's
        ``validate`` adds the rules of its dialect and model."""
        problems = self.problems(default_model=default_model, messages=messages)
        if problems:
            raise ValidationError(problems)

    def problems(self, *, default_model: str | None = None, messages: bool = True) -> Problems:
        """What ``validate`` would raise, as a list (empty when the request is valid)."""
        model = self.model or default_model
        found: Problems = []
        wire = WireRequest(
            model=model or "",
            messages=self.messages if messages else [],
            system_prompt=self.system_prompt,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            stop=self.stop,
        )
        try:
            wire_validate(wire)
        except ValidationError as error:
            found += error.errors
        if not model:
            found = [p for p in found if p[0] != "$.model"]
            found.insert(0, ("$.model", "no model: name one in the request or give the provider a default model"))
        found += self._tool_problems()
        if self.stop is not None and not all(isinstance(s, str) and s for s in self.stop):
            found.append(("$.stop", "stop sequences must be non-empty strings"))
        thinking = self.thinking
        if isinstance(thinking, bool) or (isinstance(thinking, int) and thinking <= 0):
            found.append(("$.thinking", f"a thinking budget is a positive number of tokens, got {thinking!r}"))
        elif thinking is not None and not isinstance(thinking, int) and thinking not in ("low", "medium", "high"):
            found.append(("$.thinking", f"thinking is 'low', 'medium', 'high' or a token budget, got {thinking!r}"))
        return found

    def _tool_problems(self) -> Problems:
        found: Problems = []
        seen: set[str] = set()
        for i, tool in enumerate(self.tools):
            if not tool.name:
                found.append((f"$.tools[{i}].name", "tool name must not be empty"))
            elif tool.name in seen:
                found.append((f"$.tools[{i}].name", f"tool {tool.name!r} is declared twice"))
            seen.add(tool.name)
        choice = self.tool_choice
        if choice is None or choice in ("auto", "none"):
            return found
        if not self.tools:
            found.append(("$.tool_choice", f"tool_choice {choice!r} needs tools"))
        elif choice != "required" and choice not in seen:
            modes = ", ".join(repr(m) for m in TOOL_CHOICE_MODES)
            found.append(("$.tool_choice", f"tool_choice {choice!r} is neither a mode ({modes}) nor a declared tool"))
        return found
