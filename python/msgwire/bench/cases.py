"""What ``msgwire bench`` times: each group gives msgwire and its peers the same bytes (or the
same conversation) and checks, after timing, that each one produced what msgwire did, so a
broken peer (or a broken msgwire) cannot post a figure.

A case's ``prepare`` returns the timed call (every setup done outside it) and the check of its
result. Peers are imported with importlib only when the case runs: one that is not installed
is reported as skipped, never hidden.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..codec import dumps, loads
from ..stream import assemble
from ..types import AssistantMessage, Session
from . import forms, peers, workloads

_session = functools.cache(workloads.session)  # built once per size: every group reads the same one
Timed = Callable[[], Any]
Check = Callable[[Any], bool]


@dataclass
class Result:
    group: str
    entry: str
    note: str
    status: str  # "ok", "skipped (not installed: ...)" or "error: ..."
    median_s: float | None = None
    rounds: int = 0
    ratio: float | None = None  # median / msgwire's median in the same group


@dataclass(frozen=True)
class Sizes:
    """The workload sizes of a mode."""

    text_deltas: int
    thinking_deltas: int
    messages: int

    def openai(self) -> bytes:
        return workloads.openai_stream(self.text_deltas)

    def anthropic(self) -> bytes:
        return workloads.anthropic_stream(self.text_deltas, self.thinking_deltas)

    def session(self) -> Session:
        return _session(self.messages)


@dataclass(frozen=True)
class Case:
    group: str
    entry: str
    needs: tuple[str, ...]  # the modules of the peer
    prepare: Callable[[Sizes], tuple[Timed, Check]]
    note: str = ""

    def missing(self) -> list[str]:
        return [name for name in self.needs if importlib.util.find_spec(name) is None]


@dataclass(frozen=True)
class Group:
    name: str
    workload: Callable[[Sizes], str]  # what the bytes are, for the table
    size: Callable[[Sizes], int]


def _calls(message: AssistantMessage) -> list[tuple[str, str, str]]:
    return [(c.id, c.name, c.arguments) for c in message.tool_calls]


def _mock_client(data: bytes, http: ModuleType) -> Any:
    """An HTTP client (httpx or httpx2) whose every response streams ``data`` in network-sized
    chunks: the SDKs parse the same bytes as msgwire, with no network."""
    return http.Client(transport=peers.mock_transport(data, http))


def _sdk(sdk: str, data: bytes, **options: Any) -> Any:
    """The SDK's client (``openai.OpenAI`` / ``anthropic.Anthropic``) over a mock transport, of
    whichever HTTP library it accepts (recent SDKs take httpx2, older ones httpx)."""
    module = importlib.import_module(sdk)
    factory = module.OpenAI if sdk == "openai" else module.Anthropic
    refused: Exception | None = None
    for http_name in ("httpx2", "httpx"):
        if importlib.util.find_spec(http_name) is None:
            continue
        try:
            return factory(**options, http_client=_mock_client(data, importlib.import_module(http_name)))
        except TypeError as exc:  # an SDK that takes the other library
            refused = exc
    raise RuntimeError(f"no HTTP client that {sdk} accepts: {refused}")


# --- OpenAI stream -------------------------------------------------------------------------------


def openai_msgwire(sizes: Sizes) -> tuple[Timed, Check]:
    chunks = peers.pieces(sizes.openai())
    reference = assemble(sizes.openai(), "openai")
    return (lambda: assemble(chunks, "openai")), (lambda m: (m.text, _calls(m)) == (reference.text, _calls(reference)))


def openai_msgwire_httpx(sizes: Sizes) -> tuple[Timed, Check]:
    """msgwire reading the same mock HTTP response the SDK and httpx-sse read: the transport's
    share of their time, on msgwire's side too."""
    client = _mock_client(sizes.openai(), importlib.import_module("httpx"))

    def run() -> AssistantMessage:
        with client.stream("POST", "http://bench/v1/chat/completions") as response:
            return assemble(response, "openai")

    same = _openai_check(sizes)
    return run, lambda m: same(m.text, _calls(m))


def _openai_check(sizes: Sizes) -> Callable[[str, list[tuple[str, str, str]]], bool]:
    reference = assemble(sizes.openai(), "openai")
    return lambda text, calls: (text, calls) == (reference.text, _calls(reference))


