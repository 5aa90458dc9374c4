"""85 real provider stream recordings from other projects' test suites (tests/fixtures/realworld,
provenance in its SOURCES.md), run through msgwire:

1. every file gives the same outcome (message, or error class and partial message) under any
   chunking: whole, one byte at a time, 7-byte pieces, line by line, and seeded random cuts;
2. where an official accumulator exists, msgwire's message equals it on the same bytes: the
   openai SDK's ``ChatCompletionStreamState`` and ``ResponseStreamState``, the anthropic SDK's
   ``MessageStream``; Gemini and Ollama, which have none, are compared with a small independent
   reading of their JSON chunks written here;
3. a recorded provider error raises the class ``expectations.json`` names, with the provider's
   type and message; where ``expectations.json`` says the SDK is wrong on a recording, msgwire
   gives the value read off the body, and the SDK is shown to still differ (so a fixed SDK
   shows up here).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire import AssistantMessage, StreamError
from tests._support.sdk import (
    anthropic_final,
    compare_chat,
    compare_messages,
    compare_response,
    openai_final,
    sdk_events,
    strip_identity,
)

ROOT = Path(__file__).parents[1] / "fixtures" / "realworld"
EXPECTATIONS: dict[str, Any] = json.loads((ROOT / "expectations.json").read_text())
FILES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.suffix in (".sse", ".ndjson"))


def _dialect(name: str) -> str:
    return name.split("/")[0]


def test_the_corpus_is_there() -> None:
    assert len(FILES) == 85
    assert {n for n in EXPECTATIONS if not n.startswith("_")} <= set(FILES)


# --- 1. any chunking --------------------------------------------------------------------------


def _chunkings(data: bytes) -> dict[str, list[bytes]]:
    rng = random.Random(len(data))
    cuts = sorted(rng.sample(range(1, len(data)), min(40, len(data) - 1))) if len(data) > 1 else []
    bounds = [0, *cuts, len(data)]
    return {
        "one byte": [data[i : i + 1] for i in range(len(data))],
        "7 bytes": [data[i : i + 7] for i in range(0, len(data), 7)],
        "lines": data.splitlines(keepends=True),
        "random": [data[a:b] for a, b in itertools.pairwise(bounds)],
    }


def _outcome(chunks: list[bytes], dialect: str) -> tuple[str | None, AssistantMessage]:
    """The error class (``None``: no error) and the message, or the partial message kept."""
    try:
        return None, strip_identity(msgwire.assemble(iter(chunks), dialect))
    except StreamError as failure:
        error, partial = type(failure).__name__, failure.partial_message
    assert partial is not None
    return error, strip_identity(partial)


@pytest.mark.parametrize("name", FILES)
def test_any_chunking_gives_the_same_outcome(name: str) -> None:
    data = (ROOT / name).read_bytes()
    dialect = _dialect(name)
    whole = _outcome([data], dialect)
    for how, chunks in _chunkings(data).items():
        assert _outcome(chunks, dialect) == whole, how
    # the event path agrees with the fast path
    stream = msgwire.stream(iter([data]), dialect)
    with contextlib.suppress(StreamError):
        list(stream)
    assert (whole[0], strip_identity(stream.message())) == whole


# --- 2 and 3. the oracles and the expected errors ---------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_matches_the_official_accumulator_or_raises_the_expected_error(name: str) -> None:
    data = (ROOT / name).read_bytes()
    dialect = _dialect(name)
    expected = EXPECTATIONS.get(name, {})
    if "error" in expected:
        with pytest.raises(StreamError) as raised:
            msgwire.assemble(data, dialect)
        failure = raised.value
        assert type(failure).__name__ == expected["error"]
        if isinstance(failure, msgwire.ProviderError):
            assert failure.error_type
            assert failure.provider_message
            assert failure.provider_message in data.decode()
        # an error body holds no message: the partial message is empty and marked failed
        assert failure.partial_message.content == []
        assert failure.partial_message.stop_reason == "error"
        if not expected.get("oracle_fails"):
            _oracle_fails_too(dialect, data)
        return
    message = msgwire.assemble(data, dialect)
    msgwire.validate(message)
    if "expect" in expected:
        _check_expected(message, expected["expect"])
        with pytest.raises(AssertionError):  # the SDK is still wrong on this recording
            _compare_with_oracle(message, dialect, data)
        return
    if name in READS_MORE_THAN_THE_SDK:
        field, value = READS_MORE_THAN_THE_SDK[name]
        assert msgspec.to_builtins(getattr(message, field)) == value
        message = msgspec.structs.replace(message, **{field: None})
    _compare_with_oracle(message, dialect, data)


# Recordings where msgwire keeps what the SDK's accumulator drops (not an SDK bug listed in
# expectations.json, a field the SDK does not read): the field, and its value read off the body.
READS_MORE_THAN_THE_SDK = {
    # Groq puts the usage in `x_groq.usage` of the last chunk; the SDK keeps the first chunk's
    # `x_groq` (which has only an id) and reports no usage
    "openai/groq-llama3-8b-x-groq.sse": ("usage", {"input_tokens": 18, "output_tokens": 73}),
}


def _compare_with_oracle(message: AssistantMessage, dialect: str, data: bytes) -> None:
    if dialect == "openai":
        compare_chat(message, openai_final([data]))
    elif dialect == "anthropic":
        compare_messages(message, anthropic_final([data]))
    elif dialect == "openai-responses":
        events, response = sdk_events([data])
        compare_response(message, events, response)
    else:
        assert _summary(message) == _READERS[dialect](data)


def _oracle_fails_too(dialect: str, data: bytes) -> None:
    """The SDK, fed the error body, gives no message either (it raises)."""
    read = {"openai": openai_final, "openai-responses": sdk_events, "anthropic": anthropic_final}.get(dialect)
    if read is not None:
        with pytest.raises(Exception):  # noqa: B017, PT011 - each SDK raises its own kind
            read([data])


def _args(text: str, malformed: bool) -> Any:
    return ["RAW", text] if malformed else (json.loads(text) if text.strip() else {})


def _summary(message: AssistantMessage) -> dict[str, Any]:
    return {
        "text": message.text,
        "thinking": message.thinking,
        "tool_calls": [{"name": c.name, "args": _args(c.arguments, c.malformed)} for c in message.tool_calls],
        "raw_stop": message.raw_stop_reason,
    }


def _check_expected(message: AssistantMessage, expect: dict[str, Any]) -> None:
    for field, value in expect.items():
        if field == "tool_calls":
            got = [{"id": c.id, "name": c.name, "args": _args(c.arguments, c.malformed)} for c in message.tool_calls]
            assert got == value
        else:
            assert _summary(message)[field] == value, field


# --- independent readings of the formats without an SDK accumulator ---------------------------


def _sse_payloads(data: bytes) -> list[str]:
    """The data of each SSE event (enough of WHATWG for these recordings: `data:` lines joined,
    a blank line dispatching, CR LF and CR as line ends)."""
    events, current = [], []
    for line in data.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if current:
                events.append("\n".join(current))
            current = []
        elif line.startswith("data:"):
            current.append(line[5:].removeprefix(" "))
    return events


def _gemini(data: bytes) -> dict[str, Any]:
    text = thinking = ""
    calls: list[dict[str, Any]] = []
    stop = None
    for payload in _sse_payloads(data):
        for candidate in json.loads(payload).get("candidates", [])[:1]:
            for part in candidate.get("content", {}).get("parts", []):
                if "functionCall" in part:
                    calls.append({"name": part["functionCall"]["name"], "args": part["functionCall"].get("args", {})})
                elif part.get("thought"):
                    thinking += part.get("text", "")
                else:
                    text += part.get("text", "")
            stop = candidate.get("finishReason", stop)
    return {"text": text, "thinking": thinking, "tool_calls": calls, "raw_stop": stop}


def _ollama(data: bytes) -> dict[str, Any]:
    text = thinking = ""
    calls: list[dict[str, Any]] = []
    stop = None
    for line in data.decode().splitlines():
        if not line.strip():
            continue
        chunk = json.loads(line)
        message = chunk.get("message", {})
        text += message.get("content", "") + chunk.get("response", "")
        thinking += message.get("thinking", "") + chunk.get("thinking", "")
        for call in message.get("tool_calls", []):
            args = call["function"].get("arguments", {})
            calls.append(
                {"name": call["function"]["name"], "args": json.loads(args) if isinstance(args, str) else args}
            )
        if chunk.get("done"):
            stop = chunk.get("done_reason")
    return {"text": text, "thinking": thinking, "tool_calls": calls, "raw_stop": stop}


_READERS = {"gemini": _gemini, "ollama": _ollama}


def test_summaries_compare_whole_messages() -> None:
    """The independent readings see what msgwire's message holds (a guard on the guard)."""
    name = "gemini/gemini-2.5-pro-parallel-function-calls.sse"
    summary = _gemini((ROOT / name).read_bytes())
    assert summary["tool_calls"]
    assert msgspec.json.encode(summary) == msgspec.json.encode(
        _summary(msgwire.assemble((ROOT / name).read_bytes(), "gemini"))
    )
