"""``FileResolver``: fills ``FileReferenceBlock``s from the file system, inside a workspace,
with per-role permissions.

Paths: absolute, or relative to the workspace ``root``; without one, the root is the working
directory when the resolver is made. A path must stay inside the root (or inside one of
``extra_roots``): once written out (``..`` segments) and once more after every symlink is
followed (``realpath``), so neither ``../`` nor a link pointing out escapes, and
``FileResolver().resolve(FileReferenceBlock(path="/etc/shadow"))`` is refused. Only
``allow_any_path=True`` reads paths anywhere (the permissions and the deny list still apply).
A root that does not exist, or is not a directory, is a ``ValueError`` when the resolver is made;
one removed later makes every reference under it an error saying so.

Permissions: ``permissions`` maps a role (a name the caller defines: ``"user"``, ``"agent"``,
a tool's name) to ``Rules(allow=..., deny=...)``; a role without an entry reads nothing. With
``permissions=None`` every role may read everything the roots contain. ``deny`` applies to every
role and defaults to ``SENSITIVE_FILES`` (keys, ``.env`` files, credentials). A deny rule
always wins over an allow rule, and is checked against the path as written and against the
real path, so a symlink cannot launder a denied file.

Globs (matched case-sensitively against the path relative to its root, ``/``-separated):
``*`` and ``?`` within one name, ``**`` across directories, ``[abc]`` classes. A pattern without
``/`` matches a name at any depth (``*.pem``, ``.git``); one with ``/`` is anchored at the root
(``docs/**``, ``src/*.py``); one starting with ``/`` matches the absolute real path. A pattern
that matches a directory covers everything in it.

Content: line ranges are 1-indexed and inclusive (``end >= start``); a range past the end of
the file is an error that says how long the file is. Binary files (a NUL byte), invalid UTF-8
and files over ``max_bytes`` (for a range: the range over ``max_bytes``; a range of a larger
file is read line by line) are errors. Resolution never raises: every outcome sets the block's
``status`` (``resolved`` / ``error``) and ``error``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from msgwire.errors import ResourceError
from msgwire.types import ContentBlock, FileReferenceBlock, Message, UserMessage

from ._blocks import map_blocks
from .mentions import parse_mentions
from .resolver import Resolver

__all__ = ["SENSITIVE_FILES", "FileResolver", "Rules"]

SENSITIVE_FILES: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
)
"""Denied to every role unless the resolver is built with another ``deny`` (as Continue's
``isSecurityConcern`` list does: keys, ``.env`` files, credential stores)."""

_SNIFF = 8000  # bytes looked at for a NUL, as git does to call a file binary
_CHUNK = 1 << 16


class Rules(msgspec.Struct, frozen=True, kw_only=True):
    """What one role may read: paths matching an ``allow`` glob and no ``deny`` glob."""

    allow: tuple[str, ...] = ("**",)
    deny: tuple[str, ...] = ()


class _Refused(Exception):
    """A reference that cannot be resolved; the message goes on the block."""


class FileResolver(Resolver):
    """Reads file references under a workspace root (see the module docs for every rule)."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        permissions: Mapping[str, Rules] | None = None,
        deny: Sequence[str] = SENSITIVE_FILES,
        max_bytes: int = 1 << 20,
        extra_roots: Iterable[str | os.PathLike[str]] = (),
        allow_any_path: bool = False,
    ) -> None:
        """``root``: where relative paths start and references must stay (the working directory
        when not given); ``extra_roots``: more places references may point into;
        ``allow_any_path``: no containment at all. ``ValueError`` for a root that is not a
        directory, or a ``max_bytes`` below 1."""
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.root = Path(os.path.abspath(root)) if root is not None else Path.cwd()
        self.permissions = dict(permissions) if permissions is not None else None
        self.deny = tuple(deny)
        self.max_bytes = max_bytes
        self.allow_any_path = allow_any_path
        given = [self.root, *(Path(os.path.abspath(r)) for r in extra_roots)]
        for place in given if root is not None else given[1:]:
            _check_root(place)
        # each root as written and as its real path (the workspace itself may sit behind a link)
        self._roots = [(r, Path(os.path.realpath(r))) for r in given]
        self._outside = "the workspace root" if root is not None or len(given) > 1 else "the working directory"

    # --- public ---------------------------------------------------------------------------------

    def resolve(self, block: FileReferenceBlock, role: str = "user") -> FileReferenceBlock:
        """``block`` read: ``status="resolved"`` with ``resolved_content`` (the lines asked for,
        as they are in the file), or ``status="error"`` with ``error`` saying why. Never raises."""
        try:
            _check_range(block.start_line, block.end_line)
            real = self._checked(block.path, role)
            content = self._read(real, block.path, block.start_line, block.end_line)
        except _Refused as refused:
            return msgspec.structs.replace(block, status="error", error=str(refused), resolved_content=None)
        except OSError as exc:  # a race with the file system, a permission of the OS
            why = f"cannot read {block.path!r}: {exc.strerror or exc}"
            return msgspec.structs.replace(block, status="error", error=why, resolved_content=None)
        return msgspec.structs.replace(block, status="resolved", error=None, resolved_content=content)

    def resolve_message(self, message: Message, role: str = "user") -> Message:
        """``message`` with its pending file references resolved (the same object when it has none)."""
        return map_blocks(
            message, lambda b: self.resolve(b, role) if type(b) is FileReferenceBlock and b.status == "pending" else b
        )

    def read_prompt(self, message: UserMessage, /) -> UserMessage:
        """New user input with its ``@path:10-20`` mentions as pending file references
        (``parse_mentions``, a bare name counting when it names a file under the roots)."""
        return parse_mentions(message, exists=self.exists)

    def audit_record(self, block: ContentBlock, /) -> dict[str, Any] | None:
        if type(block) is not FileReferenceBlock:
            return None
        return {"type": "file_reference", "path": block.path, "status": block.status, "error": block.error}

    def check(self, path: str, role: str = "user") -> Path:
        """The real path of ``path`` when ``role`` may read it (inside the roots, allowed, not
        denied); raises ``ResourceError`` saying why not. Used for image paths too."""
        try:
            return self._checked(path, role)
        except _Refused as refused:
            raise ResourceError(str(refused)) from None

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a regular file under the roots (for ``parse_mentions(exists=)``)."""
        try:
            _, _, real, _ = self._contained(path)
        except _Refused:
            return False
        return real.is_file()

    # --- steps ----------------------------------------------------------------------------------

    def _place(self, path: str) -> Path:
        """The absolute path as written (``..`` folded, symlinks not followed)."""
        if not path or "\x00" in path:
            raise _Refused("empty path" if not path else "a path may not hold a NUL character")
        expanded = os.path.expanduser(path)
        if not os.path.isabs(expanded):
            expanded = os.path.join(self.root, expanded)
        return Path(os.path.normpath(expanded))

    def _checked(self, path: str, role: str) -> Path:
        written, relative_written, real, relative_real = self._contained(path)
        self._check_permissions(path, role, written, relative_written, real, relative_real)
        return real

    def _contained(self, path: str) -> tuple[Path, str | None, Path, str | None]:
        """The path as written and its real path, each with its place under the roots."""
        written = self._place(path)
        real = Path(os.path.realpath(written))
        relative_written = _inside(written, [w for w, _ in self._roots])
        relative_real = _inside(real, [r for _, r in self._roots])
        if not self.allow_any_path:
            if relative_written is None:
                raise _Refused(f"{path!r} is outside {self._outside}")
            if relative_real is None:
                raise _Refused(f"{path!r} leads outside {self._outside} (through a symbolic link)")
        return written, relative_written, real, relative_real

    def _check_permissions(
        self,
        path: str,
        role: str,
        written: Path,
        relative_written: str | None,
        real: Path,
        relative_real: str | None,
    ) -> None:
        rules = None
        if self.permissions is not None:
            rules = self.permissions.get(role)
            if rules is None:
                raise _Refused(f"permission denied: role {role!r} has no file permissions")
        deny = self.deny + (tuple(rules.deny) if rules else ())
        for candidate_abs, candidate_rel in ((written, relative_written), (real, relative_real)):
            if (pattern := _first_match(deny, candidate_abs, candidate_rel)) is not None:
                raise _Refused(f"permission denied: role {role!r} may not read {path!r} (denied by {pattern!r})")
        if rules is not None and _first_match(tuple(rules.allow), real, relative_real) is None:
            raise _Refused(f"permission denied: role {role!r} may not read {path!r} (no allow rule matches)")

    def _read(self, real: Path, path: str, start: int | None, end: int | None) -> str:
        try:
            info = os.stat(real)
        except FileNotFoundError:
            gone = next((w for w, r in self._roots if not r.is_dir() and _inside(real, [r]) is not None), None)
            if gone is not None:
                raise _Refused(f"the workspace root {str(gone)!r} does not exist any more") from None
            raise _Refused(f"file not found: {path!r}") from None
        if stat.S_ISDIR(info.st_mode):
            raise _Refused(f"{path!r} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f"{path!r} is not a regular file")
        if start is None and end is None:
            if info.st_size > self.max_bytes:
                raise _Refused(f"{path!r} is {info.st_size:,} bytes, over the limit of {self.max_bytes:,}")
            with open(real, "rb") as f:
                data = f.read(self.max_bytes + 1)
            if len(data) > self.max_bytes:  # it grew since the stat
                raise _Refused(f"{path!r} is over the limit of {self.max_bytes:,} bytes")
            return _decode(data, path, 0)
        return self._read_lines(real, path, start or 1, end)

    def _read_lines(self, real: Path, path: str, start: int, end: int | None) -> str:
        kept: list[bytes] = []
        size = offset = 0
        count = 0
        with open(real, "rb") as f:
            head = f.read(_SNIFF)
            if b"\x00" in head:
                raise _Refused(f"{path!r} is a binary file")
            f.seek(0)
            for count, line in enumerate(f, start=1):
                if count >= start:
                    size += len(line)
                    if size > self.max_bytes:
                        raise _Refused(
                            f"lines {_span(start, end)} of {path!r} are over the limit of {self.max_bytes:,} bytes"
                        )
                    kept.append(line)
                else:
                    offset += len(line)
                if end is not None and count == end:
                    break
        if count < start or (end is not None and count < end):
            lines = "line" if count == 1 else "lines"
            raise _Refused(f"{path!r} has {count} {lines}: lines {_span(start, end)} run past its end")
        return _decode(b"".join(kept), path, offset)


# --- helpers ----------------------------------------------------------------------------------


def _check_root(root: Path) -> None:
    if not root.exists():
        raise ValueError(f"the workspace root {str(root)!r} does not exist")
    if not root.is_dir():
        raise ValueError(f"the workspace root {str(root)!r} is not a directory")


def _check_range(start: int | None, end: int | None) -> None:
    if (start is not None and start < 1) or (end is not None and end < 1):
        raise _Refused("line numbers start at 1")
    if start is not None and end is not None and end < start:
        raise _Refused(f"the range {start}-{end} ends before it starts")


def _span(start: int, end: int | None) -> str:
    return f"{start}-" if end is None else str(start) if end == start else f"{start}-{end}"


def _decode(data: bytes, path: str, offset: int) -> str:
    if b"\x00" in data:
        raise _Refused(f"{path!r} is a binary file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Refused(f"{path!r} is not valid UTF-8 (byte {offset + exc.start})") from None
    return text.removeprefix("\ufeff")


def _inside(path: Path, roots: list[Path]) -> str | None:
    """``path`` relative to the first root that contains it (``""`` for the root itself)."""
    text = str(path)
    for root in roots:
        base = str(root)
        if text == base:
            return ""
        prefix = base if base.endswith("/") else base + "/"
        if text.startswith(prefix):
            return text[len(prefix) :]
    return None


def _first_match(patterns: tuple[str, ...], absolute: Path, relative: str | None) -> str | None:
    rules = _rules(patterns)
    if not rules.any(absolute.as_posix(), relative):
        return None
    return next(p for p in patterns if _rules((p,)).any(absolute.as_posix(), relative))


@lru_cache(maxsize=256)
def _rules(patterns: tuple[str, ...]) -> _Rules:
    return _Rules(patterns)


class _Rules:
    """Globs (see the module docs) compiled into three alternations: names matched against
    each part of the path, anchored patterns against each leading run of parts (a pattern that
    matches a directory covers its contents), absolute ones the same way on the absolute path."""

    __slots__ = ("absolute", "anchored", "names")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        names, anchored, absolute = [], [], []
        for pattern in patterns:
            body = pattern.removeprefix("./").rstrip("/") or "**"
            if body.startswith("/"):
                absolute.append(_glob_regex(body.lstrip("/")))
            elif "/" not in body:
                names.append(_glob_regex(body))
            else:
                anchored.append(_glob_regex(body))
        self.names = _alternation(names)
        self.anchored = _alternation(anchored)
        self.absolute = _alternation(absolute)

    def any(self, absolute: str, relative: str | None) -> bool:
        # without a workspace root, name patterns still apply (to the absolute path's parts)
        target = relative if relative is not None else absolute.lstrip("/")
        if self.names is not None and target and any(self.names.fullmatch(p) for p in target.split("/")):
            return True
        if self.anchored is not None and relative and _leading(self.anchored, relative):
            return True
        return self.absolute is not None and _leading(self.absolute, absolute.lstrip("/"))


def _alternation(regexes: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{r})" for r in regexes)) if regexes else None


def _leading(regex: re.Pattern[str], path: str) -> bool:
    """Whether ``regex`` matches ``path`` or one of the directories leading to it."""
    end = len(path)
    while end > 0:
        if regex.fullmatch(path, 0, end):
            return True
        end = path.rfind("/", 0, end)
    return False


def _glob_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (close := glob.find("]", i + 2)) != -1:
            inner = glob[i + 1 : close]
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner).replace("\\", "\\\\") + "]")
            i = close + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)
