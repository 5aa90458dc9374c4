"""The delta events of a stream (a piece of text, of arguments, of reasoning), made without
pydantic's validation: ``MsgwireModel`` makes one per chunk of a reply, from values it made
itself (strings and ints of the right type), so validating them only costs (5-7 us each, the
largest cost of a delta in ``MsgwireModel``; this costs 1-2 us).

An event is made as pydantic makes a model it validated: its fields in the model's order in the
instance ``__dict__``, the fields set, no extra fields, no private ones. ``maker(cls)`` checks
this against pydantic's own construction of the same values, once; where it differs (another
pydantic), the maker validates, as the constructor does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

try:
    from pydantic import BaseModel
except ImportError as exc:  # pragma: no cover - openai-agents brings pydantic
    from ..errors import MissingExtraError

    raise MissingExtraError("msgwire.interop.openai_agents (MsgwireModel)", "openai-agents", exc) from None

__all__ = ["maker"]

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__


def maker(cls: type[M], sample: dict[str, Any]) -> Callable[..., M]:
    """A constructor of ``cls`` for values of the types ``sample`` has (every field given, as
    keywords), checked against ``cls(**sample)``."""
    order = tuple(cls.model_fields)

    def make(**values: Any) -> M:
        obj = _new(cls)
        _set(obj, "__dict__", {name: values[name] for name in order})
        _set(obj, "__pydantic_fields_set__", set(values))
        _set(obj, "__pydantic_extra__", {} if cls.model_config.get("extra") == "allow" else None)
        _set(obj, "__pydantic_private__", None)
        return obj

    try:
        made, validated = make(**sample), cls(**sample)
        same = made == validated and made.model_dump_json() == validated.model_dump_json()
        same = same and repr(made) == repr(validated) and made.model_fields_set == validated.model_fields_set
    except Exception:
        same = False
    return make if same else cls
