"""``ToolCallDelta.parsed`` (``partial_args=True``) against an independent reference.

The core sends each delta's arguments as a mark (the text added since the previous one) and
Python computes ``parsed`` when it is read, incrementally when deltas are read in order. Here
every value read, in order, out of order or twice, must equal ``json.loads`` of the arguments
received so far, completed by the snapshot rules (``rust/core/src/partial.rs``), written again
below in plain Python: strings kept to their last whole character and closed, numbers cut to
their longest valid prefix, unfinished literals and keys without a value dropped, containers
closed.
"""

from __future__ import annotations

import copy
import itertools
import json
import pickle
import re
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import ToolCallDelta
from tests._support.strategies import examples
from tests._support.streams import json_values, tool_args_stream

NOTHING: Any = object()
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NUMBER_CHARS = re.compile(r"[-+.eE0-9]+")
WHITESPACE = " \t\n\r"


class Incomplete(Exception):
    """The text ended inside a value; ``value`` is what of it a snapshot shows (or NOTHING)."""

    def __init__(self, value: Any) -> None:
        self.value = value


class Reference:
    """A recursive reader of a JSON prefix: the value a snapshot of it shows."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in WHITESPACE:
            self.i += 1

    def at_end(self) -> bool:
        self.ws()
        return self.i >= len(self.text)

    def value(self) -> Any:
        if self.at_end():
            raise Incomplete(NOTHING)
        c = self.text[self.i]
        if c == "{":
            return self.container({}, "}")
        if c == "[":
            return self.container([], "]")
        if c == '"':
            return self.string()
        if c in "tfn":
            word = {"t": "true", "f": "false", "n": "null"}[c]
            if not self.text.startswith(word, self.i):
                raise Incomplete(NOTHING)
            self.i += len(word)
            return json.loads(word)
        run = NUMBER_CHARS.match(self.text, self.i)
        assert run is not None
        self.i = run.end()
        if self.i < len(self.text):
            return json.loads(run.group())
        # a number is final only once something follows it: cut to its longest valid prefix
        valid = NUMBER.match(run.group())
        raise Incomplete(json.loads(valid.group()) if valid else NOTHING)

    def string(self) -> str:
        start, self.i = self.i, self.i + 1
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.i += 1
                return str(json.loads(self.text[start : self.i]))
            self.i += 2 if c == "\\" else 1
        # open: keep whole characters only (no half escape, no lone high surrogate)
        body = self.text[start + 1 :]
        # (an escape's backslash is one not itself escaped: after an even run of backslashes)
        body = re.sub(r"(?<!\\)((?:\\\\)*)\\(u[0-9a-fA-F]{0,3})?$", r"\1", body)
        body = re.sub(r"(?<!\\)((?:\\\\)*)\\u[dD][89abAB][0-9a-fA-F]{2}$", r"\1", body)
        raise Incomplete(str(json.loads('"' + body + '"')))

    def container(self, into: Any, closer: str) -> Any:
        self.i += 1
        while True:
            if self.at_end():
                raise Incomplete(into)
            if self.text[self.i] == closer:
                self.i += 1
                return into
            if self.text[self.i] == ",":
                self.i += 1
                continue
            if isinstance(into, list):
                try:
                    into.append(self.value())
                except Incomplete as inner:
                    if inner.value is not NOTHING:
                        into.append(inner.value)
                    raise Incomplete(into) from None
                continue
            try:
                key = self.string()
            except Incomplete:
                raise Incomplete(into) from None
            if self.at_end():
                raise Incomplete(into)
            self.i += 1  # the colon
            try:
                into[key] = self.value()
            except Incomplete as inner:
                if inner.value is not NOTHING:
                    into[key] = inner.value
                raise Incomplete(into) from None


def expected(prefix: str) -> Any:
    """What ``parsed`` shows after ``prefix`` (``UNSET`` when there is no value yet)."""
    try:
        value = Reference(prefix).value()
    except Incomplete as end:
        value = end.value
    return msgspec.UNSET if value is NOTHING else value


def deltas(arguments: str, fragments: list[str], dialect: str) -> list[ToolCallDelta]:
    body = tool_args_stream(dialect, fragments)
    return [e for e in msgwire.stream(body, dialect, partial_args=True) if isinstance(e, ToolCallDelta)]


def cut(arguments: str, data: st.DataObject) -> list[str]:
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(arguments) - 1)), max_size=40), label="cuts")))
    bounds = [0, *[c for c in cuts if c < len(arguments)], len(arguments)]
    return [arguments[a:b] for a, b in itertools.pairwise(bounds)]


def test_reference_follows_the_rules() -> None:
    """The reference itself, on the cases the core's docs name."""
    assert expected('{"a": "x\\u00') == {"a": "x"}
    assert expected('{"a": "\\ud83d') == {"a": ""}
    assert expected('{"a": 12.') == {"a": 12}
    assert expected('{"a": 1.5e+') == {"a": 1.5}
    assert expected('{"a": -') == {}
    assert expected('{"a": tr') == {}
    assert expected('{"a": 1, "b') == {"a": 1}
    assert expected('[1, [2, {"c": [') == [1, [2, {"c": []}]]
    assert expected("  ") is msgspec.UNSET


