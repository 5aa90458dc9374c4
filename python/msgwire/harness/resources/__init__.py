"""What goes into a context: file references, images, MCP resources (work in progress)."""

from __future__ import annotations

from .files import SENSITIVE_FILES, FileResolver, Rules
from .mentions import Mention, find_mentions, normalize_path, parse_mentions

__all__ = ["SENSITIVE_FILES", "FileResolver", "Mention", "Rules", "find_mentions", "normalize_path", "parse_mentions"]
