"""dumps / loads of a ~1 MB, 900-message session: msgwire beside pydantic-ai and plain msgspec.

Three forms of the same conversation (``workload.py``): a ``msgwire.Session``, a pydantic-ai
message list for ``ModelMessagesTypeAdapter``, and hand-written msgspec tagged Structs (the
baseline, the floor). Groups ``dumps`` and ``loads`` put the three side by side; ``conftest.py``
prints the ratios to msgwire. Every benchmark checks its result after timing (untimed), so a
broken codec cannot post a figure. Speed itself is never asserted here.

The floor's schema (``msgwire.bench.forms``): schema v1 by hand, every message and block kind
msgwire's decoder knows, each with msgwire's fields in msgwire's order, the same types
(``Literal`` enums, ``datetime``, ``msgspec.Raw``, the integer bounds) and the same defaults;
``frozen=True, kw_only=True, omit_defaults=True, gc=False``, tagged on ``"type"``; the envelope a
plain mutable Struct. Left out: msgwire's ``ToolCallBlock`` decode hook, its properties and
methods. ``test_the_floor_has_msgwire_fields_types_and_defaults`` keeps it that way.
"""

from __future__ import annotations

import msgspec
import msgspec.inspect as mi
import pytest
from pydantic_ai import messages as pa

import msgwire
from benches.workload import PYDANTIC_AI_ADAPTER, Workload, build
from msgwire.bench import forms
from msgwire.bench.forms import BASELINE_DECODER, BASELINE_ENCODER, BaselineSession


@pytest.fixture(scope="module")
def w() -> Workload:
    return build()


def test_workload_is_one_conversation_in_three_forms(w: Workload) -> None:
    """Not a benchmark: the workload has the promised size and mix, and the forms agree."""
    info = w.describe()
    assert info["messages"] == 900
    assert set(info["by_type"]) == {"user", "assistant", "tool_result", "system_control"}
    assert 900_000 <= info["msgwire_bytes"] <= 1_300_000
    assert info["tool_errors"] > 0
    msgwire.validate(w.session)  # a well-formed conversation: every tool result answers a call
    assert build() is w  # built once per process

    # The baseline writes msgwire's document byte for byte: both parse and write the same JSON.
    assert w.baseline_json == w.msgwire_json

    # pydantic-ai: the same model-visible content, message for message (system_control left out).
    model_visible = w.session.messages_for_model()
    responses = [m for m in w.pydantic_ai if isinstance(m, pa.ModelResponse)]
    assistants = [m for m in model_visible if type(m) is msgwire.AssistantMessage]
    assert len(responses) == len(assistants)
    for r, a in zip(responses, assistants, strict=True):
        assert [p.content for p in r.parts if isinstance(p, pa.TextPart)] == [
            b.text for b in a.content if type(b) is msgwire.TextBlock
        ]
        assert [p.signature for p in r.parts if isinstance(p, pa.ThinkingPart)] == [
            b.signature for b in a.content if type(b) is msgwire.ThinkingBlock
        ]
        assert [(p.tool_call_id, p.args) for p in r.parts if isinstance(p, pa.ToolCallPart)] == [
            (b.id, b.arguments) for b in a.tool_calls
        ]
        assert (r.provider_response_id, r.usage.input_tokens) == (a.response_id, a.usage and a.usage.input_tokens)
    request_parts = [p for m in w.pydantic_ai if isinstance(m, pa.ModelRequest) for p in m.parts]
    results = [m for m in model_visible if type(m) is msgwire.ToolResultMessage]
    assert [(p.tool_call_id, p.content) for p in request_parts if isinstance(p, pa.ToolReturnPart)] == [
        (m.tool_call_id, m.content[0].text)
        for m in results  # type: ignore[union-attr]
    ]
    users = [p for p in request_parts if isinstance(p, pa.UserPromptPart)]
    assert len(users) == sum(1 for m in model_visible if type(m) is msgwire.UserMessage)


def _shape(t: mi.Type) -> str:
    """A decoded type as the decoder checks it, as text: struct types by their tag (named
    elsewhere), schema-only metadata dropped (``extra_json_schema``), bounds and literals kept."""
    if isinstance(t, mi.Metadata):
        return _shape(t.type)
    if isinstance(t, mi.StructType):
        return f"struct {t.tag or t.cls.__name__.removeprefix('Baseline')}"
    if isinstance(t, mi.UnionType):
        return "union of " + ", ".join(sorted(_shape(x) for x in t.types))
    if isinstance(t, mi.ListType):
        return f"list of {_shape(t.item_type)}"
    if isinstance(t, mi.DictType):
        return f"dict of {_shape(t.key_type)}: {_shape(t.value_type)}"
    return repr(t)


