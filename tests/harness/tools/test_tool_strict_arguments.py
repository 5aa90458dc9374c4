"""One rule for a tool's arguments, whichever library reads a parameter (msgspec, or pydantic for
models, pydantic types and ``Field(...)``): JSON's own types only (no ``"13"`` or ``13.0`` for an
integer, no ``"yes"`` or ``"true"`` for a boolean: pydantic's strict mode, which is msgspec's
rule; an ISO string is still a datetime, a UUID, a date), names the tool does not know refused at
every depth unless the user's pydantic model says otherwise with its own ``extra=``, every problem
told at once, and a schema that says what is refused (``additionalProperties: false``).

The cases of newcomer-turn4 finding 4: before, a parameter pydantic read was lax (``"13"`` became
13, ``"yes"`` became True) and dropped unknown nested names, and a msgspec-read parameter's error
hid pydantic's.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import jsonschema
import msgspec
import pytest
from typing_extensions import TypedDict

import msgwire
from msgwire.harness import ToolRegistry, ToolRunner, tool
from msgwire.harness.tools import FunctionTool

pytest.importorskip("pydantic")

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass


class P(BaseModel):
    age: int
    ok: bool = False


class Home(BaseModel):
    city: str


class Person(BaseModel):
    name: Annotated[str, Field(pattern="^[A-Za-z ]+$")]
    age: int = Field(0, ge=0)
    home: Home | None = None


class Team(msgspec.Struct):
    name: str
    size: int = 1


@dataclass
class Box:
    width: int


class Tags(TypedDict):
    main: str


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    x: int


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")
    x: int


class Holder(BaseModel):
    open: Open
    lenient: Lenient
    plain: P


class OpenAround(BaseModel):
    model_config = ConfigDict(extra="allow")
    inner: P


class Checked(BaseModel):
    a: int

    @model_validator(mode="before")
    @classmethod
    def as_given(cls, data: Any) -> Any:
        return data


@pydantic_dataclass
class Size:
    width: int


def top(count: Annotated[int, Field(ge=0)], flag: bool = False) -> int:
    return count


def nested(p: P, n: int = 0) -> int:
    return p.age


def lone(p: P) -> int:
    return p.age


def register(person: Person, role: Literal["user", "admin"], team: Team, box: Box, tags: Tags, count: int = 1) -> str:
    return person.name


def holder(h: Holder) -> int:
    return h.open.x


def _problems(fn: FunctionTool[Any, Any], arguments: Any) -> str | None:
    """What ``decode`` says of ``arguments`` (``None``: accepted), after checking that the schema
    the model is sent says the same (but of ``13.0`` for an integer: JSON Schema counts it one)."""
    text = json.dumps(arguments)
    try:
        fn.decode(text)
        said = None
    except msgspec.ValidationError as exc:
        said = str(exc)
    if ".0" not in text:
        assert jsonschema.Draft202012Validator(fn.spec.parameters).is_valid(arguments) is (said is None), (text, said)
    return said


@pytest.mark.parametrize(
    ("fn", "arguments", "said"),
    [
        (top, {"count": "13"}, "Input should be a valid integer - at `$.count`"),
        (top, {"count": 13.0}, "Input should be a valid integer - at `$.count`"),
        (top, {"count": 1, "flag": "yes"}, "Expected `bool`, got `str` - at `$.flag`"),
        (top, {"count": 1, "flag": "true"}, "Expected `bool`, got `str` - at `$.flag`"),
        (nested, {"p": {"age": "13"}}, "Input should be a valid integer - at `$.p.age`"),
        (
            nested,
            {"p": {"age": 13.0, "ok": "yes"}},
            "Input should be a valid integer - at `$.p.age`; Input should be a valid boolean - at `$.p.ok`",
        ),
        (nested, {"p": {"age": 1, "ok": "true"}}, "Input should be a valid boolean - at `$.p.ok`"),
        (nested, {"p": {"age": 1}, "n": "2"}, "Expected `int`, got `str` - at `$.n`"),
        (nested, {"p": {"age": 1, "ssn": "123"}}, "Object contains unknown field `ssn` - at `$.p`"),
        (lone, {"age": "13"}, "Input should be a valid integer - at `$.age`"),
        (lone, {"age": 13.0}, "Input should be a valid integer - at `$.age`"),
        (lone, {"age": 1, "ok": "true"}, "Input should be a valid boolean - at `$.ok`"),
        (lone, {"age": 1, "ok": "yes"}, "Input should be a valid boolean - at `$.ok`"),
        (lone, {"age": 1, "ssn": "123"}, "Object contains unknown field `ssn` - at `$`"),
    ],
)
def test_a_pydantic_parameter_is_as_strict_as_any_other(fn: Any, arguments: Any, said: str) -> None:
    assert _problems(tool(fn), arguments) == said


def test_the_json_types_strict_mode_keeps_are_read_alike_by_both_libraries() -> None:
    """Strict as JSON is: an ISO string is a datetime, a date or a UUID, an integer is a float."""

    @tool
    def when(
        at: Annotated[dt.datetime, Field(description="When.")],
        day: Annotated[dt.date, Field(description="The day.")],
        key: Annotated[uuid.UUID, Field(description="Which.")],
        ratio: Annotated[float, Field(ge=0)],
        at2: dt.datetime,
        ratio2: float,
    ) -> None: ...

    ok = {
        "at": "2024-01-02T03:04:05Z",
        "day": "2024-01-02",
        "key": "12345678-1234-5678-1234-567812345678",
        "ratio": 13,
        "at2": "2024-01-02T03:04:05Z",
        "ratio2": 13,
    }
    assert _problems(when, ok) is None
    arguments = when.decode(json.dumps(ok))
    assert (arguments.at, arguments.ratio) == (arguments.at2, 13.0)
    assert _problems(when, {**ok, "at": 1700000000, "at2": 1700000000}) == (
        "Input should be a valid datetime - at `$.at`; Expected `datetime`, got `int` - at `$.at2`"
    )


def test_unknown_names_are_refused_at_every_depth_and_the_schema_says_so() -> None:
    fn = tool(register)
    ok = {"person": {"name": "Ann"}, "role": "user", "team": {"name": "a"}, "box": {"width": 1}, "tags": {"main": "x"}}
    assert _problems(fn, ok) is None
    for where, inner in [
        ("person", {"name": "Ann", "ssn": "123"}),
        ("person", {"name": "Ann", "home": {"city": "Oslo", "ssn": "123"}}),
        ("team", {"name": "a", "ssn": "123"}),  # a msgspec Struct: msgspec alone drops it
        ("box", {"width": 1, "ssn": "123"}),  # a dataclass
        ("tags", {"main": "x", "ssn": "123"}),  # a TypedDict
    ]:
        path = "$.person.home" if "home" in inner else f"$.{where}"
        assert _problems(fn, {**ok, where: inner}) == f"Object contains unknown field `ssn` - at `{path}`"
    for name in ("person", "team", "box", "tags"):
        assert fn.spec.parameters["properties"][name]["additionalProperties"] is False


def test_every_problem_is_told_at_once() -> None:
    """Six problems, three of them pydantic's (a pattern, a bound, an unknown nested name) and
    three msgspec's (an unknown argument, a literal, a type): all six, in one message."""
    fn = tool(register)
    arguments = {
        "person": {"name": "Ann1", "age": -1, "ssn": "123"},
        "role": "root",
        "team": {"name": "a"},
        "box": {"width": "1"},
        "tags": {"main": "x"},
        "colour": "red",
    }
    assert _problems(fn, arguments) == (
        "Object contains unknown field `colour` - at `$`; "
        "String should match pattern '^[A-Za-z ]+$' - at `$.person.name`; "
        "Input should be greater than or equal to 0 - at `$.person.age`; "
        "Object contains unknown field `ssn` - at `$.person`; "
        "Invalid enum value 'root' - at `$.role`; "
        "Expected `int`, got `str` - at `$.box.width`"
    )
    missing = {"person": {"name": "Ann"}, "role": "user", "box": {"width": 1}, "count": "2"}
    assert _problems(fn, missing) == (
        "Object missing required field `team` - at `$`; Object missing required field `tags` - at `$`; "
        "Expected `int`, got `str` - at `$.count`"
    )


