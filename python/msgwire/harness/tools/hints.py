"""What a parameter's annotation asks for, read before msgspec or pydantic sees it.

- ``Param``: one parameter of a tool function (name, annotation, default, docstring text).
- ``uses_pydantic``: whether pydantic must read the annotation (a pydantic model or dataclass,
  a pydantic type, or pydantic metadata such as ``Field(...)`` anywhere in it, through unions,
  containers and the fields of dataclasses and TypedDicts). Answered without importing pydantic:
  nothing can be pydantic's before pydantic is loaded.
- ``for_msgspec``: the annotation as msgspec reads it, every ``Annotated`` extra made a
  ``msgspec.Meta``: a string (a description), ``typing_extensions.Doc``, and the
  ``annotated_types`` constraints (``Gt``, ``Ge``, ``Lt``, ``Le``, ``Interval``, ``MultipleOf``,
  ``MinLen``, ``MaxLen``, ``Len``, ``Timezone``), read by their fields so that neither msgwire
  nor its users need that library. Anything else (``Predicate``, another library's marker) is
  refused with ``TypeError``: a constraint the model is not told and the arguments are not
  checked against must not look as if it were. Inside a Struct, dataclass or TypedDict msgspec
  reads only ``msgspec.Meta``, so anything else there is refused too.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

__all__ = ["NO_DEFAULT", "Param", "annotated_extras", "for_msgspec", "is_pydantic", "split_annotated", "uses_pydantic"]

NO_DEFAULT: Any = inspect.Parameter.empty
"""The default of a required parameter."""

_CONSTRAINTS = frozenset(("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern"))


@dataclass(frozen=True)
class Param:
    """One parameter of a tool function: its ``hint`` as annotated (``Annotated`` kept), its
    ``default`` (``NO_DEFAULT`` when required) and its description from the docstring."""

    name: str
    hint: Any
    default: Any
    doc: str | None


def split_annotated(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(T, extras)`` of ``Annotated[T, *extras]``; ``(hint, ())`` for anything else."""
    if get_origin(hint) is Annotated:
        base, *extras = get_args(hint)
        return base, tuple(extras)
    return hint, ()


def is_pydantic(obj: Any) -> bool:
    """Whether ``obj`` (a class, or a metadata object) belongs to pydantic: a model, a pydantic
    dataclass, one of its types (``HttpUrl``, ``SecretStr``...) or its metadata (``Field(...)``,
    ``Strict()``, validators, ``WithJsonSchema``...)."""
    if "pydantic" not in sys.modules:
        return False
    cls = obj if isinstance(obj, type) else type(obj)
    if "__pydantic_validator__" in vars(cls):  # a pydantic dataclass
        return True
    return any(c.__module__.split(".")[0] in ("pydantic", "pydantic_core") for c in cls.__mro__)


def uses_pydantic(hint: Any) -> bool:
    """Whether pydantic must read ``hint`` (see the module docstring)."""
    if "pydantic" not in sys.modules:
        return False
    return any(is_pydantic(node) for _, node in _nodes(hint, set()))


def annotated_extras(hint: Any) -> Iterator[Any]:
    """Every ``Annotated`` extra in ``hint`` (through unions, generics and the fields of the
    classes it names, not pydantic models: their fields are theirs)."""
    return (node for is_extra, node in _nodes(hint, set()) if is_extra)


def _nodes(hint: Any, seen: set[int] | None) -> Iterator[tuple[bool, Any]]:
    """``(True, extra)`` for every ``Annotated`` extra in ``hint`` and ``(False, cls)`` for every
    class, through unions and generics, and (with ``seen``, the classes visited) the fields of
    dataclasses, TypedDicts, NamedTuples and Structs."""
    base, extras = split_annotated(hint)
    for extra in extras:
        yield True, extra
    origin = get_origin(base)
    if origin is Literal:
        return
    if origin is not None:
        if isinstance(origin, type):
            yield False, origin
        for arg in get_args(base):
            yield from _nodes(arg, seen)
        return
    if not isinstance(base, type):
        return
    yield False, base
    if seen is None or id(base) in seen or is_pydantic(base):
        return
    seen.add(id(base))
    for field_hint in _field_hints(base).values():
        yield from _nodes(field_hint, seen)


