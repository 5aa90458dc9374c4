"""What goes into a context: file references, images, MCP resources (work in progress)."""

from __future__ import annotations

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

__all__ = [
    "SENSITIVE_FILES",
    "VISION_PROMPT",
    "FileResolver",
    "ImageData",
    "ImageLimits",
    "ImageRecognizer",
    "Mention",
    "OCREngine",
    "Rules",
    "UrlFetcher",
    "VisionModel",
    "find_mentions",
    "is_public_address",
    "load_image",
    "normalize_path",
    "parse_mentions",
    "sniff_image",
]
