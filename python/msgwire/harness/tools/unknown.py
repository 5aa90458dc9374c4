"""Names a model sent that a tool's msgspec-read types do not know, at every depth.

msgspec refuses an unknown name only in a Struct made with ``forbid_unknown_fields=True``, and
only the first; in any other Struct, a dataclass or a TypedDict it drops the name silently. A
tool refuses them all alike (as pydantic-read parameters do: ``pydantic_types.py``), so a model
that invents or misspells a field hears about it, wherever it is. ``unknown_names(hint)`` walks
the decoded JSON beside the type and says each one in msgspec's words (``Object contains unknown
field `ssn` - at `$.person```).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec.inspect as mi

__all__ = ["UnknownNames", "types_in", "unknown_names"]

UnknownNames = Callable[[Any, str, list[str]], None]
"""``check(value, path, problems)``: adds to ``problems`` each unknown name in ``value`` (JSON
builtins) found at ``path`` (``$.key``) or below; a value that does not fit the type is msgspec's
to refuse, and is passed over."""

_NAMED = (mi.StructType, mi.DataclassType, mi.TypedDictType)


def unknown_names(hint: Any) -> UnknownNames | None:
    """The check for ``hint`` (a type msgspec decodes), or ``None`` when it holds no object with
    named fields (nothing to check). The check is put together once, for the type: at each call
    it looks only at the JSON."""
    return _check(mi.type_info(hint), {})


_Walk = UnknownNames


def _check(info: mi.Type, made: dict[int, list[_Walk | None]]) -> _Walk | None:
    """The walk for ``info`` (``None``: nothing to find in it). ``made`` holds the walks of the
    named types met so far, so a type that contains itself refers to its own walk."""
    if isinstance(info, mi.Metadata):
        return _check(info.type, made)
    if isinstance(info, _NAMED):
        return _named(info, made)
    if isinstance(info, mi.UnionType):
        return _union(info, made)
    if isinstance(info, mi.CollectionType):
        return _items([info.item_type], made, repeat=True)
    if isinstance(info, mi.TupleType):
        return _items(list(info.item_types), made, repeat=False)
    if isinstance(info, mi.NamedTupleType):
        return _items([f.type for f in info.fields], made, repeat=False)
    if isinstance(info, mi.DictType | mi.FrozenDictType):
        values = _check(info.value_type, made)
        if values is None:
            return None
        walk_values = values

        def walk_dict(value: Any, path: str, out: list[str]) -> None:
            if type(value) is dict:
                for item in value.values():
                    walk_values(item, f"{path}[...]", out)  # msgspec's path for a value

        return walk_dict
    return None


def _named(info: mi.StructType | mi.DataclassType | mi.TypedDictType, made: dict[int, list[_Walk | None]]) -> _Walk:
    met = made.get(id(info))
    if met is not None:  # met again inside itself: its own walk, made by then

        def walk_again(value: Any, path: str, out: list[str]) -> None:
            walk = met[0]
            if walk is not None:
                walk(value, path, out)

        return walk_again
    cell: list[_Walk | None] = [None]
    made[id(info)] = cell
    if isinstance(info, mi.StructType) and info.array_like:
        walk = cell[0] = _items([f.type for f in info.fields], made, repeat=False) or _nothing
        return walk
    fields = {f.encode_name: _check(f.type, made) for f in info.fields}
    if isinstance(info, mi.StructType) and info.tag_field is not None:
        fields.setdefault(info.tag_field, None)

    def walk_object(value: Any, path: str, out: list[str]) -> None:
        if type(value) is not dict:
            return
        for key, item in value.items():
            if key not in fields:
                out.append(f"Object contains unknown field `{key}` - at `{path}`")
                continue
            inner = fields[key]
            if inner is not None:
                inner(item, f"{path}.{key}", out)

    cell[0] = walk_object
    return walk_object


def _items(types: list[mi.Type], made: dict[int, list[_Walk | None]], *, repeat: bool) -> _Walk | None:
    walks = [_check(t, made) for t in types]
    if all(w is None for w in walks):
        return None

    def walk_array(value: Any, path: str, out: list[str]) -> None:
        if type(value) is not list:
            return
        for i, item in enumerate(value):
            inner = walks[0] if repeat else walks[i] if i < len(walks) else None
            if inner is not None:
                inner(item, f"{path}[{i}]", out)

    return walk_array


def _union(info: mi.UnionType, made: dict[int, list[_Walk | None]]) -> _Walk | None:
    """The member msgspec reads a value as: at most one object type and one array type, or
    Structs told apart by their tag."""
    members = [m.type if isinstance(m, mi.Metadata) else m for m in info.types]
    arrays = (mi.CollectionType, mi.TupleType, mi.NamedTupleType)
    objects = [m for m in members if isinstance(m, (*_NAMED, mi.DictType, mi.FrozenDictType)) and not _array(m)]
    array = next((m for m in members if isinstance(m, arrays) or _array(m)), None)
    tagged = {m.tag: _check(m, made) for m in objects if isinstance(m, mi.StructType) and m.tag_field is not None}
    tag_field = next((m.tag_field for m in objects if isinstance(m, mi.StructType) and m.tag_field), None)
    walk_object = _check(objects[0], made) if objects and not tagged else None
    walk_array = _check(array, made) if array is not None else None
    if walk_object is None and walk_array is None and not any(tagged.values()):
        return None

    def walk_member(value: Any, path: str, out: list[str]) -> None:
        if type(value) is dict:
            inner = tagged.get(value.get(tag_field)) if tagged else walk_object
        elif type(value) is list:
            inner = walk_array
        else:
            return
        if inner is not None:
            inner(value, path, out)

    return walk_member


def _nothing(value: Any, path: str, out: list[str]) -> None:
    return None


def _array(info: mi.Type) -> bool:
    return isinstance(info, mi.StructType) and info.array_like


def types_in(info: mi.Type) -> Iterator[mi.Type]:
    """Every type in ``info``'s tree, each once (a recursive type refers to itself)."""
    seen: set[int] = set()
    stack = [info]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        for name in node.__struct_fields__:
            value = getattr(node, name)
            for item in value if isinstance(value, tuple) else (value,):
                item = item.type if isinstance(item, mi.Field) else item
                if isinstance(item, mi.Type):
                    stack.append(item)
