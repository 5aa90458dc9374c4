"""The benchmark workloads, generated from fixed seeds (same bytes on every run and machine):
the one copy that ``msgwire bench`` and the benches/ suite both use (benches/ is not installed,
so the generator lives in the package).

Streams, in the exact shapes of the recorded streams in tests/fixtures/wire (same fields, same
padding):

- ``openai_stream()``: a Chat Completions stream of 1,500 text deltas, then 3 parallel tool
  calls whose argument fragments interleave, a finish chunk, a usage chunk and ``[DONE]``
  (541 KB; the issue named ~440 KB for this shape, our chunks carry every recorded field);
- ``anthropic_stream()``: its Anthropic counterpart, with a signed thinking block first;
- ``sse_events(n, low, high)``: generic ``data:`` events of a given size, for framing alone;
- ``long_tool_call(arg_bytes, fragment)``: one tool call whose arguments stream in small
  fragments (the partial-arguments workload).

The session: ``session()`` is a ~1 MB, 900-message coding-agent session (user turns with
images and file references, assistant messages with signed thinking, text and tool calls,
tool results with timings and errors, system control messages, a model switch), from nothing
outside this file. Its msgspec baseline form is in ``forms.py``; its pydantic-ai form is the
shipped conversion, ``msgwire.interop.pydantic_ai.to_model_messages``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from functools import cache
from typing import Any, Literal

import msgspec

from ..codec import dumps
from ..types import (
    AssistantMessage,
    FileReferenceBlock,
    ImageBlock,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    UrlSource,
    Usage,
    UserMessage,
)

# --- streams -----------------------------------------------------------------------------------

STREAM_SEED = 20261121
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
def openai_stream(text_deltas: int = 1500, tool_calls: int = 3, seed: int = STREAM_SEED) -> bytes:
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
def anthropic_stream(
    text_deltas: int = 1500, thinking_deltas: int = 300, tool_calls: int = 3, seed: int = STREAM_SEED
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
def sse_events(count: int = 20_000, low: int = 100, high: int = 300, seed: int = STREAM_SEED) -> bytes:
    """Generic events whose total size (``data: `` line and blank line included) is low..high bytes."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        size = rng.randint(low, high) - len('data: {"i":,"t":""}\n\n') - len(str(i))
        out.append(b'data: {"i":%d,"t":"%s"}\n\n' % (i, ("x" * max(size, 0)).encode()))
    return b"".join(out)


