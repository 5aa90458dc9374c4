"""The inputs of ``msgwire bench``, generated from fixed seeds (same bytes on every run and
machine), in the shapes of real provider streams and agent sessions.

- ``openai_stream``: a Chat Completions stream, text deltas then parallel tool calls whose
  argument fragments interleave, a finish chunk, a usage chunk and ``[DONE]`` (the fields and
  padding of a recorded OpenAI stream);
- ``anthropic_stream``: its Anthropic counterpart, with a signed thinking block first;
- ``session``: a coding-agent session (user turns, assistant messages with signed thinking,
  text and tool calls, tool results).

The benches/ suite (``benches/streams.py``, ``benches/workload.py``) builds the same shapes at
its own sizes; this copy lives in the package because benches/ is not installed.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from functools import cache
from typing import Any

from ..types import (
    AssistantMessage,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
)

SEED = 20261121
_PROSE = (
    "the stream parser reads every byte once and keeps its state between chunks so that a split CRLF "
    "or a cut UTF-8 sequence never changes what comes out — café 日本語 naïve → ok"
)
WORDS = tuple(_PROSE.split())
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
TOOLS = ("grep", "read_file", "run_tests")


def _token(rng: random.Random, low: int = 1, high: int = 14) -> str:
    return "".join(rng.choice(_ALNUM) for _ in range(rng.randint(low, high)))


def _words(rng: random.Random, n: int) -> list[str]:
    return [(" " if i else "") + rng.choice(WORDS) for i in range(n)]


def _arguments(rng: random.Random, rows: int) -> str:
    matches = [
        {"path": f"src/module_{i}.py", "line": rng.randint(1, 900), "note": "".join(_words(rng, 6))}
        for i in range(rows)
    ]
    return json.dumps({"query": "where is the CRLF handled?", "matches": matches, "limit": rows})


def _fragments(rng: random.Random, text: str) -> list[str]:
    pieces = []
    at = 0
    while at < len(text):
        pieces.append(text[at : at + (step := rng.randint(3, 24))])
        at += step
    return pieces


def _data(body: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


@cache
def openai_stream(text_deltas: int, tool_calls: int = 3, seed: int = SEED) -> bytes:
    rng = random.Random(seed)
    head = {
        "id": "chatcmpl-CMKAuuvC6E26nL6HLZzTrysEvC8Ln",
        "object": "chat.completion.chunk",
        "created": 1759436804,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_cbf1785567",
        "usage": None,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _data({**head, "choices": [choice], "obfuscation": _token(rng)})

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [chunk({"content": word}) for word in _words(rng, text_deltas)]
    calls = [(f"call_{i}{_token(rng)}", _fragments(rng, _arguments(rng, 4 + 2 * i))) for i in range(tool_calls)]
    for index, (call_id, _) in enumerate(calls):
        function = {"name": TOOLS[index % 3], "arguments": ""}
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]}))
    pending = [(index, list(fragments)) for index, (_, fragments) in enumerate(calls)]
    while any(fragments for _, fragments in pending):  # parallel calls: their fragments interleave
        index, fragments = rng.choice([p for p in pending if p[1]])
        out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": fragments.pop(0)}}]}))
    out.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 1843, "completion_tokens": 2210, "total_tokens": 4053}
    out.append(_data({**head, "choices": [], "usage": usage, "obfuscation": _token(rng)}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


@cache
def anthropic_stream(text_deltas: int, thinking_deltas: int, tool_calls: int = 3, seed: int = SEED) -> bytes:
    rng = random.Random(seed)
    out: list[bytes] = []

    def event(kind: str, body: dict[str, Any]) -> None:
        data = json.dumps({"type": kind, **body}, ensure_ascii=False, separators=(",", ":")).encode()
        pad = b" " * rng.randint(0, 12)  # Anthropic pads data lines after the JSON
        out.append(b"event: " + kind.encode() + b"\ndata: " + data + pad + b"\n\n")

    usage = {"input_tokens": 598, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1536, "output_tokens": 8}
    message: dict[str, Any] = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_01JdU4xqNHXL9QCFWkwCDKGr",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    event("message_start", {"message": message})
    event("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
    for word in _words(rng, thinking_deltas):
        event("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": word}})
    signature = {"type": "signature_delta", "signature": "EqQBCkgIBxABGAIiQL2kMvJ9wXb3" * 8}
    event("content_block_delta", {"index": 0, "delta": signature})
    event("content_block_stop", {"index": 0})
    event("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}})
    for word in _words(rng, text_deltas):
        event("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": word}})
    event("content_block_stop", {"index": 1})
    for i in range(tool_calls):
        index = 2 + i
        block = {"type": "tool_use", "id": f"toolu_01{_token(rng)}", "name": TOOLS[i % 3], "input": {}}
        event("content_block_start", {"index": index, "content_block": block})
        for fragment in _fragments(rng, _arguments(rng, 4 + 2 * i)):
            delta = {"type": "input_json_delta", "partial_json": fragment}
            event("content_block_delta", {"index": index, "delta": delta})
        event("content_block_stop", {"index": index})
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    event("message_delta", {"delta": stop, "usage": {**usage, "output_tokens": 2210}})
    event("message_stop", {})
    return b"".join(out)


# --- the session -------------------------------------------------------------------------------

START = dt.datetime(2026, 6, 2, 9, 0, 0, tzinfo=dt.UTC)


def _prose(rng: random.Random, n_words: int) -> str:
    return "".join(_words(rng, n_words)).capitalize() + "."


@cache
def session(n_messages: int, seed: int = SEED) -> Session:
    """A session of about ``n_messages`` messages (a user turn, then assistant steps with
    1 to 3 tool calls and their results, then a final answer)."""
    rng = random.Random(seed)
    clock = START
    messages: list[Any] = []

    def stamp() -> tuple[str, dt.datetime]:
        nonlocal clock
        clock += dt.timedelta(milliseconds=rng.randint(200, 40_000))
        return f"{seed:08x}-{len(messages):04x}-7000-8000-{rng.getrandbits(48):012x}", clock

    while len(messages) < n_messages:
        ident, ts = stamp()
        messages.append(UserMessage(id=ident, timestamp=ts, content=[TextBlock(text=_prose(rng, rng.randint(8, 120)))]))
        for step in range(rng.randint(1, 4)):
            calls = rng.choice((1, 1, 2, 3)) if step < 3 else 0
            blocks: list[Any] = [
                ThinkingBlock(thinking=_prose(rng, rng.randint(10, 80)), signature=_token(rng, 90, 200)),
                TextBlock(text=_prose(rng, rng.randint(5, 150))),
            ]
            blocks += [
                ToolCallBlock(id=f"toolu_01{_token(rng, 22, 22)}", name=rng.choice(TOOLS), arguments=_arguments(rng, 2))
                for _ in range(calls)
            ]
            ident, ts = stamp()
            usage = Usage(input_tokens=rng.randint(2_000, 90_000), output_tokens=rng.randint(20, 900))
            messages.append(
                AssistantMessage(
                    id=ident,
                    timestamp=ts,
                    content=blocks,
                    stop_reason="tool_use" if calls else "end_turn",
                    usage=usage,
                    model="claude-sonnet-4-5-20250929",
                    provider="anthropic",
                    response_id=f"msg_01{_token(rng, 22, 22)}",
                )
            )
            for call in blocks[2:]:
                ident, ts = stamp()
                output = "\n".join(f"src/module_{i}.py:{rng.randint(1, 900)}: {_prose(rng, 8)}" for i in range(6))
                result = ToolResultMessage(
                    id=ident, timestamp=ts, tool_call_id=call.id, tool_name=call.name, content=[TextBlock(text=output)]
                )
                messages.append(result)
            if not calls:
                break
    return Session(
        id=f"{seed:08x}-0000-7000-8000-000000000000",
        system_prompt=_prose(rng, 300),
        created_at=START,
        updated_at=clock,
        metadata={"agent": "coder", "tags": ["bench"]},
        messages=messages,
    )
