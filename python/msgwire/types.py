"""Every public type of msgwire: canonical schema v1 as msgspec Structs.

The JSON field names here are the contract with the Rust core (``rust/core/src/canonical.rs``)
and with stored sessions; change them only together with a schema version bump.

Messages and blocks are frozen, tagged by ``"type"``, omit fields equal to their default, and
are not tracked by the cycle collector (``gc=False``): they hold no references back to
containers, which makes decoding large histories much cheaper.

``UnknownMessage`` and ``UnknownBlock`` keep a document from a newer version readable: they
hold the original JSON bytes and write them back unchanged. They are plain classes, not
Structs, so that the encoder writes their bytes inline; msgspec's decoder only ever sees the
known tags (see ``codec.py`` for the fallback that produces the unknown ones).
"""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union

import msgspec

from . import _core
from ._ids import new_id, new_ids, now

__all__ = [
    "REAL_SOURCES",
    "SCHEMA_VERSION",
    "Approval",
    "AssistantMessage",
    "Base64Source",
    "BlockEnd",
    "CacheControl",
    "Citation",
    "ContentBlock",
    "Context",
    "Converted",
    "Diagnostic",
    "Dialect",
    "EncouragementCounter",
    "Event",
    "Extra",
    "FileReferenceBlock",
    "FileStatus",
    "ImageBlock",
    "ImageSource",
    "Loss",
    "LossAction",
    "LossReport",
    "MCPResourceBlock",
    "Message",
    "MessageEnd",
    "MessageStart",
    "NamedTool",
    "PathSource",
    "Policy",
    "ProviderTool",
    "Reasoning",
    "RecognitionMode",
    "Replay",
    "Request",
    "ResponseFormat",
    "ServerToolCallBlock",
    "ServerToolResultBlock",
    "Session",
    "StopReason",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "Tool",
    "ToolCallBegin",
    "ToolCallBlock",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallIds",
    "ToolChoice",
    "ToolError",
    "ToolResultMessage",
    "ToolStatus",
    "UnknownBlock",
    "UnknownMessage",
    "UrlSource",
    "Usage",
    "UsageEvent",
    "UserMessage",
    "UserSource",
    "assistant",
    "new_id",
    "new_ids",
    "now",
    "system_control",
    "tool_result",
    "user",
]

SCHEMA_VERSION = 1

# The integers of the schema, in the ranges of the Rust core's types (`rust/core/src/canonical.rs`),
# so that both sides read the same documents (docs/wire.md, "Numbers"). msgspec's bounds stop at
# 64-bit signed integers, so the top of a u64 is left to the core (a `__post_init__` check would
# cost ~0.17 us per Usage decoded, some 3-6% of a session's loads): Python reads a count beyond
# 2**64 - 1 that the core refuses.
_U64 = Annotated[int, msgspec.Meta(ge=0, extra_json_schema={"maximum": 2**64 - 1})]
_U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
_I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


StopReason = Literal[
    "end_turn", "length", "tool_use", "content_filter", "refusal", "pause", "error", "aborted", "unknown"
]
Approval = Literal["pending", "approved", "denied"]
ToolStatus = Literal["success", "error", "denied", "interrupted"]
FileStatus = Literal["pending", "resolved", "error"]
RecognitionMode = Literal["vision", "ocr", "auto"]
UserSource = Literal["direct", "broadcast", "synthetic", "context"]
"""``context``: context the system provides (an MCP resource, a file it attached), not typed by
anyone; sent as a user turn (see ``docs/formats.md``)."""
REAL_SOURCES: frozenset[str] = frozenset({"direct", "broadcast"})
"""The sources of a *real* user message (someone asked something: ``msgwire.context``, the
swarm's encouragement counter); ``synthetic`` and ``context`` messages are not."""


# --- bases ----------------------------------------------------------------------------------


class _Tagged(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False, tag_field="type"):
    """Base of every tagged object: messages, blocks, events.

    ``type`` is the ``"type"`` tag written in JSON (as on ``UnknownMessage`` / ``UnknownBlock``);
    type checkers see it as each class's own ``Literal``, so ``if event.type == "text_delta":``
    narrows a union to ``TextDelta``."""

    if not TYPE_CHECKING:

        @property
        def type(self) -> str:
            return self.__struct_config__.tag