@cache
def long_tool_call(arg_bytes: int = 64 * 1024, fragment: int = 20, seed: int = STREAM_SEED) -> tuple[bytes, str]:
    """An OpenAI stream with one tool call whose ``arg_bytes`` of arguments arrive in
    ``fragment``-byte deltas; returns the stream and the arguments."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
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


@cache
def chat_completion(size: int, seed: int = STREAM_SEED, *, arguments: int = 0) -> bytes:
    """A non-streamed Chat Completions body of about ``size`` bytes (never more, unless the
    fields alone are larger): every field the recorded body has (``tests/fixtures/responses/
    openai``), compact as an SDK's ``model_dump_json`` writes it, the text of ``hostile_text``
    and one tool call: a short ``read_file``, or with ``arguments`` an ``edit_file`` whose
    arguments are about that many bytes of code. Written as a Go server writes JSON (Ollama's
    ``/v1``, most gateways): ``<``, ``>`` and ``&`` as ``\\u003c`` escapes (``go_escaped``)."""
    rng = random.Random(seed)
    if arguments:
        function = {"name": "edit_file", "arguments": edit_arguments(rng, arguments)}
    else:
        function = {
            "name": "read_file",
            "arguments": json.dumps({"path": _path(rng), "start_line": 10, "end_line": 80}),
        }
    call = {"id": f"call_{_b62(rng, 24)}", "type": "function", "function": function}

    def body(text: str) -> bytes:
        message = {"role": "assistant", "content": text, "refusal": None, "annotations": [], "tool_calls": [call]}
        usage = {
            "prompt_tokens": 1843,
            "completion_tokens": 1 + len(text) // 4,
            "total_tokens": 1844 + len(text) // 4,
            "prompt_tokens_details": {"cached_tokens": 1536, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        whole = {
            "id": "chatcmpl-CMKAuuvC6E26nL6HLZzTrysEvC8Ln",
            "object": "chat.completion",
            "created": 1759436804,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_cbf1785567",
        }
        return go_escaped(json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode())

    text = hostile_text(rng, size)
    while len(text) > 1 and len(encoded := body(text)) > size:
        text = text[: len(text) - max(1, (len(encoded) - size) // 2)]
    return body(text)


def go_escaped(body: bytes) -> bytes:
    """``body`` as Go's ``encoding/json`` writes it: ``<``, ``>`` and ``&`` (which JSON has only
    inside strings) as ``\\u003c``, ``\\u003e``, ``\\u0026``. The same JSON, with escapes a reader
    must decode."""
    return body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def hostile_text(rng: random.Random, n_chars: int) -> str:
    """Markdown as a model writes it: prose with non-ASCII in most paragraphs (accents, Cyrillic,
    CJK, emoji, typographic quotes), inline code with quotes, and fenced code blocks (quotes,
    backslashes, tabs, newlines, ``->`` and ``<``): every kind of JSON escape, and text that is
    not ASCII (from its first sentence on, so that a short body has some too)."""
    out: list[str] = []
    size = 0
    while size < n_chars:
        if out and rng.random() < 0.25:
            part = f"```python\n{_code(rng, rng.randint(3, 12))}\n```\n\n"
        else:
            words = [rng.choice(_VOCABULARY) for _ in range(rng.randint(6, 18))]
            for _ in range(rng.randint(0 if out else 1, 3)):
                words[rng.randrange(len(words))] = rng.choice(_HOSTILE_RARE)
            if rng.random() < 0.3:
                words[rng.randrange(len(words))] = f'`{rng.choice(_IDENT)}["{rng.choice(_IDENT)}"]`'
            if rng.random() < 0.1:
                words[rng.randrange(len(words))] = "`a <= b && c\\t`"
            part = " ".join(words).capitalize() + rng.choice(".....?!:") + rng.choice(("  ", " ", "\n\n", "\n- "))
        out.append(part)
        size += len(part)
    return "".join(out)


def edit_arguments(rng: random.Random, n_bytes: int) -> str:
    """The JSON arguments of an ``edit_file`` call of about ``n_bytes``: a path and code."""
    return json.dumps({"path": _path(rng), "content": _long_code(rng, n_bytes)}, ensure_ascii=False)


def _long_code(rng: random.Random, n_bytes: int) -> str:
    """About ``n_bytes`` of code (UTF-8), as the ``content`` of an edit: tabs for indentation,
    strings with quotes and backslashes, comments with non-ASCII."""
    lines: list[str] = []
    size = 0
    while size < n_bytes:
        for line in _code(rng, 20).replace("    ", "\t").split("\n"):
            if rng.random() < 0.15:
                line += f"  # {rng.choice(_HOSTILE_RARE)} {rng.choice(_VOCABULARY)}"
            lines.append(line)
            size += len(line.encode()) + 1
    return "\n".join(lines)


# --- the session -------------------------------------------------------------------------------

SESSION_SEED = 20250601
N_MESSAGES = 900
START = dt.datetime(2025, 6, 2, 9, 0, 0, tzinfo=dt.UTC)


_VOCABULARY_TEXT = (
    "the a to of and in is that for it with as on this be are from by not or at we can if "
    "function value request response session message parser token stream buffer cache index "
    "handler config server client error retry timeout schema field record query result update "
    "module import return class method test fixture assert async await thread worker queue "
    "database table column migration version release build deploy pipeline branch commit merge "
    "latency throughput memory allocation decode encode serialize payload header offset length "
    "user assistant tool call argument output input model provider usage limit window context "
    "should would could must will might need want check make sure fix add remove rename move "
    "first then next finally because however instead also only still already again here there"
)
_VOCABULARY = tuple(_VOCABULARY_TEXT.split())
_RARE = ("naïve", "café", "→", "—", "✓", "über", "déjà", "Ω", "日本語", "“quoted”", "…", "½")
_HOSTILE_RARE = (
    *_RARE,
    "Größe",
    "résumé",
    "señal",
    "Привет",
    "παράμετρος",
    "東京",
    "데이터",
    "🙂",
    "🚀",
    "≤",
    "«ok»",
    "it\u2019s",
)
_IDENT_TEXT = (
    "session messages parser buffer config handler result payload offset cursor items rows "
    "client token stream index cache schema record worker queue response request timeout"
)
_IDENT = tuple(_IDENT_TEXT.split())
_DIRS = ("src/acme", "src/acme/api", "src/acme/db", "src/acme/workers", "tests", "tests/api", "scripts", "docs")
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _prose(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < n_chars:
        words = [rng.choice(_VOCABULARY) for _ in range(rng.randint(6, 18))]
        if rng.random() < 0.06:  # about 1 prose string in 4 ends up not pure ASCII
            words[rng.randrange(len(words))] = rng.choice(_RARE)
        if rng.random() < 0.2:
            words[rng.randrange(len(words))] = f"`{rng.choice(_IDENT)}_{rng.choice(_IDENT)}()`"
        sentence = " ".join(words).capitalize() + rng.choice(".....?!:")
        out.append(sentence)
        size += len(sentence) + 1
        if rng.random() < 0.12:
            out.append("\n\n")
    return " ".join(out).replace(" \n\n ", "\n\n")


def _code(rng: random.Random, n_lines: int) -> str:
    lines: list[str] = []
    indent = 0
    for _ in range(n_lines):
        a, b, c = rng.choice(_IDENT), rng.choice(_IDENT), rng.choice(_VOCABULARY)
        kind = rng.random()
        if kind < 0.12:
            line, nxt = f"def {a}_{b}(self, {c}_{a}: str, *, timeout: float = 30.0) -> dict[str, Any]:", indent + 1
        elif kind < 0.22:
            word = rng.choice(_VOCABULARY)
            quoted = rng.choice(_RARE if rng.random() < 0.05 else _IDENT)
            line, nxt = f'if not {a}.{b}:  # {c} {word} "{quoted}"', indent + 1
        elif kind < 0.35:
            line, nxt = f'raise ValueError(f"bad {a} {{{b}!r}}: expected \\"{c}\\"\\n")', max(indent - 1, 0)
        elif kind < 0.5:
            line, nxt = f"return {{'{a}': self.{b}, '{c}': [{rng.randint(0, 9999)}, None, True]}}", max(indent - 1, 0)
        elif kind < 0.6:
            line, nxt = "", indent
        else:
            line, nxt = f"{a}_{b} = self._{c}({a}, {b}=[x for x in {c} if x], limit={rng.randint(1, 512)})", indent
        lines.append("    " * min(indent, 3) + line if line else "")
        indent = min(nxt, 3)
    return "\n".join(lines)


def _path(rng: random.Random) -> str:
    ext = rng.choice((".py", ".py", ".py", ".toml", ".md", ".json"))
    return f"{rng.choice(_DIRS)}/{rng.choice(_IDENT)}_{rng.choice(_IDENT)}{ext}"


def _b62(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_B62) for _ in range(n))


def _uuid7(rng: random.Random, ts: dt.datetime) -> str:
    ms = int(ts.timestamp() * 1000)
    value = ms << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# --- tools: (arguments, output, is_error) ------------------------------------------------------


def _tool(rng: random.Random, name: str) -> tuple[dict[str, Any], str, bool]:
    path = _path(rng)
    fail = rng.random() < 0.09
    if name == "read_file":
        start = rng.randint(1, 400)
        args: dict[str, Any] = {"path": path}
        if rng.random() < 0.5:
            args |= {"offset": start, "limit": rng.choice((50, 100, 200))}
        if fail:
            return args, f"Error: file not found: {path}", True
        body = _code(rng, rng.randint(6, 30)).split("\n")
        return args, "\n".join(f"{start + i:6}\t{line}" for i, line in enumerate(body)), False
    if name == "grep":
        args = {"pattern": f"{rng.choice(_IDENT)}_{rng.choice(_IDENT)}", "path": rng.choice(_DIRS), "-n": True}
        hits = [f"{_path(rng)}:{rng.randint(1, 900)}:{_code(rng, 1).strip()}" for _ in range(rng.randint(0, 14))]
        return args, "\n".join(hits) or "No matches found", False
    if name == "run_shell":
        target = f"tests/test_{rng.choice(_IDENT)}.py"
        args = {"command": f"cd /home/dev/acme && python -m pytest -q {target} -x", "timeout": 120}
        if fail:
            trace = _code(rng, rng.randint(6, 20))
            return args, f"FAILED {target}::test_{rng.choice(_IDENT)} - AssertionError\n{trace}\nexit code 1", True
        dots = "".join(rng.choice("......s") for _ in range(rng.randint(5, 80)))
        return args, f"{dots}\n{len(dots)} passed in {rng.uniform(0.1, 9):.2f}s", False
    if name == "write_file":
        content = _code(rng, rng.randint(6, 30))
        return {"path": path, "content": content}, f"Wrote {len(content.encode())} bytes to {path}", False
    if name == "edit_file":
        args = {"path": path, "old_string": _code(rng, rng.randint(1, 6)), "new_string": _code(rng, rng.randint(1, 8))}
        if fail:
            return args, f"Error: old_string not found in {path}; read the file again before editing", True
        return args, f"Applied 1 edit to {path}", False
    if name == "list_dir":
        names = sorted({f"{rng.choice(_IDENT)}_{rng.choice(_IDENT)}.py" for _ in range(rng.randint(3, 30))})
        return {"path": rng.choice(_DIRS)}, "\n".join(names), False
    url = f"https://docs.example.com/{rng.choice(_IDENT)}/{rng.choice(_IDENT)}.html"
    if fail:
        return {"url": url}, f"Error: HTTP 404 fetching {url}", True
    return {"url": url, "max_length": 8000}, _prose(rng, rng.randint(200, 1200)), False


_TOOLS = (
    ("read_file", 30),
    ("grep", 14),
    ("run_shell", 16),
    ("edit_file", 16),
    ("write_file", 6),
    ("list_dir", 8),
    ("web_fetch", 6),
)
_MODELS = (
    ("claude-sonnet-4-5-20250929", "anthropic"),
    ("gpt-5-2025-08-07", "openai"),
)


# --- the msgwire session ----------------------------------------------------------------------


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ts = START
        self.messages: list[Any] = []
        self.context_tokens = 3000
        self.model = _MODELS[0]

    def tick(self, lo: float, hi: float) -> dt.datetime:
        self.ts += dt.timedelta(seconds=round(self.rng.uniform(lo, hi), 6))
        return self.ts

    def add(self, message: Any, size: int) -> None:
        self.messages.append(message)
        self.context_tokens += size // 4

    def user(self) -> None:
        rng = self.rng
        text = _prose(rng, rng.choice((60, 150, 400, 900)))
        blocks: list[Any] = [TextBlock(text=text)]
        roll = rng.random()
        if roll < 0.12:
            url = f"https://files.example.com/uploads/{_b62(rng, 16)}/screenshot-{rng.randint(1, 99)}.png"
            blocks.append(ImageBlock(source=UrlSource(url=url)))
        elif roll < 0.3:
            start = rng.randint(1, 300)
            lines = rng.randint(5, 40)
            blocks.append(
                FileReferenceBlock(
                    path=_path(rng),
                    start_line=start,
                    end_line=start + lines - 1,
                    resolved_content=_code(rng, lines),
                    status="resolved",
                )
            )
        ts = self.tick(10, 400)
        self.add(UserMessage(id=_uuid7(rng, ts), timestamp=ts, content=blocks), len(text))

    def assistant(self, calls: list[tuple[str, str]], stop: str) -> AssistantMessage:
        """An assistant message: thinking (signed), text, then one tool call per (name, arguments)."""
        rng = self.rng
        model, provider = self.model
        thinking = _prose(rng, rng.randint(60, 500))
        signature = base64.b64encode(rng.randbytes(rng.randint(90, 240))).decode()
        text = _prose(rng, rng.randint(30, 160) if calls else rng.randint(150, 1200))
        blocks: list[Any] = [
            ThinkingBlock(thinking=thinking, signature=signature),
            TextBlock(text=text),
        ]
        for name, arguments in calls:
            call_id = f"toolu_01{_b62(rng, 22)}" if provider == "anthropic" else f"call_{_b62(rng, 24)}"
            approval: Literal["approved", "pending"] = "approved" if name in ("run_shell", "write_file") else "pending"
            blocks.append(ToolCallBlock(id=call_id, name=name, arguments=arguments, approval=approval))
        ts = self.tick(1.5, 40)
        usage = Usage(
            input_tokens=self.context_tokens,
            output_tokens=(len(thinking) + len(text) + sum(len(a) for _, a in calls)) // 4,
            cache_read_tokens=self.context_tokens - rng.randint(200, 1500) if rng.random() < 0.9 else 0,
            cache_write_tokens=rng.randint(200, 1500),
            reasoning_tokens=len(thinking) // 4,
        )
        response_id = f"msg_01{_b62(rng, 22)}" if provider == "anthropic" else f"resp_{rng.getrandbits(192):048x}"
        message = AssistantMessage(
            id=_uuid7(rng, ts),
            timestamp=ts,
            content=blocks,
            stop_reason=stop,  # type: ignore[arg-type]
            usage=usage,
            model=model,
            provider=provider,
            response_id=response_id,
        )
        self.add(message, len(dumps(message)))
        return message

    def step(self, n_calls: int) -> None:
        """One assistant message with ``n_calls`` tool calls, then their results."""
        rng = self.rng
        names = rng.choices([t for t, _ in _TOOLS], [w for _, w in _TOOLS], k=n_calls)
        runs = [_tool(rng, name) for name in names]
        message = self.assistant(
            [(n, msgspec.json.encode(args).decode()) for n, (args, _, _) in zip(names, runs, strict=True)], "tool_use"
        )
        for call, (_, output, failed) in zip(message.tool_calls, runs, strict=True):
            started = self.tick(0.05, 1.0)
            duration = round(rng.lognormvariate(5.5, 1.6), 3)
            self.ts += dt.timedelta(milliseconds=duration)
            result = ToolResultMessage(
                id=_uuid7(rng, self.ts),
                timestamp=self.ts,
                tool_call_id=call.id,
                tool_name=call.name,
                content=[TextBlock(text=output)],
                is_error=failed,
                status="error" if failed else "success",
                error=ToolError(message=output.split("\n", 1)[0][:200]) if failed else None,
                started_at=started,
                duration_ms=duration,
            )
            self.add(result, len(output))

    def final(self) -> None:
        self.assistant([], "end_turn" if self.rng.random() < 0.95 else "length")

    def control(self) -> None:
        rng = self.rng
        kind = rng.choice(("mode_change", "model_switch", "compaction", "branch_switch"))
        if kind == "mode_change":
            params: dict[str, Any] = (
                {"old": "plan", "new": "act"} if rng.random() < 0.5 else {"old": "act", "new": "plan"}
            )
        elif kind == "model_switch":
            old = self.model
            self.model = _MODELS[1] if old is _MODELS[0] else _MODELS[0]
            params = {"old": old[0], "new": self.model[0], "reason": "user request"}
        elif kind == "compaction":
            params = {"dropped_messages": rng.randint(20, 120), "tokens_before": self.context_tokens}
            self.context_tokens //= 3
        else:
            params = {"branch": f"fix-{rng.choice(_IDENT)}", "parent_message": self.messages[-1].id}
        ts = self.tick(0.5, 5)
        self.add(SystemControlMessage(id=_uuid7(rng, ts), timestamp=ts, control=kind, params=params), 60)


def session(n_messages: int = N_MESSAGES, seed: int = SESSION_SEED) -> Session:
    g = _Gen(seed)
    rng = g.rng
    while (left := n_messages - len(g.messages)) > 0:
        if left == 1 or (len(g.messages) > 10 and rng.random() < 0.15):
            g.control()
            continue
        g.user()
        left -= 1
        while left > 1 and rng.random() < 0.8:
            n_calls = min(rng.choice((1, 1, 1, 2, 2, 3)), left - 2)
            if n_calls < 1:
                break
            g.step(n_calls)
            left -= 1 + n_calls
        if left >= 1:
            g.final()
    created = START - dt.timedelta(seconds=3)
    return Session(
        id=_uuid7(rng, created),
        system_prompt=_prose(rng, 3000),
        created_at=created,
        updated_at=g.ts,
        metadata={"agent": "coder", "cwd": "/home/dev/acme", "tags": ["bench", "synthetic"], "schema": 1},
        messages=g.messages,
    )
