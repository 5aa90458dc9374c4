"""Tool parameters pydantic reads: pydantic models (``BaseModel``, ``RootModel``, pydantic
dataclasses, nested, optional, recursive), pydantic types and ``Annotated[T, Field(...)]``.

``schema.py`` imports this module only when a parameter uses pydantic (``hints.uses_pydantic``),
so msgwire needs pydantic only for the tools that do (``pip install 'msgwire[pydantic]'``).

Each such parameter gets a ``TypeAdapter`` of its annotation: its JSON Schema is pydantic's (less
the titles pydantic makes up for fields, as pydantic-ai writes them), the model's argument is
validated by pydantic, and the function receives what pydantic made (model instances). A
validation error becomes a ``msgspec.ValidationError`` in msgspec's words' shape (``<message> -
at `$.path```, every error joined by ``; ``), so the runner tells the model as for any other
bad argument.

The rule is every parameter's (``arguments.py``), not pydantic's defaults:

- Strict: pydantic's strict mode, which for JSON is msgspec's rule (no ``"13"`` or ``13.0`` for an
  integer, no ``"yes"`` or ``"true"`` for a boolean; an ISO string is still a datetime, a date or
  a UUID).
- A name a model, dataclass or TypedDict does not know is refused at every depth, said in
  msgspec's words (``Object contains unknown field `ssn` - at `$.person```), unless its config
  (its own, or the one it inherits) sets ``extra=``: ``"allow"`` and ``"ignore"`` are kept.

``_Strict.of(adapter)`` copies pydantic's core schema with ``extra_behavior="forbid"`` wherever
nobody said otherwise (``_closed``); the JSON Schema is made from that copy (``_said_closed``), so
the model is told ``additionalProperties: false`` exactly where a name is refused. Validation
cannot use the copy alone: pydantic-core reuses a model class's own validator in place of its
schema, so a model forbids only by its own config. When no type in the parameter sets ``extra=``
(the usual case), validation runs with ``extra="forbid"`` for all of it; when one does, a model
without a word of its own has the names it dropped found by walking the validated value beside
the JSON (``_dropped``), and those are told only once nothing else is wrong.

A ``Field(...)`` on the parameter itself is the parameter's: its ``default`` /
``default_factory`` are the parameter's default, its ``alias`` (or a string
``validation_alias``) the argument's name; its description and constraints go to the adapter.
Whatever pydantic would ignore is refused with ``TypeError`` naming the tool and the parameter:
``Field`` attributes that only mean something on a model field (``exclude``, ``frozen``,
``repr``...), an ``AliasChoices`` / ``AliasPath``, a ``msgspec.Meta`` or a plain string nested
inside the type, metadata pydantic does not know.

A lone model parameter (a model with named fields, not a ``RootModel``) is the arguments
themselves, as for a Struct: the model's fields are the tool's argument names, under the same
rule.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from msgwire.errors import MissingExtraError

from .hints import NO_DEFAULT, Param, annotated_extras, is_pydantic, split_annotated

try:
    from pydantic import AliasChoices, AliasPath, BaseModel, Field, RootModel, TypeAdapter, ValidationError
    from pydantic.errors import PydanticErrorMixin
    from pydantic.fields import FieldInfo
    from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, PydanticJsonSchemaWarning
    from pydantic.warnings import UnsupportedFieldAttributeWarning
    from pydantic_core import CoreSchema, PydanticUndefined, SchemaValidator, core_schema, to_jsonable_python
except ImportError as exc:
    raise MissingExtraError("msgwire's tools with pydantic parameters", "pydantic", exc) from None

__all__ = ["PydanticArgument", "PydanticLone", "arguments", "lone", "to_jsonable"]

REF = "#/$defs/{model}"
_REFUSED_WARNINGS = (UnsupportedFieldAttributeWarning, PydanticJsonSchemaWarning)


class _ToolJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it makes up for fields (``"title": "X"`` for
    ``x``; a title given with ``Field(title=...)`` stays), and ``additionalProperties: false`` on
    each model or dataclass that refuses names it does not know (``_said_closed``)."""

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return _said_closed(super().model_schema(schema), schema)

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return _said_closed(super().dataclass_schema(schema), schema)


