"""The JSON Schema of a function's arguments, from its signature and docstring, and the decoder
that checks a model's arguments against it.

The arguments become a msgspec Struct (made with ``msgspec.defstruct``): msgspec writes its JSON
Schema and the same Struct decodes the model's raw arguments text, so what the model is told and
what is checked can never drift apart.

- types: anything msgspec decodes (``str``, ``int``, ``Literal``, ``list[...]``, ``datetime``,
  Structs, dataclasses, TypedDicts, ``X | None``, ...); a parameter without an annotation takes
  any JSON; pydantic models and types, and ``Annotated[T, pydantic.Field(...)]``, are read and
  validated by pydantic (``pydantic_types.py``, loaded only then);
- ``Annotated`` metadata (``hints.py``): ``msgspec.Meta(ge=..., max_length=..., pattern=...,
  description=...)``, a plain string or ``typing_extensions.Doc`` (the description),
  ``annotated_types`` constraints, pydantic's ``Field(...)``; metadata msgwire cannot honour,
  and a type it cannot describe to a model, are refused with ``TypeError`` naming the tool and
  the parameter;
- defaults: a parameter with a default is optional (the schema says its default);
- the docstring (``docstrings.py``): its text before the first section is the tool's description,
  followed by its Returns section (``describe_returns=False`` leaves that out); parameter
  descriptions come from a Google, NumPy or Sphinx section, unless the annotation has one; the
  attribute docstrings of a Struct's, dataclass's or TypedDict's fields describe those fields;
- a function whose only parameter is a Struct, a dataclass, a TypedDict or a pydantic model
  (required) takes that type's fields as its arguments, and is called with the decoded value;
- one rule for every argument, whichever library reads it (``arguments.py``): JSON's own types
  (no ``"13"`` for an integer: pydantic runs in strict mode), unknown names refused at every
  depth (``additionalProperties: false`` on each object; a pydantic model's own ``extra=`` is
  kept), so a model that invents one hears about it, and every problem told at once.

Nested types are written in place (Gemini's and some local models' tool schemas do not follow
``$ref``); only a type that contains itself stays under ``$defs``.
"""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

import msgspec
import msgspec.inspect as mi

from .arguments import Argument, envelope_decoder, lone_decoder, msgspec_argument
from .docstrings import Docstring, attribute_docs, parse_docstring
from .hints import NO_DEFAULT, Param, for_msgspec, is_pydantic, split_annotated, uses_pydantic
from .unknown import types_in

__all__ = ["ArgumentsModel", "arguments_model", "parse_docstring", "schema_of"]

_PREFIX = "#/$defs/"
_NAMED = (mi.StructType, mi.DataclassType, mi.TypedDictType)


@dataclass(frozen=True)
class ArgumentsModel:
    """How a function takes its arguments: their JSON Schema, ``decode`` (the arguments' JSON
    text -> what ``invoke`` reads; ``msgspec.ValidationError`` / ``DecodeError`` with the JSON
    path), ``to_builtins`` (decoded arguments -> JSON builtins), the parameters filled from them,
    and the parameter (if any) that receives the ``ToolContext``."""

    schema: dict[str, Any]
    description: str
    parameters: tuple[str, ...]
    flatten: bool
    """The function's only parameter is the arguments themselves (called with the decoded value)."""
    context_parameter: str | None
    decode: Callable[[str], Any]
    to_builtins: Callable[[Any], Any]