@examples(40, all_health_checks=True)
@given(
    value=st.dictionaries(st.text(max_size=8), json_values, max_size=5) | json_values,
    dialect=st.sampled_from(["openai", "anthropic", "openai-responses"]),
    data=st.data(),
)
def test_parsed_equals_the_prefix_completed_arguments(value: Any, dialect: str, data: st.DataObject) -> None:
    indent = data.draw(st.sampled_from([None, 1]), label="indent")  # whitespace between tokens
    arguments = json.dumps(value, ensure_ascii=data.draw(st.booleans(), label="ascii"), indent=indent)
    fragments = cut(arguments, data)
    events = deltas(arguments, fragments, dialect)
    prefixes = list(itertools.accumulate(e.fragment for e in events))
    assert prefixes[-1] == arguments
    # read in order, each once: the incremental path
    for event, prefix in zip(events, prefixes, strict=True):
        assert event.parsed == expected(prefix), prefix
    assert events[-1].parsed == value
    # a second stream read out of order: each value read from the start of its text
    again = deltas(arguments, fragments, dialect)
    order = data.draw(st.permutations(range(len(again))), label="order")
    for at in order:
        assert again[at].parsed == expected(prefixes[at])
    # a value once read stays the same object; writing, pickling or copying an event keeps it
    assert all(e.parsed is e.parsed for e in again)
    for event in again:
        written = json.loads(msgwire.dumps(event))
        assert written.get("parsed", msgspec.UNSET) == event.parsed
        assert pickle.loads(pickle.dumps(event)) == event
        assert copy.deepcopy(event).parsed == event.parsed


def test_values_of_earlier_deltas_are_not_changed_by_later_ones() -> None:
    """Values share their finished parts, never the open ones."""
    arguments = json.dumps({"rows": [{"a": i, "t": "x" * i} for i in range(6)], "end": True})
    events = deltas(arguments, [arguments[i : i + 3] for i in range(0, len(arguments), 3)], "openai")
    seen = [json.dumps(e.parsed) for e in events]  # read every delta as it comes
    assert [json.dumps(e.parsed) for e in events] == seen
    assert [json.loads(s) for s in seen] == [expected(p) for p in itertools.accumulate(e.fragment for e in events)]


def test_replaced_arguments_keep_the_values_streamed() -> None:
    """Responses' `.done` with other arguments than streamed: the deltas keep what they showed,
    the block ends with the replacement."""
    body = tool_args_stream("openai-responses", ['{"a": [1, 2', "]}"])
    body = body.replace(b'"arguments":"{\\"a\\": [1, 2]}"', b'"arguments":"{\\"b\\": 3}"')
    events = list(msgwire.stream(body, "openai-responses", partial_args=True))
    parsed = [e.parsed for e in events if isinstance(e, ToolCallDelta)]
    assert parsed[:2] == [{"a": [1, 2]}, {"a": [1, 2]}]
    (end,) = [e for e in events if e.type == "tool_call_end"]
    assert end.block.parsed_arguments() == {"b": 3}
