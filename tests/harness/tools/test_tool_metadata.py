"""@tool without pydantic: a lone Struct, dataclass or TypedDict parameter is the arguments and
refuses names it does not know; ``Annotated`` metadata is honoured (msgspec's, annotated_types',
PEP 727's ``Doc``) or refused with the tool and the parameter named; a type msgwire cannot
describe is refused the same way. The schemas are checked as JSON Schema (jsonschema) against the
decoder on every sample."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import pathlib
from dataclasses import dataclass
from typing import Annotated, Any

import annotated_types as at
import jsonschema
import msgspec
import pytest
from typing_extensions import Doc, TypedDict

import msgwire
from msgwire.harness import ToolRegistry, ToolRunner, tool
from msgwire.harness.tools import FunctionTool


class Point(msgspec.Struct):
    x: int
    y: str


class Tagged(msgspec.Struct, tag="point", tag_field="kind"):
    x: int


class Strict(msgspec.Struct, forbid_unknown_fields=True):
    x: int


class Grid(msgspec.Struct, array_like=True):
    width: int
    height: int


@dataclass
class Box:
    """A box."""

    width: int
    """How wide, in cm."""
    height: int = 1


class Score(TypedDict):
    a: int
    """The first parameter"""
    b: int
    """The second
    parameter"""


class Described(msgspec.Struct):
    a: Annotated[int, msgspec.Meta(description="said by Meta")]
    """said by the docstring"""
    b: int
    """B, from its docstring."""


def _annotated(fn: Any, **annotations: Any) -> Any:
    """``fn`` with these annotations (a test's types, which a string annotation cannot name)."""
    fn.__annotations__.update(annotations)
    return fn


def _verdicts(fn: FunctionTool[Any, Any], good: list[str], bad: list[str]) -> None:
    """Every sample: the schema (as JSON Schema) and the decoder agree."""
    jsonschema.Draft202012Validator.check_schema(fn.spec.parameters)
    validator = jsonschema.Draft202012Validator(fn.spec.parameters)
    for text in good:
        assert validator.is_valid(json.loads(text)), text
        fn.decode(text)
    for text in bad:
        assert not validator.is_valid(json.loads(text)), text
        with pytest.raises(msgspec.ValidationError):
            fn.decode(text)


@pytest.mark.parametrize("kind", [Point, Box, Score])
def test_a_lone_struct_dataclass_or_typeddict_refuses_unknown_argument_names(kind: type) -> None:
    def put(p):  # type: ignore[no-untyped-def]
        return p

    place = tool(_annotated(put, p=kind))

    assert place.spec.parameters["additionalProperties"] is False
    assert place.model.flatten
    first = next(iter(place.spec.parameters["properties"]))
    good = json.dumps({first: 0, **({"y": "a"} if kind is Point else {"b": 1} if kind is Score else {})})
    _verdicts(place, good=[good], bad=[good[:-1] + ', "zz_unknown": 1}'])
    value = place.decode(good)
    assert isinstance(value, dict if kind is Score else kind)
    assert place.invoke(value, None) == value  # called with the value itself


def test_the_readme_promise_on_the_issue_example() -> None:
    @tool
    def takes_point(point: Point) -> str:
        return f"{point.x} {point.y}"

    assert takes_point.invoke(takes_point.decode('{"x": 0, "y": "a"}'), None) == "0 a"
    with pytest.raises(msgspec.ValidationError, match="unknown field `zz_unknown`"):
        takes_point.decode('{"x": 0, "y": "a", "zz_unknown": 1}')


def test_a_lone_struct_keeps_its_own_rules() -> None:
    @tool
    def tagged(p: Tagged) -> int:
        return p.x

    @tool
    def strict(p: Strict) -> int:
        return p.x

    @tool
    def grid(g: Grid) -> int:
        return g.width

    assert tagged.decode('{"kind": "point", "x": 1}') == Tagged(x=1)  # the tag is a known name
    with pytest.raises(msgspec.ValidationError, match="unknown field `y`"):
        strict.decode('{"x": 1, "y": 2}')
    assert not grid.model.flatten  # an array is not an object of arguments: it stays one argument
    assert grid.decode('{"g": [1, 2]}').g == Grid(1, 2)


class TreeNode(msgspec.Struct):
    name: str
    children: list[TreeNode] = []


def test_a_lone_recursive_struct_keeps_itself_under_defs() -> None:
    @tool
    def walk(root: TreeNode) -> int:
        return len(root.children)

    params = walk.spec.parameters
    assert params["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    assert set(params["$defs"]) == {"TreeNode"}
    jsonschema.Draft202012Validator.check_schema(params)
    assert walk.invoke(walk.decode('{"name": "a", "children": [{"name": "b"}]}'), None) == 1


def test_attribute_docstrings_describe_fields() -> None:
    @tool
    def score(data: Score) -> int:
        return data["a"]

    @tool
    def measure(box: Box, described: Described) -> int:
        return box.width

    assert score.spec.parameters == {
        "type": "object",
        "properties": {
            "a": {"description": "The first parameter", "type": "integer"},
            "b": {"description": "The second parameter", "type": "integer"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    props = measure.spec.parameters["properties"]
    assert props["box"]["description"] == "A box."
    assert props["box"]["properties"]["width"]["description"] == "How wide, in cm."
    assert "description" not in props["box"]["properties"]["height"]
    assert props["described"]["properties"]["a"]["description"] == "said by Meta"  # the annotation wins
    assert props["described"]["properties"]["b"]["description"] == "B, from its docstring."


def test_annotated_types_constraints_and_doc_are_honoured() -> None:
    @tool
    def book(
        name: Annotated[str, at.Len(1, 20), Doc("Who books.")],
        seats: Annotated[int, at.Interval(ge=1, lt=10)],
        price: Annotated[float, at.MultipleOf(0.5), at.Gt(0)] = 1.0,
        tags: list[Annotated[str, at.MinLen(2)]] = [],  # noqa: B006 - a default the schema shows
        at_: Annotated[dt.datetime, at.Timezone(...)] | None = None,
    ) -> str:
        return name

    props = book.spec.parameters["properties"]
    assert props["name"] == {"description": "Who books.", "type": "string", "minLength": 1, "maxLength": 20}
    assert props["seats"] == {"type": "integer", "minimum": 1, "exclusiveMaximum": 10}
    assert props["price"] == {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0, "default": 1.0}
    assert props["tags"]["items"] == {"type": "string", "minLength": 2}  # nested metadata too
    _verdicts(
        book,
        good=['{"name": "a", "seats": 1}', '{"name": "a", "seats": 9, "price": 2.5, "tags": ["ab"]}'],
        bad=[
            '{"name": "", "seats": 1}',
            '{"name": "a", "seats": 10}',
            '{"name": "a", "seats": 1, "price": 0.3}',
            '{"name": "a", "seats": 1, "tags": ["a"]}',
        ],
    )
    with pytest.raises(msgspec.ValidationError, match="timezone"):
        book.decode('{"name": "a", "seats": 1, "at_": "2026-01-02T03:04:05"}')  # Timezone(...): aware only


@pytest.mark.parametrize(
    ("annotation", "named"),
    [
        (Annotated[int, at.Predicate(lambda n: n % 2 == 0)], "Predicate"),
        (Annotated[str, at.LowerCase], "Predicate"),
        (Annotated[dt.datetime, at.Timezone("Europe/Oslo")], "Timezone"),
        (Annotated[int, object()], "object"),
        (list[Annotated[int, at.Predicate(bool)]], "Predicate"),
        (Annotated[int, msgspec.Meta(max_length=3)], "max_length"),
    ],
    ids=["predicate", "lowercase", "a-named-timezone", "unknown-object", "nested", "meta-on-the-wrong-type"],
)
def test_metadata_msgwire_cannot_honour_is_refused_with_the_tool_and_parameter_named(
    annotation: Any, named: str
) -> None:
    def search(query: str, limit=10) -> None: ...  # type: ignore[no-untyped-def]

    with pytest.raises(TypeError, match=rf"tool 'search', parameter 'limit': .*{named}"):
        tool(_annotated(search, limit=annotation))


class Window(msgspec.Struct):
    width: Annotated[int, at.Gt(0)]


def test_metadata_inside_a_class_that_msgspec_would_ignore_is_refused() -> None:
    with pytest.raises(TypeError, match=r"tool 'resize', parameter 'window': field Window.width .*Gt\(gt=0\)"):

        @tool
        def resize(window: Window) -> None: ...


@pytest.mark.parametrize("annotation", [pathlib.Path, list[complex], dict[str, type]])
def test_a_type_msgwire_cannot_describe_is_refused_with_the_tool_and_parameter_named(annotation: Any) -> None:
    def save(name: str, where) -> None: ...  # type: ignore[no-untyped-def]

    with pytest.raises(TypeError, match=r"tool 'save', parameter 'where': msgwire cannot describe"):
        tool(_annotated(save, where=annotation))


def test_an_unannotated_object_parameter_takes_any_json() -> None:
    @tool
    def echo(value: object) -> object:
        return value

    assert echo.spec.parameters["properties"]["value"] == {}
    assert echo.decode('{"value": [1, {"a": null}]}').value == [1, {"a": None}]


def test_a_lone_dataclass_through_the_runner() -> None:
    """An unknown name is an error result the model reads; the right arguments run the tool with
    the dataclass itself."""
    registry = ToolRegistry()

    @registry.tool
    def pack(box: Box) -> int:
        return box.width * box.height

    reply = msgwire.assistant(
        [
            msgwire.ToolCallBlock(id="a", name="pack", arguments='{"width": 3, "height": 2}'),
            msgwire.ToolCallBlock(id="b", name="pack", arguments='{"width": 3, "heigth": 2}'),
        ]
    )
    with ToolRunner(registry) as runner:
        results = asyncio.run(runner.run(reply))
    assert [r.status for r in results] == ["success", "error"]
    assert results[0].content[0].text == "6"
    assert (
        results[1].content[0].text
        == "Invalid arguments for tool 'pack': Object contains unknown field `heigth` - at `$`"
    )