def openai_sdk(sizes: Sizes) -> tuple[Timed, Check]:
    """``client.chat.completions.stream``: the SDK's SSE parsing, pydantic models per chunk and
    its ``ChatCompletionStreamState`` accumulator."""
    client = _sdk("openai", sizes.openai(), api_key="x", base_url="http://bench/v1")

    def run() -> Any:
        with client.chat.completions.stream(model="gpt-4o", messages=[{"role": "user", "content": "hi"}]) as stream:
            return stream.get_final_completion().choices[0].message

    same = _openai_check(sizes)
    return run, lambda m: same(
        m.content or "", [(c.id, c.function.name, c.function.arguments) for c in m.tool_calls or ()]
    )


def openai_httpx_sse(sizes: Sizes) -> tuple[Timed, Check]:
    """What people write by hand: httpx-sse, json.loads per event, an accumulator keyed on index."""
    client = _mock_client(sizes.openai(), importlib.import_module("httpx"))
    same = _openai_check(sizes)
    return (lambda: peers.httpx_sse_loop(client)), (lambda result: same(*result))


def orjson_lines(data: Callable[[Sizes], bytes]) -> Callable[[Sizes], tuple[Timed, Check]]:
    """``orjson.loads`` of every data line, already split out: the JSON parsing alone, with no
    framing and no assembly (a floor, not a full parser)."""

    def prepare(sizes: Sizes) -> tuple[Timed, Check]:
        orjson = importlib.import_module("orjson")
        lines = [line[6:] for line in data(sizes).split(b"\n") if line.startswith(b"data: {")]

        def run() -> int:
            for line in lines:
                orjson.loads(line)
            return len(lines)

        return run, lambda count: count == len(lines) > 0

    return prepare


# --- Anthropic stream ----------------------------------------------------------------------------


def anthropic_msgwire(sizes: Sizes) -> tuple[Timed, Check]:
    chunks = peers.pieces(sizes.anthropic())
    reference = assemble(sizes.anthropic(), "anthropic")
    wanted = (reference.thinking, reference.text, _calls(reference))
    return (lambda: assemble(chunks, "anthropic")), (lambda m: (m.thinking, m.text, _calls(m)) == wanted)


def anthropic_sdk(sizes: Sizes) -> tuple[Timed, Check]:
    """``client.messages.stream``: the SDK's SSE parsing and its message accumulator."""
    client = _sdk("anthropic", sizes.anthropic(), api_key="x", base_url="http://bench")

    def run() -> Any:
        request = {"model": "claude-sonnet-4-6", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]}
        with client.messages.stream(**request) as stream:
            return stream.get_final_message()

    reference = assemble(sizes.anthropic(), "anthropic")
    wanted = (reference.text, [c.parsed_arguments() for c in reference.tool_calls])

    def check(final: Any) -> bool:
        text = "".join(b.text for b in final.content if b.type == "text")
        return (text, [b.input for b in final.content if b.type == "tool_use"]) == wanted

    return run, check


# --- codec ---------------------------------------------------------------------------------------


def dumps_msgwire(sizes: Sizes) -> tuple[Timed, Check]:
    session = sizes.session()
    return (lambda: dumps(session)), (lambda data: loads(data) == session)


def dumps_baseline(sizes: Sizes) -> tuple[Timed, Check]:
    baseline = forms.to_baseline(sizes.session())
    expected = dumps(sizes.session())
    return (lambda: forms.BASELINE_ENCODER.encode(baseline)), (lambda data: data == expected)


def _pydantic_ai(sizes: Sizes) -> tuple[Any, list[Any]]:
    """pydantic-ai's message adapter and the session as msgwire's interop writes it (imported
    when the case runs: pydantic-ai is optional)."""
    from ..interop.pydantic_ai import to_model_messages

    adapter = importlib.import_module("pydantic_ai.messages").ModelMessagesTypeAdapter
    return adapter, to_model_messages(sizes.session())


def dumps_pydantic_ai(sizes: Sizes) -> tuple[Timed, Check]:
    adapter, messages = _pydantic_ai(sizes)
    return (lambda: adapter.dump_json(messages)), (lambda data: adapter.validate_json(data) == messages)


