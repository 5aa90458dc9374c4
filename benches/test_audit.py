"""Audit export and load: msgwire's Conversation beside stdlib json, pydantic and plain msgspec.

The trail is a ``Conversation`` of N entries holding the messages of the benchmark workload
(``workload.py``, generated at N messages): 100,000 under ``MSGWIRE_BENCH_FULL=1`` (what
``make bench`` figures quote), 2,000 otherwise (the untimed smoke run of ``make test``).

- ``msgwire``: ``Conversation.export_audit()`` / ``Conversation.load_audit(data)`` (the load
  builds the conversation: entries, latest-state index, header);
- ``msgspec_baseline``: hand-written msgspec Structs mirroring the export field for field (the
  workload's ``Baseline*`` messages inside a ``BaselineEntry``), one ``encode`` / ``decode``:
  its bytes are byte for byte msgwire's, so both sides handle the same document (target:
  msgwire within 1.3x of it);
- ``json_stdlib``: ``json.dumps`` / ``json.loads`` of the same document as plain dicts;
- ``pydantic``: a pydantic ``BaseModel`` entry holding pydantic-ai's typed message of the same
  conversation (``ModelMessage``; the pydantic-ai form has fewer, merged messages, cycled to N
  entries), through one ``TypeAdapter``.

JSON Lines has its own groups (msgwire beside msgspec's ``encode_lines`` of the baseline
entries). Every benchmark checks its result after timing.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from dataclasses import dataclass
from typing import Any

import msgspec
import pydantic
import pytest
from pydantic_ai import messages as pa

import msgwire
from msgwire.bench.forms import BaselineMessage, baseline_message
from msgwire.bench.workloads import session as generate_session
from msgwire.harness import Conversation
from msgwire.interop.pydantic_ai import to_model_messages

N_ENTRIES = 100_000 if os.environ.get("MSGWIRE_BENCH_FULL") else 2_000


class BaselineEntry(msgspec.Struct, kw_only=True, gc=False):
    id: str
    seq: int
    timestamp: dt.datetime
    message: BaselineMessage
    decision: str
    audit: dict[str, Any] = {}
    hash: str


class BaselineParent(msgspec.Struct, kw_only=True):
    conversation_id: str
    entry_id: str | None = None
    hash: str | None = None


class BaselineLink(msgspec.Struct, kw_only=True):
    at: int
    hash: str


class BaselineAudit(msgspec.Struct, kw_only=True):
    version: int = 2
    conversation_id: str
    created_at: dt.datetime
    system_prompt: str | None = None
    mode: str | None = None
    modes: dict[str, str] = {}
    branch: str = "main"
    parent: BaselineParent | None = None
    metadata: dict[str, Any] = {}
    chain: list[BaselineLink] = []
    entries: list[BaselineEntry] = []


class PydanticEntry(pydantic.BaseModel):
    id: str
    seq: int
    timestamp: dt.datetime
    message: pa.ModelMessage
    decision: str
    audit: dict[str, Any]
    hash: str


PYDANTIC_ENTRIES = pydantic.TypeAdapter(list[PydanticEntry])
BASELINE_ENCODER = msgspec.json.Encoder()
BASELINE_DECODER = msgspec.json.Decoder(BaselineAudit)
BASELINE_LINES_DECODER = msgspec.json.Decoder(BaselineEntry)


def _audit_of(message: msgwire.Message) -> dict[str, Any]:
    """Audit metadata as an agent records it: durations and sizes for tool results."""
    if isinstance(message, msgwire.ToolResultMessage):
        return {"tool": message.tool_name, "duration_ms": message.duration_ms, "result_bytes": len(message.text)}
    if isinstance(message, msgwire.AssistantMessage) and message.tool_calls:
        return {"calls": len(message.tool_calls)}
    return {}


@dataclass(frozen=True)
class Trail:
    session: msgwire.Session
    conversation: Conversation
    baseline: BaselineAudit
    json_bytes: bytes
    lines_bytes: bytes


@functools.cache
def trail(n: int = N_ENTRIES) -> Trail:
    """The conversation and its msgspec twin (the other forms are made by their own benchmarks
    and dropped after: millions of dicts kept alive would slow every other benchmark's garbage
    collections)."""
    session = generate_session(n_messages=n)
    conversation = Conversation(system_prompt=session.system_prompt, metadata={"project": "acme"})
    for message in session.messages:
        conversation.add(message, audit=_audit_of(message))
    baseline = BaselineAudit(
        conversation_id=conversation.id,
        created_at=conversation.created_at,
        system_prompt=conversation.origin.system_prompt,  # the header as made: entries say what changed
        mode=conversation.origin.mode,
        branch=conversation.origin.branch,
        metadata=dict(conversation.metadata),
        chain=[BaselineLink(at=link.at, hash=link.hash) for link in conversation.header().chain],
        entries=[
            BaselineEntry(
                id=e.id,
                seq=e.seq,
                timestamp=e.timestamp,
                message=baseline_message(e.message),
                decision=e.decision,
                audit=e.audit,
                hash=e.hash,
            )
            for e in conversation.entries
        ],
    )
    return Trail(
        session=session,
        conversation=conversation,
        baseline=baseline,
        json_bytes=conversation.export_audit(),
        lines_bytes=conversation.export_audit(format="jsonl"),
    )


def _pydantic_entries(t: Trail) -> list[PydanticEntry]:
    pa_messages = to_model_messages(t.session)
    return [
        PydanticEntry.model_construct(
            id=e.id,
            seq=e.seq,
            timestamp=e.timestamp,
            message=pa_messages[i % len(pa_messages)],
            decision=e.decision,
            audit=e.audit,
            hash=e.hash,
        )
        for i, e in enumerate(t.conversation.entries)
    ]


@pytest.fixture(scope="module")
def t() -> Trail:
    return trail()


def test_the_forms_hold_the_same_trail(t: Trail) -> None:
    """Not a benchmark: the baseline writes msgwire's bytes exactly; the sizes are as promised."""
    assert len(t.conversation) == N_ENTRIES
    assert BASELINE_ENCODER.encode(t.baseline) == t.json_bytes
    assert len(json.loads(t.json_bytes)["entries"]) == len(_pydantic_entries(t)) == N_ENTRIES
    assert t.conversation.verify()