class _Plain(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Base of untagged value objects nested inside tagged ones."""


class _Raw:
    """Shared behaviour of UnknownMessage and UnknownBlock: original JSON kept byte-for-byte."""

    __slots__ = ("raw", "type")
    kind: ClassVar[str]

    def __init__(self, raw: bytes | str, type: str) -> None:  # noqa: A002 - mirrors the JSON tag
        object.__setattr__(self, "raw", raw.encode() if isinstance(raw, str) else bytes(raw))
        object.__setattr__(self, "type", type)

    raw: bytes
    type: str

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def data(self) -> Any:
        """The original JSON, decoded to Python objects."""
        return msgspec.json.decode(self.raw)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.raw == other.raw

    def __hash__(self) -> int:
        return hash((type(self), self.raw))

    def __repr__(self) -> str:
        shown = self.raw if len(self.raw) <= 60 else self.raw[:57] + b"..."
        return f"{type(self).__name__}(type={self.type!r}, raw={shown!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.raw, self.type))


class UnknownBlock(_Raw):
    """A content block whose ``type`` this version does not know; written back unchanged."""

    __slots__ = ()
    kind = "block"


class UnknownMessage(_Raw):
    """A message whose ``type`` this version does not know; written back unchanged."""

    __slots__ = ()
    kind = "message"


# --- content blocks -------------------------------------------------------------------------


class CacheControl(_Plain, frozen=True, kw_only=True):
    """A prompt-caching breakpoint (Anthropic's ``cache_control``): the prefix of the request up
    to the block that carries it is cached. Other dialects have no per-block hint (OpenAI and
    Gemini cache prefixes on their own): it is reported as dropped there."""

    type: str = "ephemeral"
    ttl: str | None = None
    """How long the cache lives (``"5m"``, ``"1h"``)."""


class Citation(_Plain, frozen=True, kw_only=True):
    """A source that a text block cites: an Anthropic citation, a Responses annotation, a Gemini
    grounding support (one citation per source it names).

    ``kind`` is the provider's type (``web_search_result_location``, ``char_location``,
    ``url_citation``, ``file_citation``, ``grounding``, ...). ``start_index`` / ``end_index``
    are the cited span in the block's ``text``, in characters as Python indexes a ``str``
    (``None``: the citation is the whole block's, as Anthropic's are). ``raw`` is the provider's
    own object when it says more than the typed fields (an Anthropic ``encrypted_index``, a
    document index): written back unchanged to that provider, never to another.
    """

    kind: str
    url: str | None = None
    title: str | None = None
    cited_text: str | None = None
    start_index: _U64 | None = None
    end_index: _U64 | None = None
    raw: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class TextBlock(_Tagged, tag="text", frozen=True, kw_only=True):
    """Text. ``citations``: the sources it cites. ``item_id``: the id of the provider item it
    came in (a Responses ``message`` item; its text parts share it), sent back with it.
    ``cache_control``: a prompt-cache breakpoint after it (Anthropic)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["text"]]

    text: str
    citations: list[Citation] = msgspec.field(default_factory=list)
    item_id: str | None = None
    cache_control: CacheControl | None = None


