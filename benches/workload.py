"""The benchmark workload: one realistic agent session in three equivalent forms.

``build()`` returns the ~1 MB, 900-message coding-agent session of
``msgwire.bench.workloads.session()`` (generated from a fixed seed; the one copy ``msgwire bench``
uses too) as

- ``session``:  a ``msgwire.Session`` (the primary form; the other two are converted from it),
- ``pydantic_ai``: the same conversation as a pydantic-ai message list (``ModelRequest`` /
  ``ModelResponse``), for ``ModelMessagesTypeAdapter``,
- ``baseline``: the same conversation as hand-written msgspec tagged Structs, what a skilled
  msgspec user would write without msgwire: the floor.

The baseline is ``msgwire.bench.forms`` (its docstring states the floor's schema: msgwire's
fields, types and defaults); the pydantic-ai form is what msgwire ships,
``msgwire.interop.pydantic_ai.to_model_messages`` (its docstring says what maps and what is left out).
The baseline mirrors msgwire's JSON field for field, so ``msgspec.json.encode(baseline)`` is
byte-for-byte ``msgwire.dumps(session)``: both sides of that ratio parse and write exactly the
same document.

Each form's objects are made by one decode of its own bytes, so the objects each ``dumps`` entry
walks lie in memory alike, as a loaded conversation's do: the generator's session (and the
earlier baseline, converted from it object by object) took 20-25% longer to encode than the same
objects loaded from their bytes, for the same instructions (2.04 / 2.06 ms against 1.65 ms of
CPU, 2026-11-28): the memory layout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pydantic_ai import messages as pa

import msgwire
from msgwire.bench.forms import BASELINE_ENCODER, BaselineSession, to_baseline
from msgwire.bench.workloads import N_MESSAGES, SESSION_SEED, session
from msgwire.interop.pydantic_ai import to_model_messages


@dataclass(frozen=True)
class Workload:
    session: msgwire.Session
    pydantic_ai: list[pa.ModelMessage]
    baseline: BaselineSession
    msgwire_json: bytes
    pydantic_ai_json: bytes
    baseline_json: bytes

    def describe(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for m in self.session.messages:
            kinds[m.type] = kinds.get(m.type, 0) + 1  # type: ignore[union-attr]
        calls = sum(len(m.tool_calls) for m in self.session.messages if type(m) is msgwire.AssistantMessage)
        errors = sum(1 for m in self.session.messages if type(m) is msgwire.ToolResultMessage and m.is_error)
        return {
            "messages": len(self.session.messages),
            "by_type": kinds,
            "tool_calls": calls,
            "tool_errors": errors,
            "pydantic_ai_messages": len(self.pydantic_ai),
            "msgwire_bytes": len(self.msgwire_json),
            "baseline_bytes": len(self.baseline_json),
            "pydantic_ai_bytes": len(self.pydantic_ai_json),
        }


PYDANTIC_AI_ADAPTER = pa.ModelMessagesTypeAdapter


@functools.cache
def build(seed: int = SESSION_SEED, n_messages: int = N_MESSAGES) -> Workload:
    msgwire_json = msgwire.dumps(session(n_messages=n_messages, seed=seed))
    conversation = msgwire.loads(msgwire_json)
    pydantic_ai_json = PYDANTIC_AI_ADAPTER.dump_json(to_model_messages(conversation))
    baseline = to_baseline(conversation)
    return Workload(
        session=conversation,
        pydantic_ai=PYDANTIC_AI_ADAPTER.validate_json(pydantic_ai_json),
        baseline=baseline,
        msgwire_json=msgwire_json,
        pydantic_ai_json=pydantic_ai_json,
        baseline_json=BASELINE_ENCODER.encode(baseline),
    )


if __name__ == "__main__":  # python benches/workload.py: print the workload's figures
    import json

    print(json.dumps(build().describe(), indent=2))