@dataclass(frozen=True)
class _Strict:
    """What validates one parameter (or a lone model's arguments): the closed core ``schema``,
    its validator, and whether some type in it sets ``extra=`` itself (``said``)."""

    schema: CoreSchema
    validator: SchemaValidator
    said: bool

    @classmethod
    def of(cls, adapter: TypeAdapter[Any]) -> _Strict:
        adapter.rebuild()  # a core schema, not pydantic's placeholder for one not built yet
        said: list[bool] = []
        schema = _closed(adapter.core_schema, False, said)
        return cls(schema, SchemaValidator(schema), bool(said))

    def validate(self, data: str | bytes, prefix: str) -> Any:
        """``data`` (JSON) validated, or ``msgspec.ValidationError`` with every problem, paths
        under ``prefix`` (``$`` or ``$.name``)."""
        try:
            value = self.validator.validate_json(data, strict=True, extra=None if self.said else "forbid")
        except ValidationError as exc:
            raise _invalid(exc, prefix) from None
        if self.said:
            dropped = list(_dropped(value, msgspec.json.decode(data), prefix))
            if dropped:
                raise msgspec.ValidationError("; ".join(dropped))
        return value


def _said_closed(
    json_schema: JsonSchemaValue, schema: core_schema.ModelSchema | core_schema.DataclassSchema
) -> JsonSchemaValue:
    """``json_schema`` of a model or dataclass with ``additionalProperties: false`` when its closed
    core schema forbids extra names (pydantic's generator reads a model's class config for it, not
    the core schema)."""
    inner: Any = schema["schema"]
    while inner.get("type", "").startswith("function-") and "schema" in inner:  # a model's own validators
        inner = inner["schema"]
    if inner.get("extra_behavior") == "forbid" and json_schema.get("type") == "object":
        json_schema.setdefault("additionalProperties", False)
    return json_schema


def _invalid(error: ValidationError, prefix: str) -> msgspec.ValidationError:
    """pydantic's errors in msgspec's shape (``<message> - at `$.path```), joined by ``; ``."""
    parts = []
    for item in error.errors(include_url=False):
        loc, message = item["loc"], item["msg"]
        if item["type"] in _EXTRA and loc:  # said as msgspec says it, at the object
            loc, message = loc[:-1], _unknown(str(loc[-1]))
        path = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        parts.append(f"{message} - at `{path}`")
    return msgspec.ValidationError("; ".join(parts))


_EXTRA = ("extra_forbidden", "unexpected_keyword_argument")  # a model's or a TypedDict's, a dataclass's


def _unknown(name: str) -> str:
    return f"Object contains unknown field `{name}`"


