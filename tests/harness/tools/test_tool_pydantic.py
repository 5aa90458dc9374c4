"""@tool with pydantic: models (BaseModel, RootModel, nested, optional, recursive) and
``Annotated[T, Field(...)]`` as parameters. Checked against what pydantic itself writes and does:

- pydantic-ai's function schema (``pydantic_ai.Tool(fn).function_schema``, which runs offline):
  the same parameter schema (references resolved: msgwire writes nested types in place) and the
  same verdict, and the same values, on the same argument JSON; the cases are pydantic-ai's own
  (tests/test_tools.py), rewritten here;
- pydantic's ``TypeAdapter(...).json_schema()`` for a parameter's schema;
- the ToolRunner: a model's bad arguments become the error result the model reads, the tool
  receives model instances, an approver sees (and may edit) plain JSON.

Where msgwire differs from pydantic-ai on purpose, the test says so: arguments are read strictly
(pydantic-ai coerces ``"13"`` to 13 where its schema says integer), names a model does not know
are refused at every depth (pydantic-ai drops them silently), and the schema says so
(``additionalProperties: false`` on each model's object; no title on a lone model's);
``test_tool_strict_arguments.py`` has the rule itself.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import jsonschema
import msgspec
import pytest
from typing_extensions import TypedDict

import msgwire
from msgwire.harness import Approve, ToolRegistry, ToolRunner, tool
from msgwire.harness.tools import FunctionTool

pydantic = pytest.importorskip("pydantic")
pydantic_ai = pytest.importorskip("pydantic_ai")

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, RootModel, TypeAdapter, WithJsonSchema  # noqa: E402


class Foo(BaseModel):
    x: int
    y: str


class Node(BaseModel):
    """A tree."""

    name: str
    children: list[Node] = []


class Scores(RootModel[list[int]]):
    pass


class Address(BaseModel):
    street: str = Field(min_length=1, description="The street and number.")
    city: str


class Person(BaseModel):
    name: Annotated[str, Field(max_length=20)]
    age: int = Field(ge=0, le=150)
    home: Address
    previous: list[Address] = []


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    x: int


class Aliased(BaseModel):
    model_config = ConfigDict(validate_by_name=True)
    city: str = Field(validation_alias=AliasChoices("city", "town"))
    zip_code: str = Field(default="", alias="zip")


class Data(TypedDict):
    a: int
    """The first parameter"""
    b: int
    """The second parameter"""


@dataclass
class Box:
    width: int
    height: int = 1


class Point(msgspec.Struct):
    x: int
    y: int


# --- the functions: pydantic-ai's cases, and the types the issue names -------------------------


def takes_model_and_int(model: Foo, z: int) -> str:
    return f"{model.x} {model.y} {z}"


def required_and_default(a: int, b: int = 1) -> int:
    return a + b


def keyword_only(*, a: int = 3, b: int) -> int:
    return a * b


def with_json_schema(x: Annotated[str | None, WithJsonSchema({"type": "string"})] = None) -> str | None:
    return x


def optional_model(model: Optional[Foo] = None, count: int = 1) -> int:  # noqa: UP045 - as users write it
    return count


def recursive(root: Node, depth: int = 3) -> int:
    return depth


def root_model(scores: Scores, label: str) -> int:
    return sum(scores.root)


def nested(person: Person, tags: list[Literal["a", "b"]] = []) -> str:  # noqa: B006 - the schema shows it
    return person.name


def field_metadata(
    count: Annotated[int, Field(ge=0, le=10, description="How many.")],
    name: Annotated[str, Field(max_length=3, pattern="^a")] = "a",
    size: int = Field(3, gt=0, description="The size."),
    from_: Annotated[str, Field(alias="from")] = "here",
) -> str:
    return name


def models_in_containers(by_name: dict[str, Foo], some: list[Foo | None]) -> int:
    return len(by_name) + len(some)


def with_a_struct(point: Point, model: Foo) -> int:  # msgspec and pydantic side by side
    return point.x + model.x


def data(data: Data) -> int:
    return data["a"]


def lone_model(model: Foo) -> str:
    return f"{model.x} {model.y}"


# function -> (good arguments, bad arguments[, arguments pydantic-ai accepts although msgwire's schema
# refuses them: it coerces "13" to 13 where the schema says integer, and drops names a model does
# not know; msgwire follows the schema, whichever library reads the parameter])
CASES: dict[Any, tuple[list[Any], ...]] = {
    takes_model_and_int: (
        [{"model": {"x": 0, "y": "a"}, "z": 1}],
        [{"model": {"x": "no", "y": "a"}, "z": 1}, {"model": {"x": 0}, "z": 1}, {"z": 1}, {"x": 0, "y": "a", "z": 1}],
        [{"model": {"x": 0, "y": "a", "w": 1}, "z": 1}, {"model": {"x": "0", "y": "a"}, "z": 1}],
    ),
    required_and_default: ([{"a": 13}, {"a": 13, "b": 4}], [{}, {"b": 4}, {"a": 1, "c": 2}], [{"a": "13"}]),
    keyword_only: ([{"b": 17}, {"a": 4, "b": 17}], [{"a": 4}]),
    with_json_schema: ([{}, {"x": "s"}], [{"x": 1}, {"y": "s"}]),
    optional_model: ([{}, {"model": None}, {"model": {"x": 1, "y": "b"}}], [{"model": {"x": 1}}, {"count": None}]),
    recursive: (
        [{"root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}}],
        [{"root": {"name": "a", "children": [{"children": []}]}}, {"root": {"name": 1}}],
    ),
    root_model: ([{"scores": [1, 2], "label": "x"}], [{"scores": {"a": 1}, "label": "x"}, {"scores": [1]}]),
    nested: (
        [
            {"person": {"name": "Ann", "age": 40, "home": {"street": "1 Road", "city": "Oslo"}}, "tags": ["a"]},
            {
                "person": {
                    "name": "A",
                    "age": 1,
                    "home": {"street": "1", "city": "O"},
                    "previous": [{"street": "2", "city": "P"}],
                }
            },
        ],
        [
            {"person": {"name": "Ann", "age": -1, "home": {"street": "1", "city": "O"}}},
            {"person": {"name": "Ann", "age": 1, "home": {"street": "", "city": "O"}}},
            {"person": {"name": "A" * 21, "age": 1, "home": {"street": "1", "city": "O"}}},
            {"person": {"name": "Ann", "age": 1, "home": {"street": "1", "city": "O"}}, "tags": ["c"]},
            {"person": {"name": "Ann", "home": {"street": "1", "city": "O"}}},
        ],
        [
            {"person": {"name": "Ann", "age": "40", "home": {"street": "1", "city": "O"}}},
            {"person": {"name": "Ann", "age": 40, "home": {"street": "1", "city": "O", "zip": "0150"}}},
        ],
    ),
    field_metadata: (
        [{"count": 0}, {"count": 10, "name": "abc", "size": 1, "from": "there"}],
        [
            {"count": -1},
            {"count": 11},
            {"count": 1, "name": "abcd"},
            {"count": 1, "name": "b"},
            {"count": 1, "size": 0},
        ],
        [{"count": "1"}, {"count": 1, "size": "2"}],
    ),
    models_in_containers: (
        [{"by_name": {"k": {"x": 1, "y": "a"}}, "some": [None, {"x": 2, "y": "b"}]}],
        [{"by_name": {"k": {"x": 1}}, "some": []}, {"by_name": {}, "some": [1]}],
    ),
    data: ([{"a": 1, "b": 2}], [{"a": 1}], [{"a": "1", "b": 2}]),
}


def _resolved(schema: dict[str, Any], *, title: bool = False) -> dict[str, Any]:
    """The schema with every ``$ref`` written in place (a recursive type one level deep, then
    left as a ref) and ``$defs`` (and the top-level title, unless ``title``) dropped: what it
    says, however it is laid out."""
    defs = schema.get("$defs", {})

    def walk(node: Any, depth: dict[str, int]) -> Any:
        if isinstance(node, list):
            return [walk(n, depth) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and depth.get(ref, 0) < 1:
            target = defs[ref.removeprefix("#/$defs/")]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**target, **rest}, {**depth, ref: depth.get(ref, 0) + 1})
        return {k: walk(v, depth) for k, v in node.items() if k != "$defs"}

    out = walk(schema, {})
    if not title:
        out.pop("title", None)
    return out


def _closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on each object that says nothing of other
    names (a model's: msgwire refuses the names it does not know, and says so)."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) for k, v in schema.items()}
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def _verdict(fn: FunctionTool[Any, Any], arguments: Any) -> tuple[bool, Any]:
    try:
        decoded = fn.decode(json.dumps(arguments))
    except msgspec.ValidationError:
        return False, None
    if fn.model.flatten:
        return True, {fn.model.parameters[0]: decoded}
    return True, {p: getattr(decoded, p) for p in fn.model.parameters}


def _their_verdict(schema: Any, arguments: Any) -> tuple[bool, Any]:
    try:
        return True, schema.validator.validate_json(json.dumps(arguments))
    except pydantic.ValidationError:
        return False, None


@pytest.mark.parametrize("fn", list(CASES), ids=[f.__name__ for f in CASES])
def test_the_same_schema_and_verdicts_as_pydantic_ai(fn: Any) -> None:
    ours = tool(fn)
    theirs = pydantic_ai.Tool(fn).function_schema
    expected = _closed(_resolved(theirs.json_schema))
    assert _resolved(ours.spec.parameters) == expected
    jsonschema.Draft202012Validator.check_schema(ours.spec.parameters)
    validator = jsonschema.Draft202012Validator(ours.spec.parameters)
    good, bad, *lax = CASES[fn]
    for arguments in good + bad:
        verdict = _verdict(ours, arguments)
        assert verdict == _their_verdict(theirs, arguments), arguments
        assert verdict[0] == validator.is_valid(arguments) == (arguments in good), arguments
    for arguments in lax[0] if lax else []:
        assert _their_verdict(theirs, arguments)[0] is True, arguments
        assert _verdict(ours, arguments)[0] is validator.is_valid(arguments) is False, arguments


def test_parameter_schemas_are_pydantics_own() -> None:
    """A parameter's schema is ``TypeAdapter(its annotation).json_schema()`` less the titles
    pydantic makes up for fields (``"title": "Street"`` for ``street``): said once, in place."""

    def made_up_titles_dropped(node: Any) -> Any:
        if isinstance(node, list):
            return [made_up_titles_dropped(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: made_up_titles_dropped(v) for k, v in node.items()}
        for name, prop in out.get("properties", {}).items():
            if prop.get("title") == name.replace("_", " ").title():
                del prop["title"]
        return out

    props = tool(nested).spec.parameters["properties"]
    own = _resolved(made_up_titles_dropped(TypeAdapter(Person).json_schema()), title=True)
    assert props["person"] == _closed(own)  # and unknown names refused, said
    props = tool(field_metadata).spec.parameters["properties"]
    assert props["count"] == TypeAdapter(Annotated[int, Field(ge=0, le=10, description="How many.")]).json_schema()
    assert props["size"] == TypeAdapter(Annotated[int, Field(3, gt=0, description="The size.")]).json_schema()
    assert list(props) == ["count", "name", "size", "from"]  # the alias is the argument's name


def test_a_lone_model_is_the_arguments_and_refuses_names_it_does_not_know() -> None:
    ours = tool(lone_model)
    theirs = pydantic_ai.Tool(lone_model).function_schema
    expected = {**_resolved(theirs.json_schema), "additionalProperties": False}  # said, and kept (below)
    assert ours.spec.parameters == expected
    assert "title" not in ours.spec.parameters  # the tool's name says what it is
    good = {"x": 0, "y": "a"}
    assert _verdict(ours, good) == _their_verdict(theirs, good) == (True, {"model": Foo(x=0, y="a")})
    for bad in ({"x": 0}, {"x": "a", "y": "a"}, {"model": {"x": 0, "y": "a"}}):
        assert _verdict(ours, bad)[0] is False, bad
    unknown = {"x": 0, "y": "a", "zz_unknown": 1}
    assert _their_verdict(theirs, unknown)[0] is True  # pydantic-ai drops the name silently
    with pytest.raises(msgspec.ValidationError, match="unknown field `zz_unknown`"):
        ours.decode(json.dumps(unknown))


def test_a_lone_model_that_says_what_to_do_with_extra_names_is_heard() -> None:
    @tool
    def loose(model: Loose) -> int:
        return model.x

    @tool
    def aliased(place: Aliased) -> str:
        return place.city

    assert loose.spec.parameters["additionalProperties"] is True  # extra="allow": pydantic's schema, kept
    assert loose.decode('{"x": 1, "more": 2}').model_extra == {"more": 2}
    for accepted in (
        '{"city": "Oslo"}',
        '{"town": "Oslo"}',
        '{"city": "Oslo", "zip": "0150"}',
        '{"city": "O", "zip_code": "1"}',
    ):
        assert aliased.decode(accepted).city in ("Oslo", "O")
    with pytest.raises(msgspec.ValidationError, match="unknown field `village`"):
        aliased.decode('{"village": "Oslo"}')


def test_a_lone_root_model_stays_one_argument() -> None:
    @tool
    def total(scores: Scores) -> int:
        return sum(scores.root)

    assert not total.model.flatten
    assert total.spec.parameters["properties"]["scores"] == {
        "items": {"type": "integer"},
        "title": "Scores",
        "type": "array",
    }
    assert total.invoke(total.decode('{"scores": [1, 2]}'), None) == 3


def test_a_recursive_model_stays_under_defs_and_others_are_written_in_place() -> None:
    params = tool(recursive).spec.parameters
    assert params["properties"]["root"] == {"$ref": "#/$defs/Node"}
    assert set(params["$defs"]) == {"Node"}
    assert "$ref" not in json.dumps(tool(nested).spec.parameters)


def test_a_struct_and_a_model_of_the_same_name_keep_their_own_schemas() -> None:
    class Foo(msgspec.Struct):  # the same name as the module's pydantic Foo
        a: int

    def both(struct: Foo, model: Any) -> int:
        return struct.a

    both.__annotations__.update(struct=Foo, model=globals()["Foo"])
    props = tool(both).spec.parameters["properties"]
    assert list(props["struct"]["properties"]) == ["a"]
    assert list(props["model"]["properties"]) == ["x", "y"]


def test_metadata_on_a_model_parameter_said_the_msgspec_way_is_honoured() -> None:
    @tool
    def place(
        where: Annotated[Address, "Where to deliver."],
        count: Annotated[int, msgspec.Meta(ge=1, description="How many.")] = 1,
        model: Foo | None = None,  # pydantic reads this tool: count keeps its metadata all the same
    ) -> None: ...

    props = place.spec.parameters["properties"]
    assert props["where"]["description"] == "Where to deliver."
    assert props["count"] == {"type": "integer", "minimum": 1, "description": "How many.", "default": 1}
    with pytest.raises(msgspec.ValidationError, match=r"- at `\$.count`"):
        place.decode('{"where": {"street": "1", "city": "O"}, "count": 0}')


@pytest.mark.parametrize(
    ("annotation", "said"),
    [
        (Annotated[int, Field(exclude=True)], "exclude"),
        (Annotated[int, Field(frozen=True)], "frozen"),
        (Annotated[str, Field(validation_alias=AliasChoices("a", "b"))], "one name"),
        (Annotated[str, Field(serialization_alias="out")], "serialization_alias"),
        (list[Annotated[Foo, Field(alias="f")]], "alias"),
        (list[Annotated[int, msgspec.Meta(ge=0)]] | Foo, "ignored by pydantic"),
        (Annotated[Foo, object()], "does not read"),
        (Annotated[int, Field(ge=0), msgspec.Meta(tz=True)], "tz"),
    ],
    ids=["exclude", "frozen", "alias-choices", "serialization-alias", "nested-alias", "nested-meta", "unknown", "tz"],
)
def test_what_pydantic_would_ignore_is_refused_with_the_tool_and_parameter_named(annotation: Any, said: str) -> None:
    def deliver(address: str, thing: Any) -> None: ...

    deliver.__annotations__["thing"] = annotation
    with pytest.raises(TypeError, match=rf"tool 'deliver', parameter 'thing': .*{said}"):
        tool(deliver)


def _reply(*arguments: str, name: str = "register") -> msgwire.AssistantMessage:
    return msgwire.assistant(
        [msgwire.ToolCallBlock(id=f"c{i}", name=name, arguments=a) for i, a in enumerate(arguments)],
        stop_reason="tool_use",
    )


def test_through_the_runner_the_tool_gets_models_and_the_model_hears_its_mistakes() -> None:
    registry = ToolRegistry()
    received: list[Any] = []

    @registry.tool
    def register(person: Person, note: str = "") -> str:
        received.append(person)
        return f"{person.name} at {person.home.city}"

    ok = '{"person": {"name": "Ann", "age": 40, "home": {"street": "1 Road", "city": "Oslo"}}}'
    wrong = '{"person": {"name": "Ann", "age": -3, "home": {"street": "", "city": "Oslo"}}, "note": 1}'
    with ToolRunner(registry) as runner:
        results = asyncio.run(runner.run(_reply(ok, wrong)))
    assert [r.status for r in results] == ["success", "error"]
    assert results[0].content[0].text == "Ann at Oslo"
    assert received == [Person(name="Ann", age=40, home=Address(street="1 Road", city="Oslo"))]
    assert results[1].content[0].text == (  # pydantic's and msgspec's, all of them
        "Invalid arguments for tool 'register': Input should be greater than or equal to 0 - at `$.person.age`; "
        "String should have at least 1 character - at `$.person.home.street`; Expected `str`, got `int` - at `$.note`"
    )
    only_pydantic = '{"person": {"name": "Ann", "age": -3, "home": {"street": "", "city": "Oslo"}}}'
    with ToolRunner(registry) as runner:
        (result,) = asyncio.run(runner.run(_reply(only_pydantic)))
    assert result.content[0].text == (
        "Invalid arguments for tool 'register': Input should be greater than or equal to 0 - at `$.person.age`; "
        "String should have at least 1 character - at `$.person.home.street`"
    )


def test_an_approver_sees_plain_json_and_its_edit_is_validated_by_pydantic() -> None:
    registry = ToolRegistry()
    seen: list[Any] = []

    @registry.tool(policy="ask")
    def register(person: Person) -> str:
        return f"{person.name}, {person.age}"

    def approver(requests: list[Any]) -> dict[str, Any]:
        seen.extend(r.arguments for r in requests)
        return {
            requests[0].call.id: Approve(arguments={**requests[0].arguments, "age": 41}),
            requests[1].call.id: Approve(arguments={**requests[1].arguments, "age": -1}),
        }

    ann = '{"name": "Ann", "age": 40, "home": {"street": "1", "city": "O"}}'
    with ToolRunner(registry, approver=approver) as runner:
        results = asyncio.run(runner.run(_reply(ann, ann)))
    assert seen[0] == {"name": "Ann", "age": 40, "home": {"street": "1", "city": "O"}, "previous": []}
    assert [r.status for r in results] == ["success", "denied"]
    assert results[0].content[0].text == "Ann, 41"


def test_tools_without_pydantic_types_never_load_pydantic() -> None:
    code = (
        "import sys\n"
        "from typing import Annotated\n"
        "import msgspec\n"
        "from msgwire.harness import tool\n"
        "@tool\n"
        "def f(a: Annotated[int, msgspec.Meta(ge=0)], b: str = 'x') -> int:\n"
        "    return a\n"
        "f.decode('{\"a\": 1}')\n"
        "print([m for m in ('pydantic', 'msgwire.harness.tools.pydantic_types') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
