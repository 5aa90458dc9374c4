"""``msgwire.validate``: the rules a well-formed conversation keeps.

msgspec checks types when it decodes, but a Struct built in Python is not checked, so these
rules cover both: values of every ``Literal`` field in range, plus the semantic rules that no
type can express (non-empty text, tool results that answer a call, safe file paths, ...).
All problems are collected and raised together as one ``ValidationError``.
"""

from __future__ import annotations

import posixpath
from functools import cache
from typing import Any

import msgspec

from .errors import ValidationError
from .types import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    NamedTool,
    Request,
    ServerToolCallBlock,
    ServerToolResultBlock,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
    _Above,
)

__all__ = ["validate"]

# Which blocks each message may hold (unknown blocks are allowed anywhere: they are opaque).
_ALLOWED_BLOCKS: dict[type, tuple[type, ...]] = {
    UserMessage: (TextBlock, ImageBlock, FileReferenceBlock, MCPResourceBlock, UnknownBlock),
    AssistantMessage: (
        TextBlock,
        ThinkingBlock,
        ToolCallBlock,
        ServerToolCallBlock,
        ServerToolResultBlock,
        ImageBlock,
        UnknownBlock,
    ),
    ToolResultMessage: (TextBlock, ImageBlock, FileReferenceBlock, MCPResourceBlock, UnknownBlock),
}


def validate(obj: Any, *, allow_empty_text: bool = False, messages: bool = True) -> None:
    """Check a Session, Request, message, list of messages or block; raise
    ``ValidationError`` listing every problem (path and message) when one is found.

    A ``Request``'s rules hold for every dialect: a model named, temperature in [0, 2], top_p
    in [0, 1], max_tokens > 0, stop sequences non-empty, a positive reasoning budget, tools
    with distinct non-empty names, a tool choice that needs tools only when there are some
    and names one of them, and a well-formed history. ``messages=False`` skips the walk over
    the history (about 5 us a message) for a caller that checks it once, as it grows."""
    checker = _Checker(allow_empty_text)
    if isinstance(obj, Session):
        checker.messages(obj.messages, "$.messages")
    elif isinstance(obj, Request):
        checker.request(obj, messages=messages)
    elif isinstance(obj, list):
        checker.messages(obj, "$")
    elif type(obj) in _ALLOWED_BLOCKS or isinstance(obj, (SystemControlMessage, UnknownMessage)):
        checker.message(obj, "$", set(), check_answers=False)
    else:
        checker.block(obj, "$")
    if checker.errors:
        raise ValidationError(checker.errors)


