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

A ``Field(...)`` on the parameter itself is the parameter's: its ``default`` /
``default_factory`` are the parameter's default, its ``alias`` (or a string
``validation_alias``) the argument's name; its description and constraints go to the adapter.
Whatever pydantic would ignore is refused with ``TypeError`` naming the tool and the parameter:
``Field`` attributes that only mean something on a model field (``exclude``, ``frozen``,
``repr``...), an ``AliasChoices`` / ``AliasPath``, a ``msgspec.Meta`` or a plain string nested
inside the type, metadata pydantic does not know.

A lone model parameter (a model with named fields, not a ``RootModel``) is the arguments
themselves, as for a Struct: the model's fields are the tool's argument names, and a name the
model does not know is refused unless the model's config says what to do with extra fields
(``extra="allow"`` / ``"ignore"`` / ``"forbid"``).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from msgwire.errors import MissingExtraError

from .hints import NO_DEFAULT, Param, annotated_extras, is_pydantic, split_annotated

try:
    from pydantic import AliasChoices, AliasPath, Field, RootModel, TypeAdapter, ValidationError
    from pydantic.errors import PydanticErrorMixin
    from pydantic.fields import FieldInfo
    from pydantic.json_schema import GenerateJsonSchema, PydanticJsonSchemaWarning
    from pydantic.warnings import UnsupportedFieldAttributeWarning
    from pydantic_core import CoreSchema, PydanticUndefined, to_jsonable_python
except ImportError as exc:
    raise MissingExtraError("msgwire's tools with pydantic parameters", "pydantic", exc) from None

__all__ = ["PydanticArgument", "PydanticLone", "arguments", "lone", "to_jsonable"]

REF = "#/$defs/{model}"
_REFUSED_WARNINGS = (UnsupportedFieldAttributeWarning, PydanticJsonSchemaWarning)


class _ToolJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it makes up for fields (``"title": "X"`` for
    ``x``); a title given with ``Field(title=...)`` stays."""

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:
        return False


@dataclass(frozen=True)
class PydanticArgument:
    """One parameter pydantic validates: ``name`` in the function, ``key`` in the arguments'
    JSON, its ``default`` (``NO_DEFAULT`` when required) or ``factory``."""

    name: str
    key: str
    adapter: TypeAdapter[Any]
    default: Any
    factory: Callable[[], Any] | None

    def missing(self) -> Any:
        """The value of an argument the model left out (one it may leave out)."""
        return self.factory() if self.factory is not None else copy.deepcopy(self.default)

    def validate(self, raw: msgspec.Raw) -> Any:
        """The argument's JSON text validated (``msgspec.ValidationError`` when it does not fit)."""
        try:
            return self.adapter.validate_json(bytes(raw))
        except ValidationError as exc:
            raise _invalid(exc, f"$.{self.key}") from None


@dataclass(frozen=True)
class PydanticLone:
    """A lone model parameter that is the arguments: ``schema`` (an object schema, refs under
    ``$defs``), ``validate(text)``, ``to_builtins(value)``."""

    adapter: TypeAdapter[Any]
    schema: dict[str, Any]
    known: frozenset[str] | None
    """The argument names accepted, when the others are refused (``None``: the model decides)."""

    def validate(self, text: str) -> Any:
        problems: list[str] = []
        if self.known is not None:
            names = _object_keys.decode(text)  # also a clear error for malformed JSON or a non-object
            problems = [f"Object contains unknown field `{k}`" for k in names if k not in self.known]
        try:
            value = self.adapter.validate_json(text)
        except ValidationError as exc:
            problems.append(str(_invalid(exc, "$")))
        if problems:
            raise msgspec.ValidationError("; ".join(problems))
        return value

    def to_builtins(self, value: Any) -> Any:
        return self.adapter.dump_python(value, mode="json", by_alias=True)


_object_keys = msgspec.json.Decoder(dict[str, msgspec.Raw])


