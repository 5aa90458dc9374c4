"""@tool: the JSON Schema of a function's arguments, and the msgwire.Tool every dialect writes."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import jsonschema
import msgspec
import pytest

import msgwire
from msgwire import Tool, formats
from msgwire.harness import ToolContext, ToolRegistry, tool
from msgwire.harness.tools import ExecutorTool, FunctionTool
from msgwire.harness.tools.docstrings import parse_docstring


@dataclass(frozen=True)
class Interval:
    """Shaped as ``annotated_types.Interval`` (read by its attributes, so neither msgwire nor
    these tests need that library)."""

    gt: int | None = None
    ge: int | None = None
    lt: int | None = None
    le: int | None = None


class Location(msgspec.Struct, kw_only=True):
    """A point on Earth."""

    lat: Annotated[float, msgspec.Meta(ge=-90, le=90)]
    lon: Annotated[float, msgspec.Meta(ge=-180, le=180)]
    label: str | None = None


class TreeNode(msgspec.Struct):
    name: str
    children: list[TreeNode] = []


@tool
def get_weather(
    city: Annotated[str, msgspec.Meta(min_length=1)],
    unit: Literal["celsius", "fahrenheit"] = "celsius",
    days: Annotated[int, Interval(ge=1, le=14)] = 1,
    ctx: ToolContext | None = None,
) -> str:
    """Current weather and forecast for a city.

    Uses the national weather services where they
    exist.

    Args:
        city: The city name, as people write it.
        unit (str): Temperature unit.
        days: How many days
            of forecast.

    Returns:
        A short report.
    """
    return f"{city}: sunny"


def _check(spec: Tool, good: list[dict[str, Any]], bad: list[dict[str, Any]], fn: FunctionTool) -> None:
    """The schema is valid JSON Schema, and it agrees with the decoder on every sample."""
    jsonschema.Draft202012Validator.check_schema(spec.parameters)
    validator = jsonschema.Draft202012Validator(spec.parameters)
    for sample in good:
        validator.validate(sample)
        fn.decode(json.dumps(sample))
    for sample in bad:
        assert not validator.is_valid(sample), sample
        with pytest.raises(msgspec.ValidationError):
            fn.decode(json.dumps(sample))


def test_types_defaults_docstring_and_annotated_constraints() -> None:
    spec = get_weather.spec
    assert spec.name == "get_weather"
    assert spec.description == (
        "<summary>Current weather and forecast for a city.\n\nUses the national weather services where they exist."
        "</summary>\n<returns>\n<description>A short report.</description>\n</returns>"
    )
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "city": {"description": "The city name, as people write it.", "type": "string", "minLength": 1},
            "unit": {
                "description": "Temperature unit.",
                "enum": ["celsius", "fahrenheit"],
                "type": "string",  # written for the enum's values (Gemini reads string enums only with it)
                "default": "celsius",
            },
            "days": {
                "description": "How many days of forecast.",
                "type": "integer",
                "minimum": 1,
                "maximum": 14,
                "default": 1,
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    _check(
        spec,
        good=[{"city": "Oslo"}, {"city": "Oslo", "unit": "fahrenheit", "days": 14}],
        bad=[{}, {"city": ""}, {"city": "Oslo", "days": 0}, {"city": "Oslo", "unit": "kelvin"}, {"city": "x", "z": 1}],
        fn=get_weather,
    )
    assert get_weather("Oslo") == "Oslo: sunny"  # still the function


def test_a_lone_struct_parameter_is_the_arguments_and_nested_structs_are_written_in_place() -> None:
    @tool
    def near(place: Location) -> list[str]:
        """Points of interest near a place."""
        return [place.label or "?"]

    assert near.spec.parameters == {
        "description": "A point on Earth.",
        "type": "object",
        "properties": {
            "lat": {"type": "number", "minimum": -90, "maximum": 90},
            "lon": {"type": "number", "minimum": -180, "maximum": 180},
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["lat", "lon"],
        "additionalProperties": False,
    }
    assert near.decode('{"lat": 1, "lon": 2, "label": "x"}') == Location(lat=1, lon=2, label="x")
    assert near.invoke(near.decode('{"lat": 1, "lon": 2, "label": "x"}'), None) == ["x"]

    @tool
    def route(start: Location, end: Location, via: list[Location] | None = None) -> None:
        """A route."""

    props = route.spec.parameters["properties"]
    assert props["start"]["properties"]["lat"] == {"type": "number", "minimum": -90, "maximum": 90}
    assert "$defs" not in route.spec.parameters
    assert "$ref" not in json.dumps(route.spec.parameters)
    _check(
        route.spec,
        good=[{"start": {"lat": 0, "lon": 0}, "end": {"lat": 1, "lon": 1}, "via": [{"lat": 2, "lon": 2}]}],
        bad=[{"start": {"lat": 91, "lon": 0}, "end": {"lat": 1, "lon": 1}}, {"start": {"lat": 0, "lon": 0}}],
        fn=route,
    )


def test_a_recursive_type_stays_under_defs() -> None:
    @tool
    def walk(root: TreeNode, depth: int = 3) -> int:
        """Walk a tree."""
        return depth

    params = walk.spec.parameters
    assert params["properties"]["root"] == {"$ref": "#/$defs/TreeNode"}
    assert set(params["$defs"]) == {"TreeNode"}
    _check(
        walk.spec,
        good=[{"root": {"name": "a", "children": [{"name": "b"}]}}],
        bad=[{"root": {"name": "a", "children": [{"nom": "b"}]}}],
        fn=walk,
    )


def test_other_types_no_annotation_and_string_descriptions() -> None:
    @tool(name="log.search", description="Search the logs.", policy="ask", timeout=5, concurrency_safe=False)
    def search(
        query: Annotated[str, "What to look for"],
        since: dt.datetime | None = None,
        tags: list[str] = ["error"],  # noqa: B006 - a default the schema shows; never mutated
        extra=None,  # no annotation: any JSON
    ) -> dict[str, Any]:
        return {}

    spec = search.spec
    assert (spec.name, spec.description) == ("log.search", "Search the logs.")
    assert (search.policy, search.timeout, search.concurrency_safe) == ("ask", 5, False)
    props = spec.parameters["properties"]
    assert props["query"] == {"description": "What to look for", "type": "string"}
    assert props["since"]["default"] is None
    assert {"type": "null"} in props["since"]["anyOf"]
    assert search.decode('{"query": "x", "since": "2026-01-02T03:04:05Z"}').since == dt.datetime(
        2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC
    )
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["extra"] == {"default": None}
    args = search.decode('{"query": "x"}')
    assert args.tags == ["error"]
    assert search.decode('{"query": "x"}').tags is not args.tags


@pytest.mark.parametrize(
    "doc",
    [
        # Google
        """Do it.

        Args:
            path (str): Where.
                Relative to the root.
            mode: How.
        """,
        # NumPy
        """Do it.

        Parameters
        ----------
        path : str
            Where.
            Relative to the root.
        mode : str
            How.

        Returns
        -------
        str
        """,
        # Sphinx
        """Do it.

        :param path: Where.
            Relative to the root.
        :param str mode: How.
        :returns: the thing
        """,
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_docstring_styles(doc: str) -> None:
    import inspect

    parsed = parse_docstring(inspect.cleandoc(doc))
    assert parsed.summary == "Do it."
    assert parsed.params == {"path": "Where. Relative to the root.", "mode": "How."}


def test_context_parameter_and_variadic_arguments() -> None:
    @tool
    async def probe(ctx: ToolContext, n: int) -> int:
        return n

    assert list(probe.spec.parameters["properties"]) == ["n"]
    assert probe.needs_context
    assert probe.is_async

    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):

        @tool
        def bad(*names: str) -> None: ...


def test_a_tool_can_be_a_declaration_plus_an_executor() -> None:
    class Calculator:
        def __init__(self) -> None:
            self.calls: list[tuple[str, Any]] = []

        def execute(self, name: str, arguments: Any) -> Any:
            self.calls.append((name, arguments))
            return arguments["a"] * arguments["b"]

    spec = Tool(
        name="multiply",
        description="a times b",
        parameters={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    )
    registry = ToolRegistry()
    calculator = Calculator()
    made = registry.add(spec, calculator, policy="ask")
    assert isinstance(made, ExecutorTool)
    assert made.spec is spec
    assert made.policy == "ask"
    assert made.invoke(made.decode('{"a": 6, "b": 7}'), None) == 42
    with pytest.raises(msgspec.ValidationError, match="`b`"):
        made.decode('{"a": 6}')
    with pytest.raises(TypeError, match="executor"):
        registry.add(spec)

    typed = ExecutorTool(spec, calculator, arguments_type=Location)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.lat"):
        typed.decode('{"lat": "north", "lon": 0}')


def test_the_registry() -> None:
    registry = ToolRegistry([get_weather])
    with pytest.raises(ValueError, match="already registered"):
        registry.add(get_weather.fn, policy="deny")

    @registry.tool(policy="ask")
    def delete(path: str) -> None:
        """Delete a file."""

    assert registry["delete"].policy == "ask"
    assert registry["delete"] is delete  # the decorated name is the registered tool
    assert "delete" in registry
    assert len(registry) == 2
    assert registry.names == ["get_weather", "delete"]
    assert registry.specs == [get_weather.spec, delete.spec]
    overridden = ToolRegistry().add(get_weather, policy="deny", timeout=2)
    assert (overridden.policy, overridden.timeout, get_weather.policy) == ("deny", 2, "auto")
    with pytest.raises(ValueError, match="approval policy"):
        tool(policy="sometimes")(lambda: None)  # type: ignore[call-overload]


@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_every_dialect_writes_the_tools(dialect: str) -> None:
    @tool
    def route(start: Location, end: Location) -> None:
        """A route between two points."""

    tools = [get_weather.spec, route.spec]
    body = formats.to_request(msgwire.Session(messages=[msgwire.user("hi")]), dialect, tools=tools)
    written = json.dumps(body["tools"])
    for spec in tools:
        assert json.dumps(spec.name) in written
        assert json.dumps(spec.parameters["properties"])[1:-1] in written  # the schema, as it is