class ThinkingBlock(_Tagged, tag="thinking", frozen=True, kw_only=True):
    """Model reasoning. ``signature`` must be sent back unchanged to the provider that made it;
    ``redacted`` holds the opaque data of a redacted (encrypted) thinking block; ``item_id`` is
    the id of the Responses ``reasoning`` item it came in (which a request needs to send it)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["thinking"]]

    thinking: str = ""
    signature: str | None = None
    redacted: str | None = None
    item_id: str | None = None


class UrlSource(_Tagged, tag="url", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["url"]]

    url: str


class Base64Source(_Tagged, tag="base64", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["base64"]]

    media_type: str
    data: str


class PathSource(_Tagged, tag="path", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["path"]]

    path: str
    media_type: str | None = None


ImageSource = Union[UrlSource, Base64Source, PathSource]


class ImageBlock(_Tagged, tag="image", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["image"]]

    source: ImageSource
    recognition_mode: RecognitionMode = "auto"
    recognized_text: str | None = None
    vision_analysis: str | None = None
    confidence: float | None = None
    mode_used: Literal["vision", "ocr"] | None = None
    error: str | None = None
    status: FileStatus = "pending"
    script: str | None = None
    """The script of the text (Tesseract's orientation and script detection), e.g. ``Latin``."""
    language: str | None = None
    """The language of the recognized text (ISO 639-1)."""
    notice: str | None = None
    """What the recognizer wants the user to know (vision unavailable, fell back to OCR, ...)."""
    attempts: _U32 = 0
    detail: Literal["auto", "low", "high"] | None = None
    """How closely the model looks (OpenAI's ``detail``)."""
    cache_control: CacheControl | None = None


class FileReferenceBlock(_Tagged, tag="file_reference", frozen=True, kw_only=True):
    """A file (or a 1-indexed, inclusive line range of it) the user pointed at."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["file_reference"]]

    path: str
    start_line: _I64 | None = None
    end_line: _I64 | None = None
    resolved_content: str | None = None
    status: FileStatus = "pending"
    error: str | None = None


class MCPResourceBlock(_Tagged, tag="mcp_resource", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["mcp_resource"]]

    server_name: str
    resource_uri: str
    content: str | None = None
    mime_type: str | None = None
    retrieved_at: _dt.datetime | None = None
    blob: str | None = None
    """Binary content, base64 (``content`` holds text content)."""
    status: FileStatus = "pending"
    error: str | None = None


# interned: the Rust core's hook (`_core.canonical_arguments`) knows it as the interned "{}"
_NO_ARGUMENTS = sys.intern("{}")


class ToolCallBlock(_Tagged, tag="tool_call", frozen=True, kw_only=True):
    """A call the model asked for. ``arguments`` is the JSON text exactly as the model sent it;
    ``malformed`` marks arguments received broken from a model (kept, never repaired);
    ``item_id`` is the id of the Responses ``function_call`` item (not the ``call_id``, which is
    ``id``)."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_call"]]

    id: str
    name: str
    arguments: str = _NO_ARGUMENTS
    approval: Approval = "pending"
    malformed: bool = False
    item_id: str | None = None
    cache_control: CacheControl | None = None

    # omit_defaults compares by identity: an equal "{}" (decoded, or built at run time) must be
    # the default object itself, or dumps would write it where the Rust core does not. A hook of
    # the core, not a method: msgspec calls it for every call decoded (a Python method cost 3% of
    # loads), with the block as its one argument.
    if TYPE_CHECKING:

        def __post_init__(self) -> None: ...

    else:
        __post_init__ = _core.canonical_arguments

    def parsed_arguments(self) -> Any:
        """``arguments`` decoded; an empty string means no arguments (``{}``)."""
        return msgspec.json.decode(self.arguments) if self.arguments.strip() else {}


class ServerToolCallBlock(_Tagged, tag="server_tool_call", frozen=True, kw_only=True):
    """A tool the provider ran itself (web search, code execution, MCP, ...), as the model called
    it: an Anthropic ``server_tool_use`` / ``mcp_tool_use`` block, a Responses built-in tool item
    (``web_search_call``, ``code_interpreter_call``, ...; its outcome is part of the item), or
    Gemini's grounding (``grounding_metadata``: the searches and what they found).

    ``kind`` is the provider's block or item type, ``dialect`` whose wire format ``raw`` (the
    provider's whole object, written back unchanged to that dialect) is in. ``arguments`` is
    the call's input as JSON text (Anthropic's ``input``, a Responses item's ``action`` or
    ``arguments``, Gemini's search queries). Another dialect cannot run it again: it follows
    ``Policy.server_tools``.
    """

    if TYPE_CHECKING:
        type: ClassVar[Literal["server_tool_call"]]

    id: str
    name: str
    arguments: str
    kind: str
    dialect: str
    raw: msgspec.Raw

    def data(self) -> Any:
        """``raw`` decoded to Python objects."""
        return msgspec.json.decode(self.raw)


class ServerToolResultBlock(_Tagged, tag="server_tool_result", frozen=True, kw_only=True):
    """The result of a server tool call, as a block of its own (Anthropic's
    ``web_search_tool_result``, ``web_fetch_tool_result``, ``code_execution_tool_result``,
    ``mcp_tool_result``, ...): ``tool_call_id`` is its call's ``id``, ``kind`` the provider's
    block type, ``is_error`` whether the tool failed. ``raw`` is the provider's whole block
    (its ``content`` is ``content()``), written back unchanged to ``dialect``."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["server_tool_result"]]

    tool_call_id: str
    kind: str
    is_error: bool = False
    dialect: str
    raw: msgspec.Raw

    def data(self) -> Any:
        """``raw`` decoded to Python objects."""
        return msgspec.json.decode(self.raw)

    def content(self) -> Any:
        """The provider's ``content`` of the result (search results, an error object, ...)."""
        return self.data().get("content")


# At run time msgspec sees only the known tags; type checkers also see the unknown fallback.
if TYPE_CHECKING:
    ContentBlock = Union[
        TextBlock,
        ThinkingBlock,
        ImageBlock,
        FileReferenceBlock,
        MCPResourceBlock,
        ToolCallBlock,
        ServerToolCallBlock,
        ServerToolResultBlock,
        UnknownBlock,
    ]