def _closed(node: Any, said: bool, anywhere: list[bool]) -> Any:
    """A copy of a core schema in which every model, dataclass and TypedDict whose config does not
    set ``extra`` forbids names it does not know (``said``: the enclosing model's or dataclass's
    config sets it; ``anywhere`` gets an item for each type whose config does). Only the schema's
    dicts and lists are copied: the classes, functions and defaults in it are used as they are."""
    if isinstance(node, list):
        return [_closed(item, said, anywhere) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("model", "dataclass"):
        said = "extra_fields_behavior" in node.get("config", {})
        if said:
            anywhere.append(True)
    copied = {key: _closed(value, said, anywhere) for key, value in node.items()}
    if kind in ("model-fields", "dataclass-args") and not said and "extra_behavior" not in node:
        copied["extra_behavior"] = "forbid"
    elif kind == "typed-dict":
        # pydantic writes the default ("ignore") in; a closed or extra_items TypedDict said its own
        if "extra_fields_behavior" in node.get("config", {}) or node.get("extra_behavior", "ignore") != "ignore":
            anywhere.append(True)
        else:
            copied["extra_behavior"] = "forbid"
    return copied


def _dropped(value: Any, given: Any, path: str) -> Iterator[str]:
    """The names a model without an ``extra=`` of its own dropped from ``given`` (the JSON it was
    validated from), at every depth; the validated ``value`` says which type each part became
    (a union's choice included)."""
    if isinstance(value, BaseModel):
        cls = type(value)
        if cls.__pydantic_root_model__:
            yield from _dropped(getattr(value, "root", None), given, path)
            return
        if not isinstance(given, dict):
            return
        fields = _accepted_names(cls)
        for key, item in given.items():
            if key in fields:
                field = fields[key]
                if field is not None:
                    yield from _dropped(getattr(value, field), item, f"{path}.{key}")
            elif "extra" not in cls.model_config:
                yield f"{_unknown(key)} - at `{path}`"
    elif dataclasses.is_dataclass(value) and not isinstance(value, type) and isinstance(given, dict):
        for key, item in given.items():
            if hasattr(value, key):
                yield from _dropped(getattr(value, key), item, f"{path}.{key}")
    elif isinstance(value, dict) and isinstance(given, dict):
        by_key = all(key in value for key in given)
        pairs = zip(given, value.values() if not by_key else (value[k] for k in given), strict=False)
        for key, item in pairs:
            yield from _dropped(item, given[key], f"{path}.{key}")
    elif isinstance(value, list | tuple) and isinstance(given, list):
        for i, (item, part) in enumerate(zip(value, given, strict=False)):
            yield from _dropped(item, part, f"{path}[{i}]")


def _accepted_names(cls: type[BaseModel]) -> dict[str, str | None]:
    """The names a model's validation reads, each to the field it fills: each field's aliases
    (every choice of an ``AliasChoices``) and, when the config allows it, its name; the first key
    of an ``AliasPath`` is read too, but is not the field's whole value (``None``)."""
    config = cls.model_config
    by_alias = config.get("validate_by_alias", True)
    by_name = config.get("validate_by_name") or config.get("populate_by_name") or not by_alias
    names: dict[str, str | None] = {}
    fields: dict[str, FieldInfo] = cls.model_fields
    for name, info in fields.items():
        alias = info.validation_alias if info.validation_alias is not None else info.alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        aliases: dict[str, str | None] = {}
        for choice in choices:
            if isinstance(choice, str):
                aliases[choice] = name
            elif choice is not None and isinstance(choice.path[0], str):  # an AliasPath
                aliases[choice.path[0]] = None
        if by_alias:
            names.update(aliases)
        if by_name or not aliases:
            names[name] = name
    return names


@dataclass(frozen=True)
class PydanticArgument:
    """One parameter pydantic validates: ``name`` in the function, ``key`` in the arguments'
    JSON, its ``default`` (``NO_DEFAULT`` when required) or ``factory``."""

    name: str
    key: str
    strict: _Strict
    default: Any
    factory: Callable[[], Any] | None

    def missing(self) -> Any:
        """The value of an argument the model left out (one it may leave out)."""
        return self.factory() if self.factory is not None else copy.deepcopy(self.default)

    def validate(self, raw: bytes) -> Any:
        """The argument's JSON text validated (``msgspec.ValidationError`` with every problem
        when it does not fit)."""
        return self.strict.validate(raw, f"$.{self.key}")


@dataclass(frozen=True)
class PydanticLone:
    """A lone model parameter that is the arguments: ``schema`` (an object schema, refs under
    ``$defs``), ``validate(text)``, ``to_builtins(value)``."""

    adapter: TypeAdapter[Any]
    strict: _Strict
    schema: dict[str, Any]

    def validate(self, text: str) -> Any:
        return self.strict.validate(text, "$")

    def to_builtins(self, value: Any) -> Any:
        return self.adapter.dump_python(value, mode="json", by_alias=True)


def to_jsonable(value: Any) -> Any:
    """A value pydantic made (a model, a URL...) as JSON builtins, aliases as the keys (an
    ``enc_hook`` for ``msgspec.to_builtins``)."""
    return to_jsonable_python(value, by_alias=True)


def arguments(tool: str, params: list[Param]) -> tuple[list[PydanticArgument], dict[str, Any], dict[str, Any]]:
    """The parameters' arguments, their JSON Schemas by argument name, and the schemas they
    refer to (``$defs``, refs written ``#/$defs/<name>``)."""
    made = [_argument(tool, p) for p in params]
    with _refusing(tool, ", ".join(p.name for p in params)):
        generator = _ToolJsonSchema(ref_template=REF)
        schemas, defs = generator.generate_definitions([(a.key, "validation", a.strict.schema) for a in made])
    properties = {a.key: schemas[(a.key, "validation")] for a in made}
    return made, properties, {str(name): schema for name, schema in defs.items()}


def lone(tool: str, param: Param) -> PydanticLone | None:
    """``param`` as the arguments themselves when its type is a pydantic model (or pydantic
    dataclass, or a dataclass / TypedDict holding pydantic types) whose schema is an object
    with properties; ``None`` otherwise."""
    base, _ = split_annotated(param.hint)
    if not isinstance(base, type) or issubclass(base, RootModel):
        return None
    with _refusing(tool, param.name):
        adapter: TypeAdapter[Any] = TypeAdapter(_for_pydantic(param.hint, param.doc))
        strict = _Strict.of(adapter)
        schema = _ToolJsonSchema(ref_template=REF).generate(strict.schema)
    defs = schema.pop("$defs", {})
    top = _resolved(schema, defs)
    if top.get("type") != "object" or "properties" not in top:
        return None
    if defs:
        top["$defs"] = defs
    return PydanticLone(adapter, strict, top)


def _resolved(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema with a top-level ``$ref`` replaced by what it names (its siblings kept)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        return {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
    return dict(schema)


def _argument(tool: str, param: Param) -> PydanticArgument:
    with _refusing(tool, param.name):
        hint = _for_pydantic(param.hint, param.doc)
        if isinstance(param.default, FieldInfo):
            info = FieldInfo.from_annotated_attribute(hint, param.default)
        elif param.default is NO_DEFAULT:
            info = FieldInfo.from_annotation(hint)
        else:
            info = FieldInfo.from_annotated_attribute(hint, param.default)
        key = _key(info, param.name)
        kept = copy.copy(info)  # the field's own attributes are the parameter's; the rest, the type's
        kept.alias = kept.validation_alias = kept.serialization_alias = None
        kept.alias_priority = None
        annotated: Any = Annotated[info.annotation, kept]
        strict = _Strict.of(TypeAdapter(annotated))
    default = NO_DEFAULT if info.default is PydanticUndefined else info.default
    factory = info.default_factory
    if factory is not None and info.default_factory_takes_validated_data:
        raise TypeError(f"tool {tool!r}, parameter {param.name!r}: a default_factory taking the validated data")
    return PydanticArgument(param.name, key, strict, default, factory)  # type: ignore[arg-type]


def _key(info: FieldInfo, name: str) -> str:
    alias = info.validation_alias if info.validation_alias is not None else info.alias
    if isinstance(alias, AliasChoices | AliasPath):
        raise TypeError(f"{alias!r}: an argument has one name (give a string alias)")
    if info.serialization_alias not in (None, alias):
        raise TypeError("serialization_alias means nothing for a tool's arguments")
    return alias if isinstance(alias, str) else name


def _for_pydantic(hint: Any, doc: str | None) -> Any:
    """``hint`` with its own ``Annotated`` extras said the pydantic way (a description string,
    ``Doc`` or ``msgspec.Meta`` become ``Field(...)``), the docstring's description first (an
    explicit one wins); ``TypeError`` for metadata pydantic would ignore, at any depth."""
    base, extras = split_annotated(hint)
    converted = [Field(description=doc)] if doc else []
    converted += [_as_field(extra) for extra in extras]
    for extra in annotated_extras(base):
        if not _pydantic_reads(extra):
            raise TypeError(f"{extra!r} inside the type is ignored by pydantic: say it with pydantic.Field(...)")
    return Annotated[(base, *converted)] if converted else base


def _as_field(extra: Any) -> Any:
    if isinstance(extra, str):
        return Field(description=extra)
    documentation = getattr(extra, "documentation", None)
    if type(extra).__name__ in ("Doc", "DocInfo") and isinstance(documentation, str):
        return Field(description=documentation)
    if isinstance(extra, msgspec.Meta):
        if extra.tz is not None:
            raise TypeError(f"{extra!r}: say tz with pydantic's AwareDatetime or NaiveDatetime")
        names = ("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length", "title", "description")
        given = {n: getattr(extra, n) for n in names if getattr(extra, n) is not None}
        if extra.examples is not None:
            given["examples"] = list(extra.examples)
        if extra.extra_json_schema is not None:
            given["json_schema_extra"] = dict(extra.extra_json_schema)
        return Field(**given)
    if _pydantic_reads(extra):
        return extra
    raise TypeError(f"{extra!r} is metadata pydantic does not read")


def _pydantic_reads(extra: Any) -> bool:
    """Whether pydantic honours ``extra`` in ``Annotated``: its own metadata, annotated_types'
    constraints, or an object that says its own schema."""
    return (
        is_pydantic(extra)
        or type(extra).__module__.split(".")[0] == "annotated_types"
        or hasattr(extra, "__get_pydantic_core_schema__")
        or hasattr(extra, "__get_pydantic_json_schema__")
    )


class _refusing:
    """Turns pydantic's refusals (an exception, or a warning that something is ignored) while
    building into ``TypeError`` naming the tool and the parameter; other warnings pass."""

    def __init__(self, tool: str, parameter: str) -> None:
        self.where = f"tool {tool!r}, parameter {parameter!r}"
        self._catcher = warnings.catch_warnings(record=True)
        self._caught: list[warnings.WarningMessage] = []

    def __enter__(self) -> None:
        self._caught = self._catcher.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        self._catcher.__exit__(kind, exc, tb)
        if isinstance(exc, PydanticErrorMixin | TypeError | ValueError | NotImplementedError):
            raise TypeError(f"{self.where}: {exc}") from exc
        for caught in self._caught:
            if issubclass(caught.category, _REFUSED_WARNINGS):
                raise TypeError(f"{self.where}: {caught.message}")
            warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