def _pairs() -> dict[str, tuple[type[msgspec.Struct], type[msgspec.Struct]]]:
    """msgwire's struct types and the floor's, by tag (the session, usage and the rest by name)."""
    ours: dict[str, type[msgspec.Struct]] = {}
    floor: dict[str, type[msgspec.Struct]] = {}
    for top, found in ((msgwire.Session, ours), (forms.BaselineSession, floor)):
        todo = [mi.type_info(top)]
        while todo:
            t = todo.pop()
            if isinstance(t, mi.Metadata):
                todo.append(t.type)
            elif isinstance(t, mi.StructType):
                name = t.tag or t.cls.__name__.removeprefix("Baseline")
                if name not in found:
                    found[name] = t.cls
                    todo.extend(f.type for f in t.fields)
            elif isinstance(t, mi.UnionType):
                todo.extend(t.types)
            elif isinstance(t, mi.ListType):
                todo.append(t.item_type)
            elif isinstance(t, mi.DictType):
                todo.append(t.value_type)
    assert ours.keys() == floor.keys()
    return {name: (ours[name], floor[name]) for name in ours}


def test_the_floor_has_msgwire_fields_types_and_defaults() -> None:
    """Not a benchmark: the floor decodes what msgwire's types decode, field for field (a field
    added to msgwire must be added to the floor, or the ratio measures fewer fields)."""
    pairs = _pairs()
    assert {"user", "assistant", "tool_result", "system_control", "text", "tool_call", "Usage"} <= pairs.keys()
    assert len(pairs) == 20
    for name, (ours, floor) in pairs.items():
        a, b = mi.type_info(ours), mi.type_info(floor)
        assert isinstance(a, mi.StructType)
        assert isinstance(b, mi.StructType)
        assert (a.tag_field, a.tag, a.array_like, a.forbid_unknown_fields) == (
            b.tag_field,
            b.tag,
            b.array_like,
            b.forbid_unknown_fields,
        ), name
        for option in ("frozen", "omit_defaults", "gc"):
            assert getattr(ours.__struct_config__, option) == getattr(floor.__struct_config__, option), (name, option)
        assert [f.encode_name for f in a.fields] == [f.encode_name for f in b.fields], name
        for x, y in zip(a.fields, b.fields, strict=True):
            where = f"{name}.{x.name}"
            assert _shape(x.type) == _shape(y.type), where
            assert (x.required, x.default, x.default_factory) == (y.required, y.default, y.default_factory), where


# --- dumps ------------------------------------------------------------------------------------


@pytest.mark.benchmark(group="dumps")
def test_dumps_msgwire(benchmark, w: Workload) -> None:
    out = benchmark(msgwire.dumps, w.session)
    assert msgwire.loads(out) == w.session


@pytest.mark.benchmark(group="dumps")
def test_dumps_msgspec_baseline(benchmark, w: Workload) -> None:
    out = benchmark(BASELINE_ENCODER.encode, w.baseline)
    assert BASELINE_DECODER.decode(out) == w.baseline
    assert out == w.msgwire_json


@pytest.mark.benchmark(group="dumps")
def test_dumps_pydantic_ai(benchmark, w: Workload) -> None:
    out = benchmark(PYDANTIC_AI_ADAPTER.dump_json, w.pydantic_ai)
    assert PYDANTIC_AI_ADAPTER.validate_json(out) == w.pydantic_ai


# --- loads ------------------------------------------------------------------------------------


@pytest.mark.benchmark(group="loads")
def test_loads_msgwire(benchmark, w: Workload) -> None:
    session = benchmark(msgwire.loads, w.msgwire_json, type=msgwire.Session)
    assert type(session) is msgwire.Session
    assert session == w.session


@pytest.mark.benchmark(group="loads")
def test_loads_msgspec_baseline(benchmark, w: Workload) -> None:
    session = benchmark(BASELINE_DECODER.decode, w.baseline_json)
    assert type(session) is BaselineSession
    assert session == w.baseline
    assert msgspec.json.encode(session) == w.msgwire_json


@pytest.mark.benchmark(group="loads")
def test_loads_pydantic_ai(benchmark, w: Workload) -> None:
    messages = benchmark(PYDANTIC_AI_ADAPTER.validate_json, w.pydantic_ai_json)
    assert messages == w.pydantic_ai
