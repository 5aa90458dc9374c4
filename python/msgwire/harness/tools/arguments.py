"""Reading a model's arguments for a tool: every problem told at once, under one rule.

The rule, whichever library reads a parameter (msgspec, or pydantic: ``pydantic_types.py``):
JSON's own types (msgspec's rule, pydantic's strict mode), names nobody declared refused at every
depth (``unknown.py``), and every problem in one ``msgspec.ValidationError``, joined by ``; ``:
each unknown or missing argument, each problem pydantic finds, the first msgspec finds in each
parameter (msgspec stops at the first inside a value), and every unknown name.

The arguments are decoded in one msgspec call into the Struct made for them (``schema.py``), a
parameter pydantic reads kept as raw JSON and validated after it; when some parameter's type holds
objects with named fields, the text is also decoded as plain JSON and walked for unknown names
(``unknown.py``). Only when msgspec refuses the text is it read again one parameter at a time,
to find the rest.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from .hints import NO_DEFAULT
from .unknown import UnknownNames, unknown_names

__all__ = ["Argument", "envelope_decoder", "lone_decoder", "msgspec_argument"]


@dataclass(frozen=True)
class Argument:
    """One parameter, read from its own raw JSON: ``read`` gives its value or raises
    ``msgspec.ValidationError`` with every problem in it (paths from ``$``); ``missing`` gives the
    value of one the model may leave out."""

    name: str
    key: str
    required: bool
    read: Callable[[bytes], Any]
    missing: Callable[[], Any]
    raw: bool
    """Kept as raw JSON by the one msgspec call, and read after it (pydantic's)."""
    unknown: UnknownNames | None = None
    """The unknown names in a value msgspec decoded (``None``: its type has no objects to check)."""


def msgspec_argument(tool: str, name: str, hint: Any, default: Any) -> Argument:
    """A parameter msgspec reads (``hint`` as ``schema._msgspec_hint`` made it)."""
    # decoded as the one field of an object, msgspec's own paths start at `$.name`
    alone = msgspec.json.Decoder(msgspec.defstruct(f"{tool}__{name}", [(name, hint)]))
    opening = b'{"' + name.encode() + b'":'
    check = unknown_names(hint)

    def read(raw: bytes) -> Any:
        problems: list[str] = []
        if check is not None:
            check(msgspec.json.decode(raw), f"$.{name}", problems)
        try:
            value = getattr(alone.decode(opening + raw + b"}"), name)
        except msgspec.ValidationError as exc:
            said = _at_root(str(exc))
            problems = [said, *[p for p in problems if p != said]]  # a Struct forbidding them says one too
        if problems:
            raise _joined(problems)
        return value

    def missing() -> Any:
        return copy.deepcopy(default)

    return Argument(name, name, default is NO_DEFAULT, read, missing, raw=False, unknown=check)


def envelope_decoder(decoder: msgspec.json.Decoder[Any], arguments: list[Argument]) -> Callable[[str], Any]:
    """The arguments' text -> the Struct ``decoder`` reads, each raw argument read into it."""
    after = [a for a in arguments if a.raw or a.unknown is not None]  # in the parameters' order
    walked = any(a.unknown is not None for a in arguments)

    def decode_only(text: str) -> Any:
        try:
            return decoder.decode(text)
        except msgspec.ValidationError as exc:
            raise _every_problem(text, arguments, exc) from None

    if not after:
        return decode_only

    def decode(text: str) -> Any:
        try:
            decoded = decoder.decode(text)
        except msgspec.ValidationError as exc:
            raise _every_problem(text, arguments, exc) from None
        given = msgspec.json.decode(text) if walked else None
        problems: list[str] = []
        for argument in after:
            if argument.unknown is not None:
                if given is not None and argument.key in given:
                    argument.unknown(given[argument.key], f"$.{argument.key}", problems)
                continue
            value = getattr(decoded, argument.name)
            try:
                value = argument.missing() if value is msgspec.UNSET else argument.read(bytes(value))
            except msgspec.ValidationError as exc:
                problems.append(str(exc))
                continue
            setattr(decoded, argument.name, value)
        if problems:
            raise _joined(problems)
        return decoded

    return decode


def lone_decoder(hint: Any) -> Callable[[str], Any]:
    """The arguments' text -> the lone Struct, dataclass or TypedDict ``hint`` is."""
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(hint)
    check = unknown_names(hint)
    assert check is not None  # an object with named fields

    def decode(text: str) -> Any:
        try:
            value = decoder.decode(text)
        except msgspec.ValidationError as exc:
            said = _at_root(str(exc))
            problems: list[str] = []
            check(msgspec.json.decode(text), "$", problems)
            raise _joined([said, *[p for p in problems if p != said]]) from None
        found: list[str] = []
        check(msgspec.json.decode(text), "$", found)
        if found:
            raise _joined(found)
        return value

    return decode


def _joined(problems: list[str]) -> msgspec.ValidationError:
    return msgspec.ValidationError("; ".join(problems))


_object = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _every_problem(text: str, arguments: list[Argument], first: msgspec.ValidationError) -> msgspec.ValidationError:
    """What is wrong with ``text``, one argument at a time (``first``, msgspec's first problem,
    when the text is not an object of arguments at all)."""
    try:
        fields = _object.decode(text)
    except msgspec.ValidationError:
        return first
    known = {a.key for a in arguments}
    problems = [f"Object contains unknown field `{key}` - at `$`" for key in fields if key not in known]
    problems += [
        f"Object missing required field `{a.key}` - at `$`" for a in arguments if a.required and a.key not in fields
    ]
    for argument in arguments:
        if argument.key in fields:
            try:
                argument.read(bytes(fields[argument.key]))
            except msgspec.ValidationError as exc:
                problems.append(str(exc))
    return _joined(problems) if problems else first


def _at_root(message: str) -> str:
    """msgspec's message with the path it leaves out at the top (``$``)."""
    return message if " - at `" in message else f"{message} - at `$`"
