"""``ToolCallDelta.parsed`` of a stream with ``partial_args``: computed when read, incrementally.

The core writes each delta's snapshot as a *mark* (``partial.rs``, ``PartialJson::mark_json``):
the committed text (the arguments without the whitespace between tokens) since the call's
previous mark. The texts of a call's marks ``1..k`` joined are the arguments parsed so far at
delta ``k`` but for what closes them (an open string's quote, the open containers' closers),
which the reader knows. A delta nobody reads costs one small object.

Read in order (the usual case, whether live or afterwards), one ``_Reader`` per call parses each
finished value once and keeps the open containers; a value is then the open containers copied
(shallow, so finished items are shared) around the open string or number: O(new text + width of
the open containers) per delta. A delta read out of order is read from the start of its text.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any

import msgspec

from . import _core
from .types import _DEFERRED, ToolCallDelta

__all__ = ["marks"]

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_WHOLE = frozenset("[{tfn")  # containers and literals that scan are whole; a number may grow
_CONTAINERS = ("[", "{")
_decode = msgspec.json.Decoder().decode
_NOTHING: Any = object()
# The json module's C scanner: (value, end) of the whole JSON value at an index.
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed types the C scanner oddly


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def _string(token: str) -> str:
    """A complete JSON string token, quotes included."""
    return token[1:-1] if "\\" not in token else str(json.loads(token))


class _Reader:
    """One call's committed text read so far: finished values parsed once, open containers kept.

    ``frames[i]`` is an open list or dict, ``keys[i]`` the key its open value goes under (dicts);
    ``rest`` is the text not consumed yet (an open string or a number that may still grow)."""

    __slots__ = ("frames", "keys", "marks", "rest", "root")

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.keys: list[str | None] = []
        self.rest = ""
        self.root: Any = _NOTHING
        self.marks = 0  # marks consumed

    def _place(self, value: Any) -> None:
        if not self.frames:
            self.root = value
            return
        top = self.frames[-1]
        if top.__class__ is list:
            top.append(value)
        else:
            top[self.keys[-1]] = value
            self.keys[-1] = None

    def read(self, text: str) -> None:
        """Consume ``text`` (the next committed text, after ``rest``) up to what may still grow.

        A value that is whole in the text is parsed by the json module's C scanner in one call;
        only containers still open are descended into (kept as frames)."""
        buf = self.rest + text if self.rest else text
        if self.root is _NOTHING and not self.frames and buf[:1] in _CONTAINERS:
            # Read from the start (the first read, or one out of order): most often the whole
            # arguments, closed, which msgspec parses in about half the json scanner's time. It
            # refuses what json reads otherwise (a lone surrogate escape, 1e400): the scanner then.
            try:
                self.root, self.rest = _decode(buf), ""
                return
            except msgspec.DecodeError:
                pass
        frames, keys, place = self.frames, self.keys, self._place
        i, end = 0, len(buf)
        while i < end:
            c = buf[i]
            if c == ",":
                i += 1
            elif c == "]" or c == "}":
                keys.pop()
                place(frames.pop())
                i += 1
            elif c == '"':
                match = _STRING.match(buf, i)
                if match is None:
                    break  # an open string: its value is the snapshot's
                value = _string(match.group())
                i = match.end()
                if frames and keys[-1] is None and frames[-1].__class__ is dict:
                    keys[-1] = value  # a key is whole: a snapshot never shows half of one
                    i += 1  # and its colon (no whitespace in committed text)
                else:
                    place(value)
            else:
                try:
                    value, after = _scan(buf, i)
                except (StopIteration, ValueError):
                    if c not in "[{":
                        break  # cannot happen in committed text; stop rather than guess
                    # an open container (raising costs a little: once per container)
                    frames.append([] if c == "[" else {})
                    keys.append(None)
                    i += 1
                    continue
                if after == end and c not in _WHOLE:
                    break  # a number is final only once something follows it
                place(value)
                i = after
        self.rest = buf[i:]

    def value(self) -> Any:
        """The value read so far: the open containers, copied, around the open string or number."""
        rest = self.rest
        if not rest:
            child = _NOTHING
        elif rest[0] == '"':
            child = rest[1:] if "\\" not in rest else str(json.loads(rest + '"'))
        else:
            child = _number(rest)
        frames, keys = self.frames, self.keys
        for depth in range(len(frames) - 1, -1, -1):
            copy = frames[depth].copy()
            if child is not _NOTHING:
                if copy.__class__ is list:
                    copy.append(child)
                else:
                    copy[keys[depth]] = child
            child = copy
        return self.root if child is _NOTHING else child


class _Call:
    """One tool call's marks; the ``_core.PartialArgs`` of its deltas point here."""

    __slots__ = ("pieces", "reader")

    def __init__(self, first: str) -> None:
        self.pieces = [first]
        self.reader = _Reader()

    def value_at(self, count: int) -> Any:
        """The value after the first ``count`` marks."""
        reader = self.reader
        if reader.marks > count:  # read out of order: read that snapshot from the start
            reader = _Reader()
        if reader.marks < count:
            reader.read("".join(self.pieces[reader.marks : count]))
            reader.marks = count
        return reader.value()


def marks() -> _core.Marks:
    """A stream's calls: turns the marks the core writes into ``PartialArgs`` (``attach(events)``:
    the mark in ``parsed`` of every ``ToolCallDelta`` of a batch, a string, the text since the
    call's previous mark, or that string in a list for its first mark). In Rust: the same loop
    without the interpreter's cost."""
    return _core.Marks(ToolCallDelta, _Call)


_DEFERRED.add(_core.PartialArgs)
