"""Stream workloads for the parsing benchmarks: provider SSE bodies built deterministically, in
the exact shapes of the recorded streams in tests/fixtures/wire (same fields, same padding).

- ``openai_chat()``: a Chat Completions stream of 1,500 text deltas, then 3 parallel tool
  calls whose argument fragments interleave, a finish chunk, a usage chunk and ``[DONE]``
  (~440 KB, like the issue's workload).
- ``anthropic_messages()``: its Anthropic counterpart, with a signed thinking block first.
- ``sse_events(n, size)``: generic ``data:`` events of a given size, for framing alone.
- ``long_tool_call(arg_bytes, fragment)``: one tool call whose arguments stream in small
  fragments (the partial-arguments workload).

``python -m benches.streams`` prints their sizes.
"""

from __future__ import annotations

import json
import random
from functools import cache

SEED = 20261121
_PROSE = (
    "the stream parser reads every byte once and keeps its state between chunks so that a split CRLF "
    "or a cut UTF-8 sequence never changes what comes out — café 日本語 naïve → ok"
)
WORDS = tuple(_PROSE.split())


def _obfuscation(rng: random.Random) -> str:
    return "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(rng.randint(1, 14))
    )


def _words(rng: random.Random, n: int) -> list[str]:
    return [(" " if i else "") + rng.choice(WORDS) for i in range(n)]


def _arguments(rng: random.Random, size: int) -> str:
    rows = [
        {"path": f"src/module_{i}.py", "line": rng.randint(1, 900), "note": " ".join(_words(rng, 6))}
        for i in range(size)
    ]
    return json.dumps({"query": "where is the CRLF handled?", "matches": rows, "limit": size})


def _fragments(rng: random.Random, text: str, low: int = 3, high: int = 24) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        step = rng.randint(low, high)
        pieces.append(text[at : at + step])
        at += step
    return pieces


@cache
def openai_chat(text_deltas: int = 1500, tool_calls: int = 3, seed: int = SEED) -> bytes:
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

    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        body["obfuscation"] = _obfuscation(rng)
        return b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [chunk({"content": word}) for word in _words(rng, text_deltas)]
    calls = [(f"call_{i}{_obfuscation(rng)}", _fragments(rng, _arguments(rng, 4 + 2 * i))) for i in range(tool_calls)]
    for index, (call_id, _) in enumerate(calls):
        name = ("grep", "read_file", "run_tests")[index % 3]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
                    ]
                }
            )
        )
    pending = [(index, list(frags)) for index, (_, frags) in enumerate(calls)]
    while any(frags for _, frags in pending):  # parallel calls: fragments interleave
        index, frags = rng.choice([p for p in pending if p[1]])
        out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": frags.pop(0)}}]}))
    out.append(chunk({}, "tool_calls"))
    usage = {**head, "choices": [], "obfuscation": _obfuscation(rng)}
    usage["usage"] = {
        "prompt_tokens": 1843,
        "completion_tokens": 2210,
        "total_tokens": 4053,
        "prompt_tokens_details": {"cached_tokens": 1536, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    out.append(b"data: " + json.dumps(usage, separators=(",", ":")).encode() + b"\n\n")
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


@cache
def anthropic_messages(
    text_deltas: int = 1500, thinking_deltas: int = 300, tool_calls: int = 3, seed: int = SEED
) -> bytes:
    rng = random.Random(seed)
    out: list[bytes] = []

    def event(kind: str, body: dict[str, object]) -> None:
        pad = b" " * rng.randint(0, 12)  # Anthropic pads data lines after the JSON
        data = json.dumps({"type": kind, **body}, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(b"event: " + kind.encode() + b"\ndata: " + data + pad + b"\n\n")

    usage = {"input_tokens": 598, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1536, "output_tokens": 8}
    event(
        "message_start",
        {
            "message": {
                "model": "claude-sonnet-4-5-20250929",
                "id": "msg_01JdU4xqNHXL9QCFWkwCDKGr",
                "type": "message",
                "role": "assistant",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
        },
    )
    event("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
    event("ping", {})
    for word in _words(rng, thinking_deltas):
        event("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": word}})
    event(
        "content_block_delta",
        {"index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCkgIBxABGAIiQL2kMvJ9wXb3" * 8}},
    )
    event("content_block_stop", {"index": 0})
    event("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}})
    for word in _words(rng, text_deltas):
        event("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": word}})
    event("content_block_stop", {"index": 1})
    for i in range(tool_calls):
        index = 2 + i
        name = ("grep", "read_file", "run_tests")[i % 3]
        event(
            "content_block_start",
            {
                "index": index,
                "content_block": {"type": "tool_use", "id": f"toolu_01{_obfuscation(rng)}", "name": name, "input": {}},
            },
        )
        event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})
        for fragment in _fragments(rng, _arguments(rng, 4 + 2 * i)):
            event(
                "content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": fragment}}
            )
        event("content_block_stop", {"index": index})
    event(
        "message_delta",
        {"delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {**usage, "output_tokens": 2210}},
    )
    event("message_stop", {})
    return b"".join(out)


@cache
def sse_events(count: int = 20_000, low: int = 100, high: int = 300, seed: int = SEED) -> bytes:
    """Generic events whose total size (``data: `` line and blank line included) is low..high bytes."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        size = rng.randint(low, high) - len('data: {"i":,"t":""}\n\n') - len(str(i))
        out.append(b'data: {"i":%d,"t":"%s"}\n\n' % (i, ("x" * max(size, 0)).encode()))
    return b"".join(out)


@cache
def long_tool_call(arg_bytes: int = 64 * 1024, fragment: int = 20, seed: int = SEED) -> tuple[bytes, str]:
    """An OpenAI stream with one tool call whose ``arg_bytes`` of arguments arrive in
    ``fragment``-byte deltas; returns the stream and the arguments."""
    rng = random.Random(seed)
    rows = []
    arguments = ""
    while len(arguments) < arg_bytes:
        rows.append({"path": f"src/m{len(rows)}.py", "line": rng.randint(1, 999), "text": " ".join(_words(rng, 8))})
        arguments = json.dumps({"edits": rows})
    head = (
        '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
        '"choices":[{"index":0,"delta":'
    )
    tail = ',"finish_reason":null}]}'
    first = '{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"edit","arguments":""}}]}'
    out = [f"data: {head}{first}{tail}\n\n"]
    for at in range(0, len(arguments), fragment):
        piece = json.dumps(arguments[at : at + fragment])
        out.append(f'data: {head}{{"tool_calls":[{{"index":0,"function":{{"arguments":{piece}}}}}]}}{tail}\n\n')
    out.append(f'data: {head}{{}},"finish_reason":"tool_calls"}}]}}\n\ndata: [DONE]\n\n')
    return "".join(out).encode(), arguments


if __name__ == "__main__":
    for name, data in (
        ("openai_chat", openai_chat()),
        ("anthropic_messages", anthropic_messages()),
        ("sse_events", sse_events()),
        ("long_tool_call", long_tool_call()[0]),
    ):
        print(f"{name:20} {len(data):>10,} bytes  {data.count(b'data:'):>6,} events")