def _field_hints(cls: type) -> dict[str, Any]:
    """The annotated fields of a Struct, dataclass, TypedDict or NamedTuple (empty for any other
    class, or when its annotations cannot be resolved: msgspec then says why)."""
    if not (
        issubclass(cls, msgspec.Struct)
        or dataclasses.is_dataclass(cls)
        or typing.is_typeddict(cls)
        or hasattr(cls, "__required_keys__")  # typing_extensions.TypedDict
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    ):
        return {}
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an unresolvable forward reference: msgspec reports it
        return {}


def for_msgspec(hint: Any, doc: str | None = None) -> Any:
    """``hint`` with its ``Annotated`` extras made ``msgspec.Meta`` (see the module docstring),
    ``doc`` added as the description when it has none. ``TypeError`` for what msgspec would
    silently ignore."""
    converted = _converted(hint, set())
    if doc:
        base, metas = split_annotated(converted)
        if not any(m.description for m in metas):
            converted = Annotated[(base, *metas, msgspec.Meta(description=doc))]
    return converted


def _converted(hint: Any, seen: set[int]) -> Any:
    base, extras = split_annotated(hint)
    if extras:
        metas = [_meta(extra) for extra in extras]
        return Annotated[(_converted(base, seen), *metas)]
    if hint is object:  # any JSON, as an unannotated parameter
        return Any
    origin = get_origin(hint)
    if origin is None:
        if isinstance(hint, type):
            _check_fields(hint, seen)
        return hint
    if origin is Literal:
        return hint
    args = get_args(hint)
    new = tuple(_converted(a, seen) for a in args)
    if all(n is a for n, a in zip(new, args, strict=True)):
        return hint
    if origin in (Union, types.UnionType):
        return Union[new]  # a union built at run time
    return origin[new]  # list[...], dict[...], a generic Struct...


def _check_fields(cls: type, seen: set[int]) -> None:
    """Refuse an ``Annotated`` extra other than ``msgspec.Meta`` in the fields of a Struct,
    dataclass or TypedDict (msgspec reads the class itself and ignores the rest)."""
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for name, field_hint in _field_hints(cls).items():
        for is_extra, node in _nodes(field_hint, None):
            if not is_extra:
                _check_fields(node, seen)
            elif not isinstance(node, msgspec.Meta):
                raise TypeError(
                    f"field {cls.__name__}.{name} is annotated with {node!r}, which msgspec does not read inside "
                    "a class: say it with msgspec.Meta(...)"
                )


def _meta(extra: Any) -> msgspec.Meta:
    """``extra`` as ``msgspec.Meta`` (``TypeError`` when it cannot be)."""
    if isinstance(extra, msgspec.Meta):
        return extra
    if isinstance(extra, str):
        return msgspec.Meta(description=extra)
    documentation = getattr(extra, "documentation", None)
    if type(extra).__name__ in ("Doc", "DocInfo") and isinstance(documentation, str):  # PEP 727, annotated_types
        return msgspec.Meta(description=documentation)
    if dataclasses.is_dataclass(extra) and not isinstance(extra, type):
        values = {f.name: getattr(extra, f.name) for f in dataclasses.fields(extra)}
        if set(values) <= _CONSTRAINTS:
            return msgspec.Meta(**{k: v for k, v in values.items() if v is not None})
        if set(values) == {"tz"} and values["tz"] in (None, ...):  # annotated_types.Timezone
            return msgspec.Meta(tz=values["tz"] is not None)
    raise TypeError(
        f"{extra!r} is metadata msgwire cannot honour (it takes msgspec.Meta, a description string, "
        "typing_extensions.Doc, pydantic's Field and metadata, and annotated_types' Gt, Ge, Lt, Le, Interval, "
        "MultipleOf, MinLen, MaxLen, Len and Timezone(...) or Timezone(None))"
    )
