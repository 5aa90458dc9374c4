"""What goes into a context: file references, images (OCR and vision), MCP resources.

The agent loop calls one function before each request::

    history = resources.resolve(history, [files, images, mcp], role="user")
    # persist the messages that changed (`new is not old`): their blocks now say resolved / error
    ctx = msgwire.context.build(session_with(history), window=20)
    pruned = budget.prune(ctx.messages)          # a TokenBudget: MCP resources, LRU first
    audit.extend(pruned.removed)                 # one PruneRecord per resource left out
    send(pruned.messages)

``resolve`` fills every *pending* block, each resolver its own kind (``Resolver``: file
references through a ``FileResolver``, images through an ``ImageRecognizer``, MCP resources
through ``MCPResources``); resolved or failed blocks are left as they are (a
failed image is retried with ``ImageRecognizer.retry``), so resolving twice reads nothing twice.
It never raises for a bad reference: each outcome is the block's ``status`` and ``error``.
Messages with nothing to resolve come back as the same objects.

Where each piece lives: ``mentions`` (``parse_mentions``: ``@path:10-20`` in user text),
``files`` (``FileResolver``), ``images`` (sources, limits, URL fetch, ``ImageRecognizer``),
``ocr`` (Tesseract, extra ``ocr``), ``mcp`` (``MCPResources``, extra ``mcp``), ``budget``
(``TokenBudget``). ``TesseractOCR``, ``MCPResources`` and ``Freshness`` are importable from here
too, and load their extra only when first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from msgwire.types import Message

from .budget import Pruned, PruneRecord, TokenBudget, TokenCounter, estimate_tokens
from .files import SENSITIVE_FILES, FileResolver, Rules
from .images import (
    VISION_PROMPT,
    ImageData,
    ImageLimits,
    ImageRecognizer,
    OCREngine,
    UrlFetcher,
    VisionModel,
    is_public_address,
    load_image,
    sniff_image,
)
from .mentions import Mention, find_mentions, normalize_path, parse_mentions
from .resolver import Resolver

if TYPE_CHECKING:
    from .mcp import Freshness, MCPResources
    from .ocr import TesseractOCR

__all__ = [
    "SENSITIVE_FILES",
    "VISION_PROMPT",
    "FileResolver",
    "Freshness",
    "ImageData",
    "ImageLimits",
    "ImageRecognizer",
    "MCPResources",
    "Mention",
    "OCREngine",
    "PruneRecord",
    "Pruned",
    "Resolver",
    "Rules",
    "TesseractOCR",
    "TokenBudget",
    "TokenCounter",
    "UrlFetcher",
    "VisionModel",
    "estimate_tokens",
    "find_mentions",
    "is_public_address",
    "load_image",
    "normalize_path",
    "parse_mentions",
    "resolve",
    "sniff_image",
]

_LAZY = {"MCPResources": "mcp", "Freshness": "mcp", "TesseractOCR": "ocr"}


def __getattr__(name: str) -> Any:
    """The classes of the optional extras, imported on first use (``import msgwire.harness.resources``
    needs neither ``mcp`` nor ``tesserocr``)."""
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve(messages: Sequence[Message], resolvers: Sequence[Resolver], *, role: str = "user") -> list[Message]:
    """``messages`` with their pending blocks resolved by each resolver in turn (see the module
    docs); ``role`` is who asks, for the file permissions (and image paths)."""
    out = []
    for message in messages:
        for resolver in resolvers:
            message = resolver.resolve_message(message, role)
        out.append(message)
    return out