class _Checker:
    def __init__(self, allow_empty_text: bool) -> None:
        self.allow_empty_text = allow_empty_text
        self.errors: list[tuple[str, str]] = []
        # calls not answered yet: an id may be reused once its call has its result
        self.unanswered: set[str] = set()

    def fail(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def request(self, request: Request, *, messages: bool = True) -> None:
        if not request.model:
            self.fail("$.model", "model must not be empty")
        if request.temperature is not None and not 0 <= request.temperature <= 2:
            self.fail("$.temperature", f"temperature must be within [0, 2], got {request.temperature}")
        if request.top_p is not None and not 0 <= request.top_p <= 1:
            self.fail("$.top_p", f"top_p must be within [0, 1], got {request.top_p}")
        if request.max_tokens is not None and request.max_tokens <= 0:
            self.fail("$.max_tokens", f"max_tokens must be positive, got {request.max_tokens}")
        if request.stop is not None and not all(isinstance(s, str) and s for s in request.stop):
            self.fail("$.stop", "stop sequences must be non-empty strings")
        reasoning = request.reasoning
        if reasoning is not None and reasoning.budget_tokens is not None:
            budget = reasoning.budget_tokens
            if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
                self.fail(
                    "$.reasoning.budget_tokens", f"a reasoning budget is a positive number of tokens, got {budget!r}"
                )
        self.tools(request)
        if messages:
            self.messages(request.messages, "$.messages")

    def tools(self, request: Request) -> None:
        """Tool names non-empty and distinct; a tool choice other than ``auto`` / ``none`` needs
        tools, and one that names a tool names a declared one."""
        seen: set[str] = set()
        for i, tool in enumerate(request.tools):
            if not tool.name:
                self.fail(f"$.tools[{i}].name", "tool name must not be empty")
            elif tool.name in seen:
                self.fail(f"$.tools[{i}].name", f"tool {tool.name!r} is declared twice")
            seen.add(tool.name)
        choice = request.tool_choice
        if choice is None or choice in ("auto", "none"):
            return
        if isinstance(choice, NamedTool):
            if choice.name not in seen:
                self.fail("$.tool_choice", f"tool_choice names {choice.name!r}, which is not a declared tool")
        elif choice != "required":
            self.fail("$.tool_choice", f"tool_choice is 'auto', 'none', 'required' or a NamedTool, got {choice!r}")
        elif not request.tools:
            self.fail("$.tool_choice", "tool_choice 'required' needs tools")

    def messages(self, messages: list[Any], path: str) -> None:
        calls: set[str] = set()
        for i, message in enumerate(messages):
            self.message(message, f"{path}[{i}]", calls, check_answers=True)

    def message(self, message: Any, path: str, calls: set[str], *, check_answers: bool) -> None:
        if isinstance(message, UnknownMessage):
            return
        self.literals(message, path)
        if not message.id:
            self.fail(f"{path}.id", "id must not be empty")
        if isinstance(message, SystemControlMessage):
            if not message.control:
                self.fail(f"{path}.control", "control must not be empty")
            return
        allowed = _ALLOWED_BLOCKS[type(message)]
        for j, block in enumerate(message.content):
            where = f"{path}.content[{j}]"
            if not isinstance(block, allowed):
                self.fail(where, f"a {_tag(block)} block cannot be part of a {_tag(message)} message")
            self.block(block, where)
            if isinstance(block, ToolCallBlock) and isinstance(message, AssistantMessage):
                if block.id and block.id in self.unanswered:
                    self.fail(f"{where}.id", f"tool call id {block.id!r} is also an earlier call's, still unanswered")
                calls.add(block.id)
                self.unanswered.add(block.id)
        if isinstance(message, ToolResultMessage):
            if not message.tool_call_id:
                self.fail(f"{path}.tool_call_id", "tool_call_id must not be empty")
            elif check_answers and message.tool_call_id not in calls:
                self.fail(f"{path}.tool_call_id", f"no earlier tool_call has id {message.tool_call_id!r}")
            self.unanswered.discard(message.tool_call_id)
            if message.duration_ms is not None and message.duration_ms < 0:
                self.fail(f"{path}.duration_ms", "duration_ms must not be negative")

    def block(self, block: Any, path: str) -> None:
        if isinstance(block, UnknownBlock):
            return
        if not isinstance(block, msgspec.Struct):
            self.fail(path, f"expected a content block, got {type(block).__name__}")
            return
        self.literals(block, path)
        if isinstance(block, TextBlock):
            if not block.text and not self.allow_empty_text:
                self.fail(f"{path}.text", "text must not be empty")
            for k, citation in enumerate(block.citations):
                start, end = citation.start_index, citation.end_index
                if start is not None and end is not None and not 0 <= start <= end:
                    self.fail(f"{path}.citations[{k}]", f"the cited span {start}..{end} is not a span")
        elif isinstance(block, ServerToolCallBlock):
            if not block.id and block.dialect != "gemini":  # Gemini's grounding has no id of its own
                self.fail(f"{path}.id", "server tool call id must not be empty")
        elif isinstance(block, ServerToolResultBlock):
            if not block.tool_call_id:
                self.fail(f"{path}.tool_call_id", "tool_call_id must not be empty")
        elif isinstance(block, ToolCallBlock):
            self.tool_call(block, path)
        elif isinstance(block, FileReferenceBlock):
            self.file_reference(block, path)
        elif isinstance(block, ImageBlock):
            if block.confidence is not None and not 0 <= block.confidence <= 1:
                self.fail(f"{path}.confidence", f"confidence must be within [0, 1], got {block.confidence}")
        elif isinstance(block, MCPResourceBlock):
            if not block.server_name:
                self.fail(f"{path}.server_name", "server_name must not be empty")
            if not block.resource_uri:
                self.fail(f"{path}.resource_uri", "resource_uri must not be empty")

    def tool_call(self, block: ToolCallBlock, path: str) -> None:
        if not block.id:
            self.fail(f"{path}.id", "tool call id must not be empty")
        if not block.name:
            self.fail(f"{path}.name", "tool name must not be empty")
        if block.malformed or not block.arguments.strip():
            return
        try:
            msgspec.json.decode(block.arguments)
        except msgspec.DecodeError as exc:
            self.fail(f"{path}.arguments", f"arguments are not valid JSON ({exc}); set malformed=True to keep them")

    def file_reference(self, block: FileReferenceBlock, path: str) -> None:
        if not block.path:
            self.fail(f"{path}.path", "path must not be empty")
        else:
            normal = posixpath.normpath(block.path.replace("\\", "/"))
            if normal != block.path:
                self.fail(f"{path}.path", f"path must be normalized (as {normal!r})")
            if normal == ".." or normal.startswith("../"):
                self.fail(f"{path}.path", "path must not escape its root with '..'")
        start, end = block.start_line, block.end_line
        if start is not None and start < 1:
            self.fail(f"{path}.start_line", f"start_line is 1-indexed, got {start}")
        if end is not None and start is None:
            self.fail(f"{path}.end_line", "end_line needs a start_line")
        elif end is not None and start is not None and end < start:
            self.fail(f"{path}.end_line", f"end_line {end} is before start_line {start}")

    def literals(self, obj: msgspec.Struct, path: str) -> None:
        for name, allowed in _literal_fields(type(obj)):
            value = getattr(obj, name)
            if value is not None and value not in allowed:
                choices = ", ".join(repr(a) for a in sorted(allowed))
                self.fail(f"{path}.{name}", f"{value!r} is not one of {choices}")
        source = getattr(obj, "source", None)
        if isinstance(source, msgspec.Struct):
            self.literals(source, f"{path}.source")


@cache
def _literal_fields(cls: type) -> tuple[tuple[str, frozenset[Any]], ...]:
    """The Literal-typed fields of a Struct class and their allowed values (looked up once)."""
    found = []
    for field in msgspec.inspect.type_info(cls).fields:  # type: ignore[attr-defined]
        values = _literal_values(field.type)
        if values:
            found.append((field.name, values))
    return tuple(found)


def _literal_values(info: Any) -> frozenset[Any]:
    if isinstance(info, msgspec.inspect.LiteralType):
        return frozenset(info.values)
    if isinstance(info, msgspec.inspect.UnionType):
        return frozenset(v for t in info.types for v in _literal_values(t))
    return frozenset()


def _tag(obj: Any) -> str:
    tag = getattr(getattr(obj, "__struct_config__", None), "tag", None)
    return str(tag or getattr(obj, "type", type(obj).__name__))


# Request.validate delegates here (types.py cannot import this module: it stands on it)
_Above.validate = validate