def arguments_model(fn: Any, name: str, context_type: type, *, describe_returns: bool = True) -> ArgumentsModel:
    """The arguments of ``fn`` (see the module docstring)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    doc: Docstring = parse_docstring(inspect.getdoc(fn) or "")
    context_parameter = None
    params: list[Param] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"tool {name!r}: *args and **kwargs cannot be described to a model")
        hint = hints.get(parameter.name, Any)
        if context_type in (hint, *get_args(hint)):  # ToolContext, or ToolContext | None
            context_parameter = parameter.name
            continue
        params.append(Param(parameter.name, hint, parameter.default, doc.params.get(parameter.name)))

    by_pydantic = {p.name for p in params if uses_pydantic(p.hint) or is_pydantic(p.default)}
    lone = params[0] if len(params) == 1 and params[0].default is NO_DEFAULT else None
    read = None
    if lone is not None:
        read = _lone_pydantic(name, lone) if lone.name in by_pydantic else _lone_msgspec(name, lone)
    if read is None:
        read = _envelope(name, params, by_pydantic)
    return ArgumentsModel(
        schema=read.schema,
        description=doc.description(returns=describe_returns),
        parameters=tuple(p.name for p in params),
        flatten=read.flatten,
        context_parameter=context_parameter,
        decode=read.decode,
        to_builtins=read.to_builtins,
    )


@dataclass(frozen=True)
class _Read:
    """How the arguments are read: their schema, decoder and builtins, and whether the decoded
    value is the lone parameter itself (``flatten``) or an object of the parameters."""

    schema: dict[str, Any]
    decode: Callable[[str], Any]
    to_builtins: Callable[[Any], Any]
    flatten: bool


def _lone_msgspec(tool: str, param: Param) -> _Read | None:
    """The arguments as a lone Struct, dataclass or TypedDict parameter (its fields the argument
    names); ``None`` for any other type."""
    hint = _msgspec_hint(tool, param)
    info = mi.type_info(split_annotated(hint)[0])
    if not isinstance(info, _NAMED) or getattr(info, "array_like", False):
        return None
    schema = _schema(tool, hint, closed=True)
    schema["additionalProperties"] = False
    return _Read(schema, lone_decoder(hint), msgspec.to_builtins, flatten=True)


def _lone_pydantic(tool: str, param: Param) -> _Read | None:
    from . import pydantic_types  # pydantic only for the tools that use it

    lone = pydantic_types.lone(tool, param)
    if lone is None:
        return None
    top = dict(lone.schema)
    defs = top.pop("$defs", {})
    top.pop("title", None)
    return _Read(_finished(top, defs), lone.validate, lone.to_builtins, flatten=True)


def _envelope(tool: str, params: list[Param], by_pydantic: set[str]) -> _Read:
    """The arguments as an object of the parameters, decoded into a Struct made for them;
    parameters pydantic reads are kept as raw JSON by msgspec, then validated by pydantic
    (``arguments.py``)."""
    validated: list[Any] = []
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    if by_pydantic:
        from . import pydantic_types  # pydantic only for the tools that use it

        validated, properties, defs = pydantic_types.arguments(tool, [p for p in params if p.name in by_pydantic])
    by_name = {a.name: a for a in validated}
    arguments: list[Argument] = []
    fields: list[tuple[str, Any, Any]] = []
    for param in params:
        if param.name in by_name:
            made = by_name[param.name]
            required = made.default is NO_DEFAULT and made.factory is None
            arguments.append(Argument(param.name, made.key, required, made.validate, made.missing, raw=True))
            default = msgspec.field(default=msgspec.NODEFAULT if required else msgspec.UNSET, name=made.key)
            fields.append((param.name, msgspec.Raw, default))
        else:
            hint = _msgspec_hint(tool, param)
            arguments.append(msgspec_argument(tool, param.name, hint, param.default))
            fields.append((param.name, hint, _default(param.default)))
    struct = msgspec.defstruct(f"{tool}__arguments", fields, kw_only=True, forbid_unknown_fields=True)
    schema = _schema(tool, struct, properties, defs, envelope=struct, closed=True)
    decode = envelope_decoder(msgspec.json.Decoder(struct), arguments)
    if not validated:
        return _Read(schema, decode, msgspec.to_builtins, flatten=False)

    from .pydantic_types import to_jsonable

    return _Read(schema, decode, lambda arguments: msgspec.to_builtins(arguments, enc_hook=to_jsonable), flatten=False)


def _msgspec_hint(tool: str, param: Param) -> Any:
    """The parameter's annotation as msgspec reads it, checked: ``TypeError`` naming the tool
    and the parameter for metadata it cannot honour or a type it cannot describe."""
    where = f"tool {tool!r}, parameter {param.name!r}"
    try:
        hint = for_msgspec(param.hint, param.doc)
        info = mi.type_info(hint)
    except TypeError as exc:
        raise TypeError(f"{where}: {exc}") from exc
    for node in types_in(info):
        if isinstance(node, mi.CustomType):
            raise TypeError(
                f"{where}: msgwire cannot describe {node.cls!r} to a model; use a type msgspec decodes (str, int, "
                "float, bool, None, datetime, Literal, Enum, list, dict, Struct, dataclass, TypedDict...) or, with "
                "pydantic installed, a pydantic model or type"
            )
    return hint


def _default(value: Any) -> Any:
    if value is NO_DEFAULT:
        return msgspec.NODEFAULT
    if isinstance(value, (list, dict, set)) and value:  # msgspec wants a factory for these
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


def schema_of(arguments: Any) -> dict[str, Any]:
    """The JSON Schema of a Struct (or dataclass, TypedDict) as a tool's parameters: an object
    schema at the top level without a title, its fields' attribute docstrings as their
    descriptions, nested types written in place."""
    return _schema(getattr(arguments, "__name__", repr(arguments)), arguments)


def _schema(
    tool: str,
    top_type: Any,
    properties: dict[str, Any] | None = None,
    defs: dict[str, Any] | None = None,
    envelope: Any = None,
    *,
    closed: bool = False,
) -> dict[str, Any]:
    """msgspec's schema of ``top_type`` (see ``schema_of``), with ``properties`` replacing the
    ones of the same name and ``defs`` (pydantic's) joining msgspec's components; ``envelope``
    is the Struct made for the parameters (no source to read attribute docstrings from);
    ``closed``: every object of a Struct, dataclass or TypedDict says ``additionalProperties:
    false`` (a tool refuses names they do not know at every depth: ``unknown.py``)."""
    named = [t for t in types_in(mi.type_info(top_type)) if isinstance(t, _NAMED) and t.cls is not envelope]
    try:
        (top_ref, *refs), components = msgspec.json.schema_components(
            [top_type, *(t.cls for t in named)], ref_template=_PREFIX + "{name}"
        )
    except TypeError as exc:  # e.g. a default JSON cannot carry
        raise TypeError(f"tool {tool!r}: {exc}") from exc
    for info, ref in zip(named, refs, strict=True):
        component = components[ref["$ref"].removeprefix(_PREFIX)]
        _describe_fields(component, info)
        if closed and component.get("type") == "object":
            component.setdefault("additionalProperties", False)
    top = _resolve(top_ref, components)
    top.pop("title", None)
    renamed = _join(components, defs or {})
    if properties:
        top["properties"] = {**top["properties"], **_renamed(properties, renamed)}
    return _finished(top, components)


def _describe_fields(component: dict[str, Any], info: Any) -> None:
    """The attribute docstrings of a class's fields as their descriptions (a description the
    field already has wins)."""
    docs = attribute_docs(getattr(info.cls, "__origin__", info.cls))
    names = {f.name: f.encode_name for f in info.fields}
    props = component.get("properties", {})
    for attribute, text in docs.items():
        key = names.get(attribute)
        if key in props and "description" not in props[key]:
            props[key] = {"description": text, **props[key]}


def _resolve(node: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        return {**components[ref.removeprefix(_PREFIX)], **{k: v for k, v in node.items() if k != "$ref"}}
    return dict(node)


def _join(components: dict[str, Any], defs: dict[str, Any]) -> dict[str, str]:
    """``defs`` added to ``components``; a name already taken by another schema is given a
    number (returned: old name -> new name, for the refs to follow)."""
    renamed: dict[str, str] = {}
    for name, schema in defs.items():
        new = name
        n = 1
        while new in components and components[new] != schema:
            n += 1
            new = f"{name}{n}"
        renamed[name] = new
    for name, schema in defs.items():
        components[renamed[name]] = _renamed(schema, renamed)
    return {old: new for old, new in renamed.items() if old != new}


def _renamed(node: Any, renamed: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_renamed(n, renamed) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _renamed(v, renamed) for k, v in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.removeprefix(_PREFIX) in renamed:
        out["$ref"] = _PREFIX + renamed[ref.removeprefix(_PREFIX)]
    return out


def _finished(top: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """``top`` with every reference written in place but those of a type that contains itself,
    which stay under ``$defs``; an empty ``required`` left out; an ``enum`` given its values'
    ``type`` (Gemini reads an enum of strings only with it)."""
    top.setdefault("properties", {})
    if top.get("required") == []:
        del top["required"]
    recursive = {name for name in components if _refers_to(components[name], name, components, set())}
    top = _typed_enums(_inline(top, components, recursive))
    kept = {name: _typed_enums(_inline(components[name], components, recursive)) for name in sorted(recursive)}
    if kept:
        top["$defs"] = kept
    return top


_JSON_TYPES = ((bool, "boolean"), (str, "string"), (int, "integer"), (float, "number"), (type(None), "null"))


def _typed_enums(node: Any) -> Any:
    if isinstance(node, list):
        return [_typed_enums(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _typed_enums(v) for k, v in node.items()}
    values = node.get("enum")
    if isinstance(values, list) and values and "type" not in node:
        kinds = {next((name for kind, name in _JSON_TYPES if isinstance(v, kind)), None) for v in values}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
    return out


def _inline(node: Any, components: dict[str, Any], keep: set[str]) -> Any:
    if isinstance(node, list):
        return [_inline(n, components, keep) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX) and ref[len(_PREFIX) :] not in keep:
        merged = {**components[ref[len(_PREFIX) :]], **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, components, keep)
    return {k: _inline(v, components, keep) for k, v in node.items()}


def _refers_to(node: Any, name: str, components: dict[str, Any], seen: set[str]) -> bool:
    """Whether ``node`` refers to ``name``, directly or through other components."""
    if isinstance(node, list):
        return any(_refers_to(n, name, components, seen) for n in node)
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        target = ref[len(_PREFIX) :]
        if target == name:
            return True
        if target not in seen:
            seen.add(target)
            return _refers_to(components.get(target), name, components, seen)
    return any(_refers_to(v, name, components, seen) for k, v in node.items() if k != "$ref")
