"""msgwire: typed, provider-agnostic LLM conversation messages with a Rust core.

The names below are imported from their submodules when first used (PEP 562's module
``__getattr__``), so that ``import msgwire`` costs next to nothing and a program (``msgwire
--help``, a tool that only reads sessions) loads only what it uses; type checkers read the
imports under ``TYPE_CHECKING``. ``__all__``, ``_EXPORTS`` and those imports name the same things
(tests/test_startup.py checks it).
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
from types import ModuleType as _ModuleType

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (10+ ms): type checkers read it as true

if TYPE_CHECKING:
    from . import _core as _core
    from . import context as context  # the submodule: `from msgwire import context`
    from . import formats as formats  # the submodule: `from msgwire import formats`
    from .codec import dumps, loads
    from .errors import (
        DecodeError,
        LimitExceededError,
        MalformedStreamError,
        MsgwireError,
        ProviderError,
        StreamError,
        TransportError,
        TruncatedStreamError,
        UsageError,
        ValidationError,
    )
    from .formats import (
        from_request,
        from_response,
        read_request,
        to_request,
        to_response,
        to_response_json,
    )
    from .stream import (
        AsyncStream,
        Decoder,
        Stream,
        assemble,
        astream,
        stream,
    )
    from .transcode import Transcoder, atranscode, transcode
    from .types import (
        SCHEMA_VERSION,
        AssistantMessage,
        Base64Source,
        BlockEnd,
        CacheControl,
        Citation,
        ContentBlock,
        Converted,
        Diagnostic,
        Dialect,
        Event,
        FileReferenceBlock,
        ImageBlock,
        Loss,
        LossReport,
        MCPResourceBlock,
        Message,
        MessageEnd,
        MessageStart,
        NamedTool,
        PathSource,
        Policy,
        Reasoning,
        Request,
        ResponseFormat,
        ServerToolCallBlock,
        ServerToolResultBlock,
        Session,
        SystemControlMessage,
        TextBlock,
        TextDelta,
        ThinkingBlock,
        ThinkingDelta,
        Tool,
        ToolCallBegin,
        ToolCallBlock,
        ToolCallDelta,
        ToolCallEnd,
        ToolError,
        ToolResultMessage,
        UnknownBlock,
        UnknownMessage,
        UrlSource,
        Usage,
        UsageEvent,
        UserMessage,
        assistant,
        new_id,
        system_control,
        tool_result,
        user,
    )
    from .validate import validate

    __version__: str

# Each public name and the submodule that defines it.
_EXPORTS: dict[str, str] = {
    # codec
    "dumps": "codec",
    "loads": "codec",
    # errors
    "DecodeError": "errors",
    "LimitExceededError": "errors",
    "MalformedStreamError": "errors",
    "MsgwireError": "errors",
    "ProviderError": "errors",
    "StreamError": "errors",
    "TransportError": "errors",
    "TruncatedStreamError": "errors",
    "UsageError": "errors",
    "ValidationError": "errors",
    # formats
    "from_request": "formats",
    "from_response": "formats",
    "read_request": "formats",
    "to_request": "formats",
    "to_response": "formats",
    "to_response_json": "formats",
    # stream
    "AsyncStream": "stream",
    "Decoder": "stream",
    "Stream": "stream",
    "assemble": "stream",
    "astream": "stream",
    "stream": "stream",
    # transcode
    "Transcoder": "transcode",
    "atranscode": "transcode",
    "transcode": "transcode",
    # types
    "SCHEMA_VERSION": "types",
    "AssistantMessage": "types",
    "Base64Source": "types",
    "BlockEnd": "types",
    "CacheControl": "types",
    "Citation": "types",
    "ContentBlock": "types",
    "Converted": "types",
    "Diagnostic": "types",
    "Dialect": "types",
    "Event": "types",
    "FileReferenceBlock": "types",
    "ImageBlock": "types",
    "Loss": "types",
    "LossReport": "types",
    "MCPResourceBlock": "types",
    "Message": "types",
    "MessageEnd": "types",
    "MessageStart": "types",
    "NamedTool": "types",
    "PathSource": "types",
    "Policy": "types",
    "Reasoning": "types",
    "Request": "types",
    "ResponseFormat": "types",
    "ServerToolCallBlock": "types",
    "ServerToolResultBlock": "types",
    "Session": "types",
    "SystemControlMessage": "types",
    "TextBlock": "types",
    "TextDelta": "types",
    "ThinkingBlock": "types",
    "ThinkingDelta": "types",
    "Tool": "types",
    "ToolCallBegin": "types",
    "ToolCallBlock": "types",
    "ToolCallDelta": "types",
    "ToolCallEnd": "types",
    "ToolError": "types",
    "ToolResultMessage": "types",
    "UnknownBlock": "types",
    "UnknownMessage": "types",
    "UrlSource": "types",
    "Usage": "types",
    "UsageEvent": "types",
    "UserMessage": "types",
    "assistant": "types",
    "new_id": "types",
    "system_control": "types",
    "tool_result": "types",
    "user": "types",
    # validate
    "validate": "validate",
}
# The submodules an `import msgwire` used to load, and so reached as attributes without an import
# of their own (`msgwire.formats.RequestCache`).
_SUBMODULES = frozenset(
    {
        "_core",
        "_corestream",
        "_ids",
        "_partialargs",
        "_source",
        "codec",
        "context",
        "errors",
        "formats",
        "legacy",
        "stream",
        "transcode",
        "types",
        "validate",
    }
)

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        if name in _EXPORTS:
            value = getattr(_importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        elif name == "__version__":
            value = _importlib.import_module("._core", __name__).__version__
        elif name in _SUBMODULES:
            return _importlib.import_module(f".{name}", __name__)  # the import binds it here
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # the next use is a plain attribute read
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__, *_SUBMODULES})

    class _Package(_ModuleType):
        """``msgwire`` itself: ``stream``, ``transcode`` and ``validate`` name both a function
        and the submodule that defines it, and the function wins (as when ``__init__`` imported
        them): the import system's binding of the submodule to its name is not kept, whenever
        and by whom that submodule is first imported."""

        def __setattr__(self, name: str, value: object) -> None:
            if isinstance(value, _ModuleType) and _EXPORTS.get(name) == name:
                return
            super().__setattr__(name, value)

    _sys.modules[__name__].__class__ = _Package


__all__ = [
    "SCHEMA_VERSION",
    "AssistantMessage",
    "AsyncStream",
    "Base64Source",
    "BlockEnd",
    "CacheControl",
    "Citation",
    "ContentBlock",
    "Converted",
    "DecodeError",
    "Decoder",
    "Diagnostic",
    "Dialect",
    "Event",
    "FileReferenceBlock",
    "ImageBlock",
    "LimitExceededError",
    "Loss",
    "LossReport",
    "MCPResourceBlock",
    "MalformedStreamError",
    "Message",
    "MessageEnd",
    "MessageStart",
    "MsgwireError",
    "NamedTool",
    "PathSource",
    "Policy",
    "ProviderError",
    "Reasoning",
    "Request",
    "ResponseFormat",
    "ServerToolCallBlock",
    "ServerToolResultBlock",
    "Session",
    "Stream",
    "StreamError",
    "SystemControlMessage",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "Tool",
    "ToolCallBegin",
    "ToolCallBlock",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolError",
    "ToolResultMessage",
    "Transcoder",
    "TransportError",
    "TruncatedStreamError",
    "UnknownBlock",
    "UnknownMessage",
    "UrlSource",
    "Usage",
    "UsageError",
    "UsageEvent",
    "UserMessage",
    "ValidationError",
    "__version__",
    "assemble",
    "assistant",
    "astream",
    "atranscode",
    "dumps",
    "from_request",
    "from_response",
    "loads",
    "new_id",
    "read_request",
    "stream",
    "system_control",
    "to_request",
    "to_response",
    "to_response_json",
    "tool_result",
    "transcode",
    "user",
    "validate",
]