# --- export -----------------------------------------------------------------------------------


@pytest.mark.benchmark(group="audit_export")
def test_audit_export_msgwire(benchmark: Any, t: Trail) -> None:
    out = benchmark(t.conversation.export_audit)
    assert out == t.json_bytes


@pytest.mark.benchmark(group="audit_export")
def test_audit_export_msgspec_baseline(benchmark: Any, t: Trail) -> None:
    out = benchmark(BASELINE_ENCODER.encode, t.baseline)
    assert out == t.json_bytes


@pytest.mark.benchmark(group="audit_export")
def test_audit_export_json_stdlib(benchmark: Any, t: Trail) -> None:
    plain = json.loads(t.json_bytes)
    out = benchmark(json.dumps, plain, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(out) == plain


@pytest.mark.benchmark(group="audit_export")
def test_audit_export_pydantic(benchmark: Any, t: Trail) -> None:
    out = benchmark(PYDANTIC_ENTRIES.dump_json, _pydantic_entries(t))
    assert len(PYDANTIC_ENTRIES.validate_json(out)) == N_ENTRIES


# --- load -------------------------------------------------------------------------------------


@pytest.mark.benchmark(group="audit_load")
def test_audit_load_msgwire(benchmark: Any, t: Trail) -> None:
    loaded = benchmark(Conversation.load_audit, t.json_bytes)
    assert loaded == t.conversation


@pytest.mark.benchmark(group="audit_load")
def test_audit_load_msgspec_baseline(benchmark: Any, t: Trail) -> None:
    loaded = benchmark(BASELINE_DECODER.decode, t.json_bytes)
    assert loaded == t.baseline


@pytest.mark.benchmark(group="audit_load")
def test_audit_load_json_stdlib(benchmark: Any, t: Trail) -> None:
    loaded = benchmark(json.loads, t.json_bytes)
    assert loaded["entries"][-1]["hash"] == t.conversation.head


@pytest.mark.benchmark(group="audit_load")
def test_audit_load_pydantic(benchmark: Any, t: Trail) -> None:
    data = PYDANTIC_ENTRIES.dump_json(_pydantic_entries(t))
    loaded = benchmark(PYDANTIC_ENTRIES.validate_json, data)
    assert len(loaded) == N_ENTRIES


# --- JSON Lines -------------------------------------------------------------------------------


@pytest.mark.benchmark(group="audit_export_jsonl")
def test_audit_export_jsonl_msgwire(benchmark: Any, t: Trail) -> None:
    out = benchmark(t.conversation.export_audit, format="jsonl")
    assert out == t.lines_bytes


@pytest.mark.benchmark(group="audit_export_jsonl")
def test_audit_export_jsonl_msgspec_baseline(benchmark: Any, t: Trail) -> None:
    header = msgspec.structs.replace(t.baseline, entries=[])
    head = BASELINE_ENCODER.encode({f: getattr(header, f) for f in header.__struct_fields__ if f != "entries"})

    def encode() -> bytes:
        return head + b"\n" + BASELINE_ENCODER.encode_lines(t.baseline.entries)

    out = benchmark(encode)
    assert out == t.lines_bytes


@pytest.mark.benchmark(group="audit_load_jsonl")
def test_audit_load_jsonl_msgwire(benchmark: Any, t: Trail) -> None:
    loaded = benchmark(Conversation.load_audit, t.lines_bytes)
    assert loaded == t.conversation


@pytest.mark.benchmark(group="audit_load_jsonl")
def test_audit_load_jsonl_msgspec_baseline(benchmark: Any, t: Trail) -> None:
    def decode() -> list[BaselineEntry]:
        return [BASELINE_LINES_DECODER.decode(line) for line in t.lines_bytes.splitlines()[1:]]

    loaded = benchmark(decode)
    assert loaded == t.baseline.entries
