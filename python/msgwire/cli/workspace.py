"""The example tools of ``msgwire chat`` and the demo: read a file, list a folder, grep, all
confined to a workspace root by the same ``FileResolver`` that reads ``@file`` mentions (a path
leaving the root, by ``..`` or a symlink, is refused on its real path; keys, ``.env`` files and
credential stores are refused by its deny list; each tool reads with its own name as its role).
Each is a ``@tool`` with the approval policy given (``"ask"``: the chat asks per call)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ResourceError
from ..harness.resources import FileResolver
from ..harness.tools import ApprovalPolicy, ToolFailure, ToolRegistry, tool

__all__ = ["MAX_BYTES", "workspace_tools"]

MAX_BYTES = 256 * 1024
"""The largest file ``read_file`` reads (and ``grep`` searches)."""
MAX_ENTRIES = 200
SKIPPED = frozenset({".git", ".venv", "node_modules", "__pycache__", "target", ".mypy_cache", ".ruff_cache"})


def workspace_tools(
    root: str | os.PathLike[str], *, policy: ApprovalPolicy = "ask", files: FileResolver | None = None
) -> ToolRegistry:
    """``read_file``, ``list_dir`` and ``grep`` over the folder ``root`` (``files``: the
    resolver whose rules they follow; a ``FileResolver(root)`` by default)."""
    base = Path(root).resolve()
    resolver = files if files is not None else FileResolver(base)
    registry = ToolRegistry()

    def inside(path: str, role: str) -> Path:
        try:
            return resolver.check(str(base / path), role)
        except ResourceError as refused:
            raise ToolFailure(str(refused)) from None

    def shown(target: Path) -> str:
        return target.relative_to(base).as_posix() or "."

    def text_of(target: Path, path: str) -> str:
        if not target.is_file():
            raise ToolFailure(f"no file {path!r} in the workspace")
        if target.stat().st_size > MAX_BYTES:
            raise ToolFailure(f"{path!r} is larger than {MAX_BYTES} bytes")
        data = target.read_bytes()
        if b"\0" in data[:8000]:
            raise ToolFailure(f"{path!r} is a binary file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailure(f"{path!r} is not UTF-8 text (byte {exc.start})") from None

    @tool(policy=policy)
    def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read a text file of the workspace, or its lines start_line to end_line (1-indexed, inclusive)."""
        lines = text_of(inside(path, "read_file"), path).splitlines()
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines))
        if start_line is not None and start_line > len(lines):
            raise ToolFailure(f"{path!r} has {len(lines)} lines; line {start_line} is past its end")
        return "\n".join(f"{n} | {lines[n - 1]}" for n in range(first, last + 1))

    @tool(policy=policy)
    def list_dir(path: str = ".") -> str:
        """List a folder of the workspace: one entry per line, folders ending with '/'."""
        target = inside(path, "list_dir")
        if not target.is_dir():
            raise ToolFailure(f"no folder {path!r} in the workspace")
        entries = sorted(target.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        names = [p.name + ("/" if p.is_dir() else "") for p in entries if p.name not in SKIPPED]
        more = f"\n... and {len(names) - MAX_ENTRIES} more" if len(names) > MAX_ENTRIES else ""
        return "\n".join(names[:MAX_ENTRIES]) + more if names else "(empty)"

    @tool(policy=policy)
    def grep(pattern: str, path: str = ".", max_matches: int = 50) -> str:
        """Search the text files under a path of the workspace for a regular expression: one
        'path:line: text' per match."""
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolFailure(f"invalid regular expression {pattern!r}: {exc}") from None
        target = inside(path, "grep")
        found: list[str] = []
        for file in [target] if target.is_file() else _files(target):
            try:
                text = text_of(inside(shown(file), "grep"), shown(file))
            except ToolFailure:  # binary, too large, denied (.env, keys): not searched
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    found.append(f"{shown(file)}:{number}: {line.strip()[:200]}")
                    if len(found) >= max_matches:
                        return "\n".join(found) + "\n(more matches not shown)"
        return "\n".join(found) if found else f"no match for {pattern!r}"

    for made in (read_file, list_dir, grep):
        registry.add(made)
    return registry


def _files(folder: Path) -> list[Path]:
    out = []
    for current, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        out += [Path(current) / n for n in sorted(names)]
    return out
