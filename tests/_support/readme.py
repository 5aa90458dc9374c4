"""The README's Python blocks and their mirror, ``tests/typing/readme/readme_NN.py`` (NN: the
block's position, from 01), which ``tests/test_typing.py`` type-checks with ``mypy --strict``.

A mirror file holds exactly its block's text, so what mypy checks is what a reader copies.
After a README block changes, is added or is removed, rewrite the mirror from the README
(from the repository root)::

    python -m tests._support.readme
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MIRROR = ROOT / "tests" / "typing" / "readme"

# A fenced block whose info string names Python, at any indentation (a block in a list item
# too), closed by a fence at the same indentation; the block's lines lose that indentation.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?:python3?|py)(?:[ \t][^\n]*)?\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def python_blocks(markdown: str) -> list[str]:
    """The text of every Python block of ``markdown``, in order, without its fences."""
    blocks = []
    for match in _FENCE.finditer(markdown):
        indent = match["indent"]
        lines = match["code"].splitlines(keepends=True)
        blocks.append("".join(line.removeprefix(indent) for line in lines))
    return blocks


def mirror_name(position: int) -> str:
    """The mirror file of the block at ``position`` (1 for the first)."""
    return f"readme_{position:02}.py"


def mirror_of(markdown: str) -> dict[str, str]:
    """What the mirror holds for ``markdown``: file name -> block text."""
    return {mirror_name(n): block for n, block in enumerate(python_blocks(markdown), 1)}


def differences(markdown: str, files: Mapping[str, str]) -> list[str]:
    """How ``files`` (file name -> text) differ from the mirror of ``markdown``: one line per
    file that is missing, differs from its block (naming the first line that does), or has no
    block; empty when they agree."""
    blocks = python_blocks(markdown)
    found = []
    for position, block in enumerate(blocks, 1):
        name = mirror_name(position)
        text = files.get(name)
        if text is None:
            found.append(f"{name}: missing (the README's Python block {position})")
        elif text != block:
            line = _first_different_line(block, text)
            found.append(f"{name}: differs from the README's Python block {position} at line {line}")
    names = {mirror_name(position) for position in range(1, len(blocks) + 1)}
    found += [f"{name}: the README has no such block" for name in sorted(files.keys() - names)]
    return found


def _first_different_line(a: str, b: str) -> int:
    """The 1-based number of the first line where ``a`` and ``b`` differ (one may be shorter)."""
    lines_a, lines_b = a.splitlines(keepends=True), b.splitlines(keepends=True)
    pairs = zip(lines_a, lines_b, strict=False)  # past the shorter one's end, its missing line differs
    return next((i for i, (x, y) in enumerate(pairs, 1) if x != y), min(len(lines_a), len(lines_b)) + 1)


def mirror_files() -> dict[str, str]:
    """The mirror as it is on disk: every ``.py`` file of ``tests/typing/readme/``."""
    return {path.name: path.read_text() for path in sorted(MIRROR.glob("*.py"))}


def rewrite_mirror() -> list[str]:
    """Make the mirror match README.md; returns the files written or removed."""
    expected = mirror_of(README.read_text())
    MIRROR.mkdir(parents=True, exist_ok=True)
    changed = []
    for name in mirror_files():
        if name not in expected:
            (MIRROR / name).unlink()
            changed.append(f"removed {name}")
    on_disk = mirror_files()
    for name, text in expected.items():
        if on_disk.get(name) != text:
            (MIRROR / name).write_text(text)
            changed.append(f"wrote {name}")
    return changed


if __name__ == "__main__":
    print("\n".join(rewrite_mirror()) or "the mirror matches README.md")