else:
    ContentBlock = Union[
        TextBlock,
        ThinkingBlock,
        ImageBlock,
        FileReferenceBlock,
        MCPResourceBlock,
        ToolCallBlock,
        ServerToolCallBlock,
        ServerToolResultBlock,
    ]


# --- messages -------------------------------------------------------------------------------


class Usage(_Plain, frozen=True, kw_only=True):
    input_tokens: _U64 = 0
    output_tokens: _U64 = 0
    cache_read_tokens: _U64 = 0
    cache_write_tokens: _U64 = 0
    reasoning_tokens: _U64 = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ToolError(_Plain, frozen=True, kw_only=True):
    message: str
    traceback: str | None = None
    recoverable: bool = True


class _Message(_Tagged, frozen=True, kw_only=True):
    id: str = msgspec.field(default_factory=new_id)
    timestamp: _dt.datetime = msgspec.field(default_factory=now)

    @property
    def text(self) -> str:
        """The text blocks joined (thinking, tool calls and attachments left out)."""
        content: list[Any] = getattr(self, "content", [])
        return "".join(b.text for b in content if type(b) is TextBlock)


class UserMessage(_Message, tag="user", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["user"]]

    content: list[ContentBlock] = msgspec.field(default_factory=list)
    source: UserSource = "direct"
    name: str | None = None
    """The participant's name (OpenAI Chat's ``name``)."""


class AssistantMessage(_Message, tag="assistant", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["assistant"]]

    content: list[ContentBlock] = msgspec.field(default_factory=list)
    stop_reason: StopReason | None = None
    raw_stop_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None
    name: str | None = None
    """The participant's name (OpenAI Chat's ``name``)."""

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        return [b for b in self.content if type(b) is ToolCallBlock]

    @property
    def thinking(self) -> str:
        return "".join(b.thinking for b in self.content if type(b) is ThinkingBlock)