def dumps_orjson(sizes: Sizes) -> tuple[Timed, Check]:
    """``orjson.dumps`` of the session's JSON as plain dicts and lists: no types at all."""
    orjson = importlib.import_module("orjson")
    document = orjson.loads(dumps(sizes.session()))
    return (lambda: orjson.dumps(document)), (lambda data: orjson.loads(data) == document)


def loads_msgwire(sizes: Sizes) -> tuple[Timed, Check]:
    session = sizes.session()
    data = dumps(session)
    return (lambda: loads(data, type=Session)), (lambda loaded: loaded == session)


def loads_baseline(sizes: Sizes) -> tuple[Timed, Check]:
    baseline = forms.to_baseline(sizes.session())
    data = dumps(sizes.session())
    return (lambda: forms.BASELINE_DECODER.decode(data)), (lambda loaded: loaded == baseline)


def loads_pydantic_ai(sizes: Sizes) -> tuple[Timed, Check]:
    adapter, messages = _pydantic_ai(sizes)
    data = adapter.dump_json(messages)
    return (lambda: adapter.validate_json(data)), (lambda loaded: loaded == messages)


def loads_orjson(sizes: Sizes) -> tuple[Timed, Check]:
    orjson = importlib.import_module("orjson")
    data = dumps(sizes.session())
    document = orjson.loads(data)
    return (lambda: orjson.loads(data)), (lambda loaded: loaded == document)


# --- the groups and their entries (msgwire, each group's reference, first) ----------------------


def _describe_openai(sizes: Sizes) -> str:
    return f"Chat Completions SSE: {sizes.text_deltas:,} text deltas, 3 parallel tool calls"


def _describe_anthropic(sizes: Sizes) -> str:
    return f"Messages SSE: {sizes.thinking_deltas:,} thinking + {sizes.text_deltas:,} text deltas, 3 tool calls"


def _describe_session(sizes: Sizes) -> str:
    return f"agent session of {len(sizes.session().messages):,} messages (JSON)"


GROUPS: tuple[Group, ...] = (
    Group("openai stream", _describe_openai, lambda sizes: len(sizes.openai())),
    Group("anthropic stream", _describe_anthropic, lambda sizes: len(sizes.anthropic())),
    Group("dumps", _describe_session, lambda sizes: len(dumps(sizes.session()))),
    Group("loads", _describe_session, lambda sizes: len(dumps(sizes.session()))),
)

_LINES = "JSON of pre-split lines only"  # no framing, no assembly: a floor, not a parser
_SAME = "tagged Structs, same JSON"
_UNTYPED = "untyped dicts and lists"
CASES: tuple[Case, ...] = (
    Case("openai stream", "msgwire", (), openai_msgwire, "msgwire.assemble"),
    Case("openai stream", "msgwire + httpx", ("httpx",), openai_msgwire_httpx, "the same over a mock response"),
    Case("openai stream", "openai SDK", ("openai",), openai_sdk, "SDK stream accumulator"),
    Case("openai stream", "httpx-sse + json", ("httpx", "httpx_sse"), openai_httpx_sse, "hand-written loop"),
    Case("openai stream", "orjson per line", ("orjson",), orjson_lines(Sizes.openai), _LINES),
    Case("anthropic stream", "msgwire", (), anthropic_msgwire, "msgwire.assemble"),
    Case("anthropic stream", "anthropic SDK", ("anthropic",), anthropic_sdk, "SDK stream accumulator"),
    Case("anthropic stream", "orjson per line", ("orjson",), orjson_lines(Sizes.anthropic), _LINES),
    Case("dumps", "msgwire", (), dumps_msgwire, "msgwire.dumps"),
    Case("dumps", "msgspec Structs", (), dumps_baseline, _SAME),
    Case("dumps", "pydantic-ai", ("pydantic_ai",), dumps_pydantic_ai, "TypeAdapter.dump_json"),
    Case("dumps", "orjson", ("orjson",), dumps_orjson, _UNTYPED),
    Case("loads", "msgwire", (), loads_msgwire, "msgwire.loads"),
    Case("loads", "msgspec Structs", (), loads_baseline, _SAME),
    Case("loads", "pydantic-ai", ("pydantic_ai",), loads_pydantic_ai, "TypeAdapter.validate_json"),
    Case("loads", "orjson", ("orjson",), loads_orjson, _UNTYPED),
)
