"""The JSON Schema of a function's arguments, from its signature and docstring.

The arguments become a msgspec Struct (made with ``msgspec.defstruct``): msgspec writes its JSON
Schema and the same Struct decodes the model's raw arguments text, so what the model is told and
what is checked can never drift apart.

- types: anything msgspec decodes (``str``, ``int``, ``Literal``, ``list[...]``, ``datetime``,
  Structs, dataclasses, ``X | None``, ...); a parameter without an annotation takes any JSON;
- ``Annotated`` constraints: ``msgspec.Meta(ge=..., max_length=..., pattern=..., description=...)``,
  a plain string (its description), or objects with the attributes of ``annotated_types``
  (``Ge``, ``Interval``, ``Len``, ``MultipleOf``...);
- defaults: a parameter with a default is optional (the schema says its default);
- the docstring: its text before the first section is the tool's description; parameter
  descriptions come from a Google (``Args:``), NumPy (``Parameters`` / ``----``) or Sphinx
  (``:param name:``) section, unless the annotation already has one;
- a function whose only parameter is a Struct takes that Struct's fields as its arguments;
- unknown argument names are refused (``additionalProperties: false``), so a model that invents
  one hears about it.
"""

from __future__ import annotations

import copy
import inspect
import re
import typing
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

import msgspec

__all__ = ["ArgumentsModel", "arguments_model", "parse_docstring"]

_PREFIX = "#/$defs/"
_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern")


@dataclass(frozen=True)
class ArgumentsModel:
    """How a function takes its arguments: the Struct they decode into, its JSON Schema, the
    parameters filled from it, and the parameter (if any) that receives the ``ToolContext``."""

    type: type[msgspec.Struct]
    schema: dict[str, Any]
    description: str
    parameters: tuple[str, ...]
    flatten: bool
    """The function's only parameter is the Struct itself (called with the decoded Struct)."""
    context_parameter: str | None


def arguments_model(fn: Any, name: str, context_type: type) -> ArgumentsModel:
    """The arguments of ``fn`` as a Struct and a JSON Schema (see the module docstring)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    description, parameter_docs = parse_docstring(inspect.getdoc(fn) or "")
    context_parameter = None
    fields: list[tuple[str, Any, Any]] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"tool {name!r}: *args and **kwargs cannot be described to a model")
        hint = hints.get(parameter.name, Any)
        if context_type in (hint, *get_args(hint)):  # ToolContext, or ToolContext | None
            context_parameter = parameter.name
            continue
        hint = _with_metadata(hint, parameter_docs.get(parameter.name))
        if parameter.default is inspect.Parameter.empty:
            fields.append((parameter.name, hint, msgspec.NODEFAULT))
        else:
            fields.append((parameter.name, hint, _default(parameter.default)))

    lone = _struct_of(fields[0][1]) if len(fields) == 1 and fields[0][2] is msgspec.NODEFAULT else None
    if lone is not None:
        arguments: type[msgspec.Struct] = lone
        flatten = True
    else:
        arguments = msgspec.defstruct(
            f"{name}__arguments",
            [(f, t) if d is msgspec.NODEFAULT else (f, t, d) for f, t, d in fields],
            kw_only=True,
            forbid_unknown_fields=True,
        )
        flatten = False
    return ArgumentsModel(
        type=arguments,
        schema=schema_of(arguments),
        description=description,
        parameters=tuple(f for f, _, _ in fields),
        flatten=flatten,
        context_parameter=context_parameter,
    )


def schema_of(arguments: type[msgspec.Struct]) -> dict[str, Any]:
    """The Struct's object schema at the top level (no title), nested Structs written in place
    (Gemini's and some local models' tool schemas do not follow ``$ref``); only a type that
    contains itself stays under ``$defs``."""
    (ref,), components = msgspec.json.schema_components([arguments], ref_template=_PREFIX + "{name}")
    top = dict(components.pop(ref["$ref"].removeprefix(_PREFIX)))
    top.pop("title", None)
    top.setdefault("properties", {})
    recursive = {name for name in components if _refers_to(components[name], name, components, set())}
    top = dict(_inline(top, components, recursive))
    kept = {name: _inline(components[name], components, recursive) for name in sorted(recursive)}
    if kept:
        top["$defs"] = kept
    return top


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


def _struct_of(hint: Any) -> type[msgspec.Struct] | None:
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    return hint if isinstance(hint, type) and issubclass(hint, msgspec.Struct) else None


def _default(value: Any) -> Any:
    if isinstance(value, (list, dict, set)) and value:  # msgspec wants a factory for these
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


def _with_metadata(hint: Any, doc: str | None) -> Any:
    """``hint`` with its ``Annotated`` extras turned into ``msgspec.Meta`` (which msgspec
    reads), and the docstring's description added when it has none."""
    extras: tuple[Any, ...] = ()
    base = hint
    if get_origin(hint) is Annotated:
        base, *rest = get_args(hint)
        extras = tuple(rest)
    metas = [m for m in (_as_meta(e) for e in extras) if m is not None]
    if doc and not any(m.description for m in metas):
        metas.append(msgspec.Meta(description=doc))
    return Annotated[(base, *metas)] if metas else base