class ToolResultMessage(_Message, tag="tool_result", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_result"]]

    tool_call_id: str
    tool_name: str | None = None
    content: list[ContentBlock] = msgspec.field(default_factory=list)
    is_error: bool = False
    status: ToolStatus = "success"
    error: ToolError | None = None
    started_at: _dt.datetime | None = None
    duration_ms: float | None = None
    structured_content: Any = None
    """The tool's output as JSON when it returned a value (kept whole; ``content`` is what the
    model is sent)."""
    cache_control: CacheControl | None = None


class SystemControlMessage(_Message, tag="system_control", frozen=True, kw_only=True):
    """A change of state of the conversation (mode change, branch switch, ...): kept in the
    history and the audit trail, never sent to a model."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["system_control"]]

    control: str
    params: dict[str, Any] = msgspec.field(default_factory=dict)


if TYPE_CHECKING:
    Message = Union[UserMessage, AssistantMessage, ToolResultMessage, SystemControlMessage, UnknownMessage]
else:
    Message = Union[UserMessage, AssistantMessage, ToolResultMessage, SystemControlMessage]


# --- session --------------------------------------------------------------------------------


class _Above:
    """What the convenience methods ``Session.to_rows`` / ``from_rows`` and ``Request.validate``
    delegate to, written in modules that stand on this one: ``codec.py`` sets the row functions
    and ``validate.py`` the rules when imported (``import msgwire`` imports both before anything
    can call them). So this module imports neither, and the wire layer has no import cycle
    (tests/test_layout.py)."""

    session_to_rows: ClassVar[Callable[[Session], list[dict[str, Any]]]]
    session_from_rows: ClassVar[Callable[..., Session]]
    validate: ClassVar[Callable[..., None]]


class Session(msgspec.Struct, kw_only=True):
    """A conversation: the versioned envelope that ``msgwire.dumps`` writes.

    Mutable (``append`` adds a message and moves ``updated_at``); the messages themselves are
    immutable, so ``clone()`` copies only the list and the metadata.
    """

    version: int = SCHEMA_VERSION
    id: str = msgspec.field(default_factory=new_id)
    system_prompt: str | None = None
    created_at: _dt.datetime = msgspec.field(default_factory=now)
    updated_at: _dt.datetime = msgspec.field(default_factory=now)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    messages: list[Message] = msgspec.field(default_factory=list)

    def append(self, *messages: Message) -> Session:
        """Add messages at the end; returns the session so calls can be chained."""
        self.messages.extend(messages)
        self.updated_at = now()
        return self

    def clone(self, *, new_id: bool = True) -> Session:
        """A deep copy that evolves independently (a fork). Blocks are immutable and shared; the
        lists, the metadata and the params are copied. The fork gets a new id unless ``new_id=False``."""
        from copy import deepcopy

        return Session(
            version=self.version,
            id=_new_id() if new_id else self.id,
            system_prompt=self.system_prompt,
            created_at=self.created_at,
            updated_at=self.updated_at,
            metadata=deepcopy(self.metadata),
            messages=[_fork(m) for m in self.messages],
        )

    def messages_for_model(self) -> list[Message]:
        """What a model should see: every message except ``system_control`` (and unknown ones,
        which no provider could read)."""
        return [m for m in self.messages if type(m) is not SystemControlMessage and type(m) is not UnknownMessage]

    def to_rows(self) -> list[dict[str, Any]]:
        """One database row per message, ``{"kind", "id", "timestamp", "data_json"}``."""
        return _Above.session_to_rows(self)

    @classmethod
    def from_rows(cls, rows: Any, **envelope: Any) -> Session:
        """The inverse of ``to_rows``; also reads legacy rows (``kind`` system / user /
        assistant / tool_call / tool_result with ``content`` or ``data_json``)."""
        return _Above.session_from_rows(rows, **envelope)


_new_id = new_id  # Session.clone's keyword shadows the function name


def _fork(message: Message) -> Message:
    """A copy of a message that shares nothing mutable with it: a frozen Struct still holds
    mutable containers (a content list, system_control params)."""
    if isinstance(message, SystemControlMessage):
        from copy import deepcopy

        return deepcopy(message)
    if isinstance(message, UnknownMessage):
        return message
    return msgspec.structs.replace(message, content=list(message.content))


# --- request formats (what msgwire.formats writes) ------------------------------------------

Dialect = Literal["openai", "anthropic", "ollama", "gemini", "openai-responses"]
"""A wire dialect: OpenAI Chat Completions (and compatible servers), Anthropic Messages, Ollama's
native API, Gemini ``generateContent``, OpenAI Responses."""

Replay = Literal["keep", "to_text", "drop"]
LossAction = Literal["drop", "to_text", "strip", "fallback", "placeholder", "rewrite"]
"""What a lossy step did: ``placeholder`` added an error result for a tool call without one
(``kind="tool_result"``), or sent an opening user message that had nothing to send as
``formats.EMPTY_MESSAGE`` (``kind="message"``); ``rewrite`` replaced a tool-call id the target
refuses (or one that repeats an earlier call's)."""
ToolCallIds = Literal["openai", "openai-responses", "anthropic", "mistral"]
"""A server's rule for tool-call ids, stricter than its dialect's (``to_request(...,
tool_call_ids=...)``): ``openai`` 1-40 characters, ``openai-responses`` 1-64, ``anthropic``
``^[a-zA-Z0-9_-]+$``, ``mistral`` exactly 9 letters or digits."""


def _object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class Tool(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A tool the model may call: ``parameters`` is the JSON Schema of its arguments.

    ``msgwire.formats.to_request(..., tools=[...])`` writes it as each dialect declares tools:
    OpenAI ``{"type": "function", "function": {name, description, parameters, strict}}``,
    Anthropic ``{name, description, input_schema, cache_control}``, Gemini
    ``functionDeclarations``. ``strict`` (OpenAI Chat and Responses) and ``cache_control``
    (Anthropic) are reported as dropped where the dialect has no such field.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = msgspec.field(default_factory=_object_schema)
    strict: bool | None = None
    cache_control: CacheControl | None = None


class NamedTool(msgspec.Struct, frozen=True, kw_only=True):
    """``tool_choice=NamedTool(name="get_weather")``: the model must call this tool."""

    name: str


ToolChoice = Union[Literal["auto", "none", "required"], NamedTool]
"""Which tool the model uses: ``auto`` (it decides), ``none``, ``required`` (some tool: Anthropic's
``any``, Gemini's ``ANY``), or one tool by name."""


class ResponseFormat(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Structured output: ``type`` ``text``, ``json_object`` (any JSON object) or ``json_schema``
    (JSON that follows ``schema``; ``name``, ``description`` and ``strict`` where the dialect
    takes them)."""

    type: Literal["text", "json_object", "json_schema"]
    name: str | None = None
    description: str | None = None
    schema: dict[str, Any] | None = None
    strict: bool | None = None


class Reasoning(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How much the model reasons: an ``effort`` (OpenAI, Gemini 3's ``thinkingLevel``, Ollama,
    Anthropic's adaptive thinking), a ``budget_tokens`` (Anthropic, Gemini 2.5), or off
    (``enabled=False``); ``summary`` asks for the reasoning text back (Responses' ``summary``,
    Gemini's ``includeThoughts``). A dialect given the other form gets the closest one, reported."""

    enabled: bool | None = None
    effort: str | None = None
    budget_tokens: int | None = None
    summary: str | None = None


class ProviderTool(msgspec.Struct, frozen=True, kw_only=True):
    """A provider's own tool that is not a function (Anthropic's ``web_search_20250305``, the
    Responses API's ``web_search``, Gemini's ``googleSearch``), kept whole for its dialect."""

    dialect: str
    tool: dict[str, Any]


class Extra(msgspec.Struct, frozen=True, kw_only=True):
    """Body fields of one dialect that msgwire has no canonical place for (``seed``, ``top_k``,
    ``safetySettings``...): written back to that dialect, reported as dropped for any other."""

    dialect: str
    fields: dict[str, Any]


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A whole model request, before a dialect shapes it: the conversation, the tools and every
    setting (``formats.read_request`` reads one from any dialect's body, ``formats.to_request``
    writes one; ``msgwire.validate`` checks the universal rules).

    ``model`` may be left out where it travels elsewhere (Gemini's URL, a provider's default).
    """

    model: str | None = None
    messages: list[Message] = msgspec.field(default_factory=list)
    system_prompt: str | None = None
    tools: list[Tool] = msgspec.field(default_factory=list)
    tool_choice: ToolChoice | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    response_format: ResponseFormat | None = None
    parallel_tool_calls: bool | None = None
    reasoning: Reasoning | None = None
    metadata: dict[str, Any] | None = None
    """Sent as the provider's request metadata (OpenAI, Responses; Anthropic's holds only a user id)."""
    user: str | None = None
    stream: bool | None = None
    system_cache_control: CacheControl | None = None
    """A cache breakpoint on the system prompt (Anthropic)."""
    provider_tools: list[ProviderTool] = msgspec.field(default_factory=list)
    extra: Extra | None = None

    def validate(self, *, messages: bool = True) -> None:
        """``msgwire.validate(request)``: raise ``ValidationError`` listing every problem the
        universal rules find (``messages=False``: all but the walk over the history)."""
        _Above.validate(self, messages=messages)


class Policy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How ``msgwire.formats.to_request`` replays blocks the target dialect cannot carry as they are.

    Blocks a dialect carries natively are always sent unchanged. "Foreign" thinking is thinking
    of an assistant message whose ``provider`` is another one, thinking without a signature
    (for a dialect whose thinking has one: Ollama's has none), or any thinking for a dialect
    whose requests have none (OpenAI Chat).

    - ``thinking``: foreign thinking is dropped (default), sent as ``<thinking>`` text (its
      signature stripped: ``to_text``), or sent as the target's thinking block (``keep``).
    - ``redacted_thinking``: foreign redacted thinking is dropped (default) or kept.
    - ``images``: the dialect's image part (``keep``, default: else the recognized text), only
      the recognized text (``to_text``), or nothing (``drop``).
    - ``file_reference`` / ``mcp_resource``: marked text (default) or nothing (``drop``).
    - ``unknown``: unknown blocks (and parts kept from another dialect) are dropped (default),
      written as they are (``keep``) or as their JSON text (``to_text``).
    - ``server_tools``: server tool calls and results of another dialect (which the target
      cannot run or show) are dropped (default) or sent as marked text with their JSON
      (``to_text``; ``keep`` is the same). Thinking a Responses request cannot send (no item
      id) follows ``thinking`` likewise.
    - ``malformed_arguments``: tool-call arguments that are not a JSON object, for a dialect
      that needs one (Anthropic, Ollama, Gemini): sent as ``{"_raw": "<the text>"}`` (``wrap``, default) or
      refused with ``DecodeError`` (``error``).

    Tool calls and results are not a matter of policy: every request pairs them as its provider
    requires (a result moved after its call, an orphan or repeated result dropped, an error
    result with the text of ``to_request(..., missing_result=...)`` for a call without one, the
    last message's calls included, and ids the target refuses replaced: see
    ``msgwire.formats``).
    """

    thinking: Replay = "drop"
    redacted_thinking: Replay = "drop"
    images: Replay = "keep"
    file_reference: Replay = "to_text"
    mcp_resource: Replay = "to_text"
    unknown: Replay = "drop"
    server_tools: Replay = "drop"
    malformed_arguments: Literal["wrap", "error"] = "wrap"


class Loss(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One lossy step of a request conversion: ``message`` indexes the input messages,
    ``block`` that message's content (``None`` for the message itself); ``message`` is ``None``
    for a step of the request's settings (``kind`` names the setting: ``temperature``,
    ``tool_choice``, ``reasoning``, ``setting`` for an extra field...). A placeholder result is
    reported at its call (``kind="tool_result"``, ``action="placeholder"``), a replaced id too
    (``kind="tool_call_id"``, ``action="rewrite"``)."""

    message: int | None
    block: int | None
    kind: str
    action: LossAction
    reason: str


class LossReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every lossy step of one ``convert_request`` call, in input order (a
    message's own steps after those of its blocks)."""

    entries: list[Loss] = msgspec.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def by_kind(self, kind: str) -> list[Loss]:
        return [e for e in self.entries if e.kind == kind]


class Converted(msgspec.Struct, frozen=True, kw_only=True):
    """A body written by ``formats.convert_request`` / ``convert_response``: the JSON bytes and
    the report of every lossy step."""

    body: bytes
    report: LossReport

    def dict(self) -> dict[str, Any]:
        """The body decoded."""
        decoded: dict[str, Any] = msgspec.json.decode(self.body)
        return decoded

    def json(self) -> bytes:
        return self.body


# --- context (what msgwire.context.build sends) -------------------------------------------


class EncouragementCounter(msgspec.Struct, frozen=True, kw_only=True):
    """How many builds in a row had to add a synthetic user message (no real user message in
    the history at all); ``idle`` once that reaches ``IDLE_AFTER`` (3).

    Immutable: ``msgwire.context.build`` returns the next state as ``Context.counter`` and
    leaves the one passed in untouched, so building twice for one turn (a retry, a token
    count) never counts twice. Keep ``ctx.counter`` and pass it to the next build.
    """

    IDLE_AFTER: ClassVar[int] = 3

    count: int = 0

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"count must not be negative, got {self.count}")

    @property
    def idle(self) -> bool:
        """``count >= 3``: three or more synthetic insertions in a row, no real user message since."""
        return self.count >= self.IDLE_AFTER

    def after(self, *, synthetic: bool, real_user: bool) -> EncouragementCounter:
        """The next state: reset to 0 when a real user message was seen (it wins over a
        synthetic one), one more when a synthetic message was inserted, unchanged otherwise."""
        if real_user:
            return EncouragementCounter()
        if synthetic:
            return EncouragementCounter(count=self.count + 1)
        return self


class Context(msgspec.Struct, frozen=True, kw_only=True):
    """What to send for one model call, as ``msgwire.context.build`` chose it: the system
    prompt first, then ``messages`` in order (see ``msgwire.context`` for the guarantees).

    ``pinned`` and ``synthetic`` are the user message added in front of the window, if any
    (both are also in ``messages``; at most one is set). ``window_start`` indexes
    ``session.messages_for_model()``: what lies before it was left out (but ``pinned``).
    """

    system_prompt: str | None
    messages: list[Message]
    pinned: UserMessage | None
    synthetic: UserMessage | None
    counter: EncouragementCounter
    window_start: int

    @property
    def idle(self) -> bool:
        """``counter.idle``: this build made the third (or a later) synthetic insertion in a row."""
        return self.counter.idle


# --- stream events --------------------------------------------------------------------------


class MessageStart(_Tagged, tag="message_start", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["message_start"]]

    message_id: str | None = None
    response_id: str | None = None
    model: str | None = None
    provider: str | None = None


class TextDelta(_Tagged, tag="text_delta", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["text_delta"]]

    text: str
    index: int = 0


class ThinkingDelta(_Tagged, tag="thinking_delta", frozen=True, kw_only=True):
    """Reasoning text; or the block's ``signature`` (a piece of it); or, for a redacted block,
    its opaque ``redacted`` data."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["thinking_delta"]]

    thinking: str = ""
    signature: str | None = None
    redacted: str | None = None
    index: int = 0


class ToolCallBegin(_Tagged, tag="tool_call_begin", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_call_begin"]]

    index: int
    id: str
    name: str


class ToolCallDelta(_Tagged, tag="tool_call_delta", frozen=True, kw_only=True):
    """A raw fragment of a call's arguments; ``parsed`` holds the arguments parsed so far when
    the stream was asked for partial arguments (``UNSET`` otherwise)."""

    # (Not in the docstring, which the JSON schema carries.) A stream computes `parsed` when it
    # is first read, from the previous delta's value when deltas are read in order: finished
    # parts (the done items of a list) are shared between the values of successive deltas, so
    # treat them as read-only. See _deferred_field below and msgwire/_partialargs.py.

    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_call_delta"]]

    index: int
    fragment: str
    parsed: Any = msgspec.UNSET


# The types of values that stand for a field computed when first read (their ``value()``):
# a stream's partial arguments, ``msgwire._core.PartialArgs`` (registered by ``_partialargs``).
# Reading the field, ``msgwire.dumps``, equality, hashing and ``repr`` give the value.
_DEFERRED: set[type] = set()


def _deferred_field(cls: type[msgspec.Struct], name: str) -> None:
    """Make reading ``cls.name`` resolve a deferred value (``_DEFERRED``). msgspec keeps each
    field in a slot whose descriptor is the class attribute: it is wrapped in a property here,
    and the encoder, equality and ``__struct_fields__`` still read the slot itself."""
    slot = cls.__dict__[name]
    deferred = _DEFERRED

    def read(self: msgspec.Struct) -> Any:
        value = slot.__get__(self, cls)
        return value.value() if type(value) in deferred else value

    setattr(cls, name, property(read, doc=slot.__doc__))


# The slot of ToolCallDelta.parsed: a stream writes its deferred value there as it makes the event,
# through `_parsed_mark`, the slot under a name the property does not hide (`_core.Marks` reads
# and sets it as a plain attribute: a ninth of the cost of calling the slot's `__get__`).
_parsed_slot = ToolCallDelta.__dict__["parsed"]
_deferred_field(ToolCallDelta, "parsed")
setattr(ToolCallDelta, "_parsed_mark", _parsed_slot)  # noqa: B010 - not a field: type checkers need not see it


class ToolCallEnd(_Tagged, tag="tool_call_end", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["tool_call_end"]]

    index: int
    block: ToolCallBlock


class BlockEnd(_Tagged, tag="block_end", frozen=True, kw_only=True):
    """A block that arrives whole rather than as deltas (a server tool call or result): the
    whole block, at ``index`` of the message's content."""

    if TYPE_CHECKING:
        type: ClassVar[Literal["block_end"]]

    index: int
    block: ContentBlock


class UsageEvent(_Tagged, tag="usage", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["usage"]]

    usage: Usage


class MessageEnd(_Tagged, tag="message_end", frozen=True, kw_only=True):
    if TYPE_CHECKING:
        type: ClassVar[Literal["message_end"]]

    stop_reason: StopReason | None = None
    raw_stop_reason: str | None = None


Event = Union[
    MessageStart, TextDelta, ThinkingDelta, ToolCallBegin, ToolCallDelta, ToolCallEnd, BlockEnd, UsageEvent, MessageEnd
]


class Diagnostic(_Plain, frozen=True, kw_only=True):
    """Something unusual a stream did that the decoder handled (a tool call without index, a
    second finish, ...): recorded, never merged silently. ``offset`` is a byte offset."""

    code: str
    message: str
    offset: int = 0


# --- short constructors ---------------------------------------------------------------------


_BLOCKS = (
    TextBlock,
    ThinkingBlock,
    ImageBlock,
    FileReferenceBlock,
    MCPResourceBlock,
    ToolCallBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    UnknownBlock,
)


def _blocks(content: str | ContentBlock | list[ContentBlock]) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)]
    if isinstance(content, list):
        return content  # its items are not checked: these are on hot paths
    if isinstance(content, _BLOCKS):
        return [content]
    raise TypeError(f"content is text, a content block or a list of blocks, got {type(content).__name__}")


def user(content: str | ContentBlock | list[ContentBlock], **fields: Any) -> UserMessage:
    """``user("hi")``: a user message from a string, a block, or a list of blocks."""
    return UserMessage(content=_blocks(content), **fields)


def assistant(content: str | ContentBlock | list[ContentBlock] = "", **fields: Any) -> AssistantMessage:
    """``assistant("hello")``: an assistant message (an empty string gives no blocks)."""
    return AssistantMessage(content=_blocks(content) if content != "" else [], **fields)


def tool_result(
    tool_call_id: str, content: str | ContentBlock | list[ContentBlock], **fields: Any
) -> ToolResultMessage:
    """``tool_result(call.id, "42")``: the output of a tool call."""
    if not isinstance(tool_call_id, str):
        raise TypeError(f"tool_call_id is the id of the tool call (a str), got {type(tool_call_id).__name__}")
    return ToolResultMessage(tool_call_id=tool_call_id, content=_blocks(content), **fields)


def system_control(control: str, **params: Any) -> SystemControlMessage:
    """``system_control("mode_change", old="plan", new="act")``."""
    return SystemControlMessage(control=control, params=params)