def test_through_the_runner_the_model_hears_every_problem() -> None:
    registry = ToolRegistry()
    registry.add(register)
    call = msgwire.ToolCallBlock(
        id="c",
        name="register",
        arguments='{"person": {"name": "Ann", "age": "3"}, "role": "root", "team": {"name": "a"}, '
        '"box": {"width": 1}, "tags": {"main": "x", "ssn": 1}}',
    )
    with ToolRunner(registry) as runner:
        (result,) = asyncio.run(runner.run(msgwire.assistant([call], stop_reason="tool_use")))
    assert result.status == "error"
    assert result.content[0].text == (
        "Invalid arguments for tool 'register': Input should be a valid integer - at `$.person.age`; "
        "Invalid enum value 'root' - at `$.role`; Object contains unknown field `ssn` - at `$.tags`"
    )


def test_models_with_validators_and_pydantic_dataclasses_follow_the_rule_too() -> None:
    @tool
    def shapes(checked: Checked, size: Size, around: OpenAround) -> None: ...

    ok = {"checked": {"a": 1}, "size": {"width": 1}, "around": {"inner": {"age": 1}, "more": 1}}
    assert _problems(shapes, ok) is None
    assert (
        _problems(shapes, {**ok, "checked": {"a": 1, "b": 2}}) == "Object contains unknown field `b` - at `$.checked`"
    )
    assert _problems(shapes, {**ok, "size": {"width": 1, "b": 2}}) == "Object contains unknown field `b` - at `$.size`"
    # a model that allows extra names does not make the plain one inside it allow them
    inner = {"inner": {"age": 1, "b": 2}, "more": 1}
    assert _problems(shapes, {**ok, "around": inner}) == "Object contains unknown field `b` - at `$.around.inner`"
    assert _problems(shapes, {**ok, "size": {"width": "1"}}) == "Input should be a valid integer - at `$.size.width`"


def test_a_model_that_says_what_to_do_with_extra_names_keeps_its_choice() -> None:
    fn = tool(holder)
    ok = {"open": {"x": 1}, "lenient": {"x": 1}, "plain": {"age": 1}}
    assert _problems(fn, ok) is None
    kept = fn.decode(json.dumps({**ok, "open": {"x": 1, "more": 2}, "lenient": {"x": 1, "more": 2}}))
    assert (kept.open.model_extra, kept.lenient) == ({"more": 2}, Lenient(x=1))
    assert _problems(fn, {**ok, "plain": {"age": 1, "more": 2}}) == (
        "Object contains unknown field `more` - at `$.plain`"
    )
    assert _problems(fn, {**ok, "more": 2}) == "Object contains unknown field `more` - at `$`"
    properties = fn.spec.parameters["properties"]
    assert properties["open"]["additionalProperties"] is True  # extra="allow": pydantic's own word
    assert "additionalProperties" not in properties["lenient"]  # extra="ignore": anything goes, dropped
    assert properties["plain"]["additionalProperties"] is False
    assert fn.spec.parameters["additionalProperties"] is False

    @tool
    def lone_open(o: Open) -> int:
        return o.x

    assert lone_open.decode('{"x": 1, "more": 2}').model_extra == {"more": 2}
    assert lone_open.spec.parameters["additionalProperties"] is True