def to_jsonable(value: Any) -> Any:
    """A value pydantic made (a model, a URL...) as JSON builtins, aliases as the keys (an
    ``enc_hook`` for ``msgspec.to_builtins``)."""
    return to_jsonable_python(value, by_alias=True)


def arguments(tool: str, params: list[Param]) -> tuple[list[PydanticArgument], dict[str, Any], dict[str, Any]]:
    """The parameters' arguments, their JSON Schemas by argument name, and the schemas they
    refer to (``$defs``, refs written ``#/$defs/<name>``)."""
    made = [_argument(tool, p) for p in params]
    with _refusing(tool, ", ".join(p.name for p in params)):
        schemas, defs = TypeAdapter.json_schemas(
            [(a.key, "validation", a.adapter) for a in made], ref_template=REF, schema_generator=_ToolJsonSchema
        )
    properties = {a.key: schemas[(a.key, "validation")] for a in made}
    return made, properties, dict(defs.get("$defs", {}))


def lone(tool: str, param: Param) -> PydanticLone | None:
    """``param`` as the arguments themselves when its type is a pydantic model (or pydantic
    dataclass, or a dataclass / TypedDict holding pydantic types) whose schema is an object
    with properties; ``None`` otherwise."""
    base, _ = split_annotated(param.hint)
    if not isinstance(base, type) or issubclass(base, RootModel):
        return None
    config: dict[str, Any] = dict(getattr(base, "model_config", None) or getattr(base, "__pydantic_config__", {}))
    with _refusing(tool, param.name):
        adapter: TypeAdapter[Any] = TypeAdapter(_for_pydantic(param.hint, param.doc))
        schema = adapter.json_schema(ref_template=REF, schema_generator=_ToolJsonSchema)
    defs = schema.pop("$defs", {})
    top = _resolved(schema, defs)
    if top.get("type") != "object" or "properties" not in top:
        return None
    known: frozenset[str] | None = None
    if config.get("extra") is None:
        known = _accepted_names(base, config) or frozenset(top["properties"])
        top["additionalProperties"] = False
    if defs:
        top["$defs"] = defs
    return PydanticLone(adapter, top, known)


def _accepted_names(cls: type, config: dict[str, Any]) -> frozenset[str]:
    """The top-level names a model's validation accepts: each field's aliases (every choice of an
    ``AliasChoices``) and, when the config allows it, its name (empty for a class pydantic has no
    fields of, such as a TypedDict)."""
    fields: dict[str, FieldInfo] = getattr(cls, "__pydantic_fields__", None) or {}
    by_alias = config.get("validate_by_alias", True)
    by_name = config.get("validate_by_name") or config.get("populate_by_name") or not by_alias
    names: set[str] = set()
    for name, info in fields.items():
        alias = info.validation_alias if info.validation_alias is not None else info.alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        firsts = [c if isinstance(c, str) else c.path[0] for c in choices if c is not None]  # AliasPath: its key
        aliases = {a for a in firsts if isinstance(a, str)}
        if by_alias:
            names |= aliases
        if by_name or not aliases:
            names.add(name)
    return frozenset(names)


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
        adapter: TypeAdapter[Any] = TypeAdapter(annotated)
    default = NO_DEFAULT if info.default is PydanticUndefined else info.default
    factory = info.default_factory
    if factory is not None and info.default_factory_takes_validated_data:
        raise TypeError(f"tool {tool!r}, parameter {param.name!r}: a default_factory taking the validated data")
    return PydanticArgument(param.name, key, adapter, default, factory)  # type: ignore[arg-type]


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


def _invalid(error: ValidationError, prefix: str) -> msgspec.ValidationError:
    parts = []
    for item in error.errors(include_url=False):
        path = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in item["loc"])
        parts.append(f"{item['msg']} - at `{path}`")
    return msgspec.ValidationError("; ".join(parts))
