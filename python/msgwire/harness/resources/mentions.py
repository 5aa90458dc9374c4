"""``@path`` mentions in user text, turned into ``FileReferenceBlock``s.

Syntax (the mention ends at white space; trailing ``.``, ``,``, ``!``, ``?`` are sentence
punctuation, not part of the path):

- ``@src/app.py``: the whole file;
- ``@src/app.py:10`` or ``@src/app.py#L10``: line 10 alone;
- ``@src/app.py:10-20`` or ``@src/app.py#L10-L20``: lines 10 to 20, 1-indexed, inclusive;
- ``@"docs/my notes.md":3-5``: a quoted path may hold spaces.

A range that is not one (``@src/app.py:abc``, ``@src/app.py:-3``, ``@src/app.py#L2-x``) is refused
with the reason: its block comes with ``status="error"``, never the whole file read instead. A
colon followed by white space or at the end is punctuation (``see @app.py: it fails``), and
``#`` not followed by ``L`` and a digit is an anchor (``@README.md#Lists``): both mention the
whole file.

What stays text: an ``@`` inside a word (``alice@example.com``), an ``@handle`` that does not
look like a path (no ``/``, no ``.``, not quoted, no line range; ``exists`` may still accept
it, e.g. ``@Makefile``), a bare ``@`` or ``@/``, and anything inside backticks (code such as
```@app.route```).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import msgspec

from msgwire.types import ContentBlock, FileReferenceBlock, TextBlock, UserMessage

__all__ = ["Mention", "find_mentions", "normalize_path", "parse_mentions"]

_MENTION = re.compile(
    r"""
    (?<![\w@./\\])                                  # not inside a word, an e-mail address or a path
    @
    (?: "(?P<quoted>[^"\n]+)" | (?P<bare>[^\s"'`<>()\[\]{},;:#]+) )
    (?: :(?P<colon>[^\s"'`<>()\[\]{},;]+)               # :10 or :10-20, or what is typed there instead
      | \#L(?P<hash>[\d-][^\s"'`<>()\[\]{},;]*)          # #L10 or #L10-L20 (#Lists is an anchor)
    )?
    """,
    re.VERBOSE,
)
_COLON_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_HASH_RANGE = re.compile(r"(\d+)(?:-L?(\d+))?")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_TRAILING = ".!?"


class Mention(msgspec.Struct, frozen=True, kw_only=True):
    """One mention found in a text: ``text[start:end]`` is what was typed (``typed``)."""

    typed: str
    start: int
    end: int
    path: str
    start_line: int | None = None
    end_line: int | None = None
    error: str | None = None
    """Why the mention is refused (a line range that is not one); ``None`` for a good one."""

    def block(self) -> FileReferenceBlock:
        """The pending reference, or for a refused mention a failed one saying why."""
        if self.error is not None:
            return FileReferenceBlock(path=self.path, status="error", error=self.error)
        return FileReferenceBlock(path=self.path, start_line=self.start_line, end_line=self.end_line)


def normalize_path(path: str) -> str:
    """``./src/../src/a.py`` -> ``src/a.py``: lexical only (symlinks are the resolver's business);
    leading ``..`` segments are kept, for the resolver to refuse."""
    if not path:
        return path
    return posixpath.normpath(path)


def _looks_like_path(bare: str) -> bool:
    return "/" in bare or "." in bare or bare.startswith("~")


def find_mentions(text: str, *, exists: Callable[[str], bool] | None = None) -> list[Mention]:
    """Every mention in ``text``, in order (duplicates included).

    ``exists(path)``: lets a bare name without ``/`` or ``.`` (``@Makefile``) count as a path
    when it names a file; without it such a name is a handle and stays text.
    """
    code = [m.span() for m in _CODE.finditer(text)] if "`" in text else []
    found = []
    for m in _MENTION.finditer(text):
        if any(a <= m.start() < b for a, b in code):
            continue
        end = m.end()
        quoted, bare = m.group("quoted"), m.group("bare")
        typed_range, syntax = (m.group("colon"), _COLON_RANGE) if m.group("colon") else (m.group("hash"), _HASH_RANGE)
        if typed_range is not None:  # sentence punctuation after the range is not part of it
            stripped = typed_range.rstrip(_TRAILING)
            end -= len(typed_range) - len(stripped)
            typed_range = stripped
        elif bare is not None:
            stripped = bare.rstrip(_TRAILING)
            end -= len(bare) - len(stripped)
            bare = stripped
        path = quoted if quoted is not None else bare
        if not path or path.strip() in ("/", "."):
            continue
        lines = syntax.fullmatch(typed_range) if typed_range else None
        handle = bare is not None and lines is None and not _looks_like_path(bare)
        if handle and (exists is None or not exists(path)):
            continue
        typed = text[m.start() : end]
        first = int(lines.group(1)) if lines else None
        last = int(lines.group(2)) if lines and lines.group(2) else first
        error = None
        if typed_range and lines is None:
            form = ":10 or :10-20" if syntax is _COLON_RANGE else "#L10 or #L10-L20"
            error = f"{typed!r}: {typed_range!r} is not a line range (write {form}, lines counted from 1)"
        found.append(
            Mention(
                typed=typed,
                start=m.start(),
                end=end,
                path=normalize_path(path),
                start_line=first,
                end_line=last,
                error=error,
            )
        )
    return found


def parse_mentions(message: UserMessage, *, exists: Callable[[str], bool] | None = None) -> UserMessage:
    """``message`` with one ``FileReferenceBlock`` (status ``pending``, or ``error`` for a refused
    mention) appended per distinct mention in its text blocks; the text stays as typed. A mention
    the message already has a block for (same normalised path and lines, or the same refusal)
    adds nothing, so parsing twice changes nothing. Returns ``message`` itself when there is
    nothing to add (same id either way)."""
    references = [b for b in message.content if type(b) is FileReferenceBlock]
    have: set[tuple[str, int | None, int | None] | str] = {(b.path, b.start_line, b.end_line) for b in references}
    have |= {b.error for b in references if b.error is not None}
    added: list[ContentBlock] = []
    for block in message.content:
        if type(block) is not TextBlock or "@" not in block.text:
            continue
        for mention in find_mentions(block.text, exists=exists):
            key = mention.error or (mention.path, mention.start_line, mention.end_line)
            if key not in have:
                have.add(key)
                added.append(mention.block())
    if not added:
        return message
    return msgspec.structs.replace(message, content=[*message.content, *added])
