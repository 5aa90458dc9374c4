"""The Python examples of ``README.md`` and ``docs/**/*.md``, read off their Markdown fences.

``tests/test_docs.py`` runs every example and ``tests/test_typing.py`` type-checks every one
with ``mypy --strict``; both name an example by where it stands, ``file:line`` (the line of
its opening fence), e.g. ``docs/guide/streams.md:42``. The conventions, in the fence's info
string (GitHub renders by its first word and ignores the rest):

- ```` ```python ````: a whole program, standing alone (no block continues another). It runs
  in a fresh interpreter with warnings as errors, an empty temporary directory as its working
  directory and no API keys in the environment, and must exit 0, print nothing on standard
  error (nor log a warning) and leave nothing in the repository: a model is
  ``msgwire.testing.ScriptedServer`` (or an httpx ``MockTransport``), never the network. Its
  own ``assert``s say what it shows. It reads the files it
  needs from msgwire's package data (``importlib.resources.files("msgwire")``), so that a
  reader can run it anywhere; one that shows a recording of the repository's test suite reads
  it as ``tests/fixtures/...``, the path from a checkout's root (the working directory holds
  that link).
- ```` ```python test="skip: REASON" ````: type-checked only, not run (it needs an API key,
  the network, a server of the reader's own); ``REASON`` is the skip's reason.
- ```` ```text output ````: what the nearest Python block above it prints, compared exactly.
- Other fences (``sh``, plain ``text``, no language) are not read.

Indented fences (in a list item) are read too: a block's lines lose the fence's indentation.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = frozenset({"python", "py", "python3"})

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Example:
    """One Python block: where it stands, its text, its settings and the output shown for it."""

    path: str  # relative to the repository root, with forward slashes
    line: int  # the line of the opening fence, from 1
    code: str
    settings: dict[str, str] = field(default_factory=dict)
    output: str | None = None

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def skip(self) -> str | None:
        """Why the block is not run (``test="skip: REASON"``), or ``None`` when it runs."""
        test = self.settings.get("test")
        if test is None:
            return None
        if not test.startswith("skip"):
            raise ValueError(f'{self.id}: test="{test}": the only setting is test="skip: REASON"')
        return test.removeprefix("skip").lstrip(" :-") or "not run"

    @property
    def module(self) -> str:
        """A module name for the block's text in a folder of its own (for mypy), unique per
        block: ``docs_guide_streams_md_42``."""
        return re.sub(r"\W", "_", self.id.replace(":", "_"))

    def source_line(self, line: int) -> int:
        """The Markdown line of the block's ``line`` (from 1)."""
        return self.line + line

    @property
    def padded(self) -> str:
        """The block's text after blank lines, one per line above it: compiled under the
        Markdown file's name, its tracebacks point at ``file:line``."""
        return "\n" * self.line + self.code


def markdown_files() -> list[Path]:
    """README.md, then every Markdown file under docs/, in name order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples(paths: list[Path] | None = None) -> list[Example]:
    """Every Python block of ``paths`` (by default ``markdown_files()``), in order."""
    found: list[Example] = []
    for path in markdown_files() if paths is None else paths:
        found += read(path.read_text(), path.relative_to(ROOT).as_posix())
    return found


def read(markdown: str, path: str) -> list[Example]:
    """The Python blocks of one Markdown text, each with the output block that follows it."""
    found: list[Example] = []
    lines = markdown.splitlines(keepends=True)
    n = 0
    while n < len(lines):
        opening = _OPEN.match(lines[n].rstrip("\r\n"))
        if not opening:
            n += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        words = shlex.split(opening["info"].strip())
        closing = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((m for m in range(n + 1, len(lines)) if closing.match(lines[m].rstrip("\r\n"))), None)
        if end is None:
            raise ValueError(f"{path}:{n + 1}: a fence that is never closed")
        body = "".join(line.removeprefix(indent) for line in lines[n + 1 : end])
        language, flags, settings = _info(words)
        if language in PYTHON:
            found.append(Example(path, n + 1, body, settings))
        elif language == "text" and "output" in flags:
            if not found or found[-1].output is not None:
                raise ValueError(f"{path}:{n + 1}: an output block with no Python block of its own above it")
            last = found[-1]
            found[-1] = Example(last.path, last.line, last.code, last.settings, body)
        n = end + 1
    return found


def _info(words: list[str]) -> tuple[str, set[str], dict[str, str]]:
    """A fence's language, its bare words and its ``key=value`` settings."""
    if not words:
        return "", set(), {}
    flags = {word for word in words[1:] if "=" not in word}
    settings = dict(word.split("=", 1) for word in words[1:] if "=" in word)
    return words[0].lower(), flags, settings