def _as_meta(extra: Any) -> msgspec.Meta | None:
    if isinstance(extra, msgspec.Meta):
        return extra
    if isinstance(extra, str):
        return msgspec.Meta(description=extra)
    found = {c: getattr(extra, c) for c in _CONSTRAINTS if getattr(extra, c, None) is not None}
    return msgspec.Meta(**found) if found else None  # e.g. annotated_types.Ge(0), Len(1, 5)


# --- docstrings -----------------------------------------------------------------------------

_GOOGLE = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$")
_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns?|Yields?|Raises|"
    r"Examples?|Notes?|See Also|Attributes|Warnings?|References|Todo)\s*:?\s*$"
)
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?::\s*(.*))?$")
_SPHINX = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a Google, NumPy or Sphinx docstring."""
    lines = doc.expandtabs().splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    i = 0
    in_description = True
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        numpy_header = i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]) and _SECTION.match(stripped)
        if _SPHINX.match(stripped):
            in_description = False
            i = _sphinx_item(lines, i, params)
            continue
        if numpy_header:
            in_description = False
            if re.match(r"^(Parameters|Params|Other Parameters|Arguments)$", stripped):
                i = _numpy_section(lines, i + 2, params)
            else:
                i = _skip_section(lines, i + 2, _indent(line))
            continue
        if _SECTION.match(stripped) and stripped.endswith(":"):
            in_description = False
            if _GOOGLE.match(stripped):
                i = _google_section(lines, i + 1, _indent(line), params)
            else:
                i = _skip_section(lines, i + 1, _indent(line))
            continue
        if in_description:
            description.append(stripped)
        i += 1
    return "\n".join(_paragraphs(description)).strip(), params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _paragraphs(lines: list[str]) -> list[str]:
    """Lines joined into paragraphs (a docstring's hard wraps undone), blank-line separated."""
    out: list[str] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line:
            current.append(line)
        elif current:
            out.extend([" ".join(current), ""])
            current = []
    return out[:-1]


def _skip_section(lines: list[str], i: int, header_indent: int) -> int:
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > header_indent):
        i += 1
    return i


def _google_section(lines: list[str], i: int, header_indent: int, params: dict[str, str]) -> int:
    item_indent: int | None = None
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if item_indent is None:
            item_indent = indent
        match = _GOOGLE_ITEM.match(line.strip()) if indent == item_indent else None
        if match:
            name = match.group(1).lstrip("*")
            params[name] = match.group(3).strip()
        elif name is not None:  # a continuation line
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _numpy_section(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    base: int | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]):
            break  # the next section
        indent = _indent(line)
        if base is None:
            base = indent
        if indent == base:
            match = _NUMPY_ITEM.match(line.strip())
            if match is None:
                break
            name = match.group(1).lstrip("*")
            params[name] = ""
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _sphinx_item(lines: list[str], i: int, params: dict[str, str]) -> int:
    match = _SPHINX.match(lines[i].strip())
    assert match is not None
    name, text = match.group(1), match.group(2).strip()
    indent = _indent(lines[i])
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > indent and not lines[i].strip().startswith(":"):
        text = f"{text} {lines[i].strip()}"
        i += 1
    params[name] = text
    return i
