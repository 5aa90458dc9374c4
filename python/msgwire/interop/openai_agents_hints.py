"""What the bytes of a Chat Completions reply say that msgwire's events do not, and openai-agents'
Chat Completions model tells apart: whether the model's thinking came as ``reasoning_content``
(DeepSeek, xAI, llama.cpp: a reasoning *summary* for openai-agents) or as ``reasoning``
(OpenRouter, Groq, Vercel: reasoning *text*), and whether its text is a ``refusal``. msgwire
reads both fields as thinking and a refusal as text with ``stop_reason="refusal"`` at the end;
``MsgwireModel`` reads the reply's bytes as they pass (the provider's ``tap``) to give the same
items and events.

Only field names are looked for, each a key with a string value that is not empty: a JSON
string's own quotes are escaped, so ``"reasoning":"`` never matches inside a text. A key split
between two pieces of the body is found (the last bytes of a piece are kept)."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["ChatHints"]

_KEYS = re.compile(rb'"(reasoning_content|reasoning|refusal|content)"\s*:\s*"(?!")')
_KEEP = 40  # bytes of a piece kept for a key split across two pieces: longer than any key above


class ChatHints:
    """Fed every piece of a Chat Completions reply (``tap``); says which field the thinking and
    the text came in, so far."""

    __slots__ = ("_tail", "content", "reasoning", "reasoning_content", "refusal")

    def __init__(self) -> None:
        self._tail = b""
        self.reasoning_content = self.reasoning = self.refusal = self.content = False

    def tap(self, headers: Mapping[str, str], piece: bytes) -> None:
        data = self._tail + piece if self._tail else piece
        for match in _KEYS.finditer(data):
            setattr(self, match.group(1).decode(), True)
        self._tail = data[-_KEEP:]

    @property
    def reasoning_text(self) -> bool:
        """The thinking came as ``reasoning`` only: openai-agents makes it reasoning text."""
        return self.reasoning and not self.reasoning_content

    @property
    def refusing(self) -> bool:
        """The text came as ``refusal`` only: openai-agents makes it a refusal."""
        return self.refusal and not self.content
