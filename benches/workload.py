"""The benchmark workload: one realistic agent session in three equivalent forms.

``build()`` generates, from a fixed seed and nothing outside this file, a ~1 MB, 900-message
coding-agent session and returns it as

- ``session``:  a ``msgwire.Session`` (the primary form; the other two are converted from it),
- ``pydantic_ai``: the same conversation as a pydantic-ai message list (``ModelRequest`` /
  ``ModelResponse``), for ``ModelMessagesTypeAdapter``,
- ``baseline``: the same conversation as hand-written msgspec tagged Structs, what a skilled
  msgspec user would write without msgwire (see ``Baseline*`` below).

What the pydantic-ai form leaves out, because pydantic-ai has no place for it: the
``system_control`` messages, the session envelope (id, created/updated, metadata), the
per-message ids, the tool results' ``started_at`` / ``duration_ms`` and structured ``error``
(the error text stays in the content, with ``outcome="failed"``). Everything else maps 1:1;
consecutive tool results become the parts of one ``ModelRequest``, as pydantic-ai makes them.

The baseline mirrors msgwire's JSON field for field, so ``msgspec.json.encode(baseline)`` is
byte-for-byte ``msgwire.dumps(session)`` (``check()`` asserts it): both sides of that ratio
parse and write exactly the same document.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import random
from dataclasses import dataclass
from typing import Any, Literal, Union

import msgspec
from pydantic_ai import messages as pa

import msgwire

SEED = 20250601
N_MESSAGES = 900
START = dt.datetime(2025, 6, 2, 9, 0, 0, tzinfo=dt.UTC)

# --- the plain msgspec baseline -------------------------------------------------------------
# Options used, all of them public msgspec features a competent user would reach for:
# tagged unions (tag_field="type"), frozen=True, kw_only=True, omit_defaults=True, gc=False on
# every message / block / value struct; the Session envelope is a plain mutable Struct (like
# msgwire's). Fields: only those the workload uses, with msgwire's names, order and types
# (Literal enums, datetime timestamps, str ids, a nested usage Struct).


class _BTagged(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False, tag_field="type"):
    pass


class _BPlain(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    pass


class BaselineText(_BTagged, tag="text", kw_only=True):
    text: str


class BaselineThinking(_BTagged, tag="thinking", kw_only=True):
    thinking: str = ""
    signature: str | None = None


class BaselineUrlSource(_BTagged, tag="url", kw_only=True):
    url: str


class BaselineImage(_BTagged, tag="image", kw_only=True):
    source: BaselineUrlSource


class BaselineFileReference(_BTagged, tag="file_reference", kw_only=True):
    path: str
    start_line: int | None = None
    end_line: int | None = None
    resolved_content: str | None = None
    status: Literal["pending", "resolved", "error"] = "pending"


class BaselineToolCall(_BTagged, tag="tool_call", kw_only=True):
    id: str
    name: str
    arguments: str = "{}"
    approval: Literal["pending", "approved", "denied"] = "pending"


BaselineBlock = Union[BaselineText, BaselineThinking, BaselineImage, BaselineFileReference, BaselineToolCall]


class BaselineUsage(_BPlain, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class BaselineToolError(_BPlain, kw_only=True):
    message: str
    recoverable: bool = True


class BaselineUser(_BTagged, tag="user", kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]


class BaselineAssistant(_BTagged, tag="assistant", kw_only=True):
    id: str
    timestamp: dt.datetime
    content: list[BaselineBlock]
    stop_reason: Literal["end_turn", "length", "tool_use"] | None = None
    usage: BaselineUsage | None = None
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None


class BaselineToolResult(_BTagged, tag="tool_result", kw_only=True):
    id: str
    timestamp: dt.datetime
    tool_call_id: str
    tool_name: str | None = None
    content: list[BaselineBlock]
    is_error: bool = False
    status: Literal["success", "error", "denied"] = "success"
    error: BaselineToolError | None = None
    started_at: dt.datetime | None = None
    duration_ms: float | None = None


class BaselineSystemControl(_BTagged, tag="system_control", kw_only=True):
    id: str
    timestamp: dt.datetime
    control: str
    params: dict[str, Any] = {}


BaselineMessage = Union[BaselineUser, BaselineAssistant, BaselineToolResult, BaselineSystemControl]


class BaselineSession(msgspec.Struct, kw_only=True):
    version: int = 1
    id: str
    system_prompt: str | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    metadata: dict[str, Any] = {}
    messages: list[BaselineMessage] = []


# --- text generators ------------------------------------------------------------------------

_WORDS_TEXT = (
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
_WORDS = tuple(_WORDS_TEXT.split())
_RARE = ("naïve", "café", "→", "—", "✓", "über", "déjà", "Ω", "日本語", "“quoted”", "…", "½")
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
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
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
        a, b, c = rng.choice(_IDENT), rng.choice(_IDENT), rng.choice(_WORDS)
        kind = rng.random()
        if kind < 0.12:
            line, nxt = f"def {a}_{b}(self, {c}_{a}: str, *, timeout: float = 30.0) -> dict[str, Any]:", indent + 1
        elif kind < 0.22:
            line, nxt = (
                f'if not {a}.{b}:  # {c} {rng.choice(_WORDS)} "{rng.choice(_RARE if rng.random() < 0.05 else _IDENT)}"',
                indent + 1,
            )
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
        blocks: list[Any] = [msgwire.TextBlock(text=text)]
        roll = rng.random()
        if roll < 0.12:
            url = f"https://files.example.com/uploads/{_b62(rng, 16)}/screenshot-{rng.randint(1, 99)}.png"
            blocks.append(msgwire.ImageBlock(source=msgwire.UrlSource(url=url)))
        elif roll < 0.3:
            start = rng.randint(1, 300)
            lines = rng.randint(5, 40)
            blocks.append(
                msgwire.FileReferenceBlock(
                    path=_path(rng),
                    start_line=start,
                    end_line=start + lines - 1,
                    resolved_content=_code(rng, lines),
                    status="resolved",
                )
            )
        ts = self.tick(10, 400)
        self.add(msgwire.UserMessage(id=_uuid7(rng, ts), timestamp=ts, content=blocks), len(text))

    def assistant(self, calls: list[tuple[str, str]], stop: str) -> msgwire.AssistantMessage:
        """An assistant message: thinking (signed), text, then one tool call per (name, arguments)."""
        rng = self.rng
        model, provider = self.model
        thinking = _prose(rng, rng.randint(60, 500))
        signature = base64.b64encode(rng.randbytes(rng.randint(90, 240))).decode()
        text = _prose(rng, rng.randint(30, 160) if calls else rng.randint(150, 1200))
        blocks: list[Any] = [
            msgwire.ThinkingBlock(thinking=thinking, signature=signature),
            msgwire.TextBlock(text=text),
        ]
        for name, arguments in calls:
            call_id = f"toolu_01{_b62(rng, 22)}" if provider == "anthropic" else f"call_{_b62(rng, 24)}"
            approval = "approved" if name in ("run_shell", "write_file") else "pending"
            blocks.append(msgwire.ToolCallBlock(id=call_id, name=name, arguments=arguments, approval=approval))
        ts = self.tick(1.5, 40)
        usage = msgwire.Usage(
            input_tokens=self.context_tokens,
            output_tokens=(len(thinking) + len(text) + sum(len(a) for _, a in calls)) // 4,
            cache_read_tokens=self.context_tokens - rng.randint(200, 1500) if rng.random() < 0.9 else 0,
            cache_write_tokens=rng.randint(200, 1500),
            reasoning_tokens=len(thinking) // 4,
        )
        response_id = f"msg_01{_b62(rng, 22)}" if provider == "anthropic" else f"resp_{rng.getrandbits(192):048x}"
        message = msgwire.AssistantMessage(
            id=_uuid7(rng, ts),
            timestamp=ts,
            content=blocks,
            stop_reason=stop,  # type: ignore[arg-type]
            usage=usage,
            model=model,
            provider=provider,
            response_id=response_id,
        )
        self.add(message, len(msgwire.dumps(message)))
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
            result = msgwire.ToolResultMessage(
                id=_uuid7(rng, self.ts),
                timestamp=self.ts,
                tool_call_id=call.id,
                tool_name=call.name,
                content=[msgwire.TextBlock(text=output)],
                is_error=failed,
                status="error" if failed else "success",
                error=msgwire.ToolError(message=output.split("\n", 1)[0][:200]) if failed else None,
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
        self.add(msgwire.SystemControlMessage(id=_uuid7(rng, ts), timestamp=ts, control=kind, params=params), 60)


def _session(seed: int = SEED, n_messages: int = N_MESSAGES) -> msgwire.Session:
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
    return msgwire.Session(
        id=_uuid7(rng, created),
        system_prompt=_prose(rng, 3000),
        created_at=created,
        updated_at=g.ts,
        metadata={"agent": "coder", "cwd": "/home/dev/acme", "tags": ["bench", "synthetic"], "schema": 1},
        messages=g.messages,
    )


# --- the pydantic-ai form ---------------------------------------------------------------------

_FINISH = {"end_turn": "stop", "tool_use": "tool_call", "length": "length"}


def _pa_user_content(message: msgwire.UserMessage) -> Any:
    blocks = message.content
    if len(blocks) == 1 and type(blocks[0]) is msgwire.TextBlock:
        return blocks[0].text
    parts: list[Any] = []
    for b in blocks:
        if type(b) is msgwire.TextBlock:
            parts.append(b.text)
        elif type(b) is msgwire.ImageBlock:
            parts.append(pa.ImageUrl(url=b.source.url))  # type: ignore[union-attr]
        elif type(b) is msgwire.FileReferenceBlock:
            meta = {"path": b.path, "start_line": b.start_line, "end_line": b.end_line}
            parts.append(pa.TextContent(content=b.resolved_content or "", metadata=meta))
        else:
            raise TypeError(type(b))
    return parts


def _pa_response(m: msgwire.AssistantMessage) -> pa.ModelResponse:
    parts: list[Any] = []
    for b in m.content:
        if type(b) is msgwire.ThinkingBlock:
            parts.append(pa.ThinkingPart(content=b.thinking, signature=b.signature, provider_name=m.provider))
        elif type(b) is msgwire.TextBlock:
            parts.append(pa.TextPart(content=b.text))
        elif type(b) is msgwire.ToolCallBlock:
            parts.append(pa.ToolCallPart(tool_name=b.name, args=b.arguments, tool_call_id=b.id))
        else:
            raise TypeError(type(b))
    u = m.usage or msgwire.Usage()
    return pa.ModelResponse(
        parts=parts,
        usage=pa.RequestUsage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens,
            output_reasoning_tokens=u.reasoning_tokens,
        ),
        model_name=m.model,
        timestamp=m.timestamp,
        provider_name=m.provider,
        provider_response_id=m.response_id,
        finish_reason=_FINISH[m.stop_reason or "end_turn"],  # type: ignore[arg-type]
    )


def to_pydantic_ai(session: msgwire.Session) -> list[pa.ModelMessage]:
    out: list[pa.ModelMessage] = []
    pending: list[Any] = []  # parts of the request being built
    if session.system_prompt is not None:
        pending.append(pa.SystemPromptPart(content=session.system_prompt, timestamp=session.created_at))

    def flush() -> None:
        if pending:
            out.append(pa.ModelRequest(parts=list(pending), timestamp=pending[-1].timestamp))
            pending.clear()

    for m in session.messages:
        if type(m) is msgwire.UserMessage:
            if any(type(p) is pa.ToolReturnPart for p in pending):
                flush()
            pending.append(pa.UserPromptPart(content=_pa_user_content(m), timestamp=m.timestamp))
        elif type(m) is msgwire.ToolResultMessage:
            pending.append(
                pa.ToolReturnPart(
                    tool_name=m.tool_name or "",
                    content="".join(b.text for b in m.content if type(b) is msgwire.TextBlock),
                    tool_call_id=m.tool_call_id,
                    timestamp=m.timestamp,
                    outcome="failed" if m.is_error else "success",
                )
            )
        elif type(m) is msgwire.AssistantMessage:
            flush()
            out.append(_pa_response(m))
        # system_control: no pydantic-ai equivalent, left out
    flush()
    return out


# --- the baseline form --------------------------------------------------------------------------


def _bl_block(b: Any) -> Any:
    if type(b) is msgwire.TextBlock:
        return BaselineText(text=b.text)
    if type(b) is msgwire.ThinkingBlock:
        return BaselineThinking(thinking=b.thinking, signature=b.signature)
    if type(b) is msgwire.ImageBlock:
        return BaselineImage(source=BaselineUrlSource(url=b.source.url))
    if type(b) is msgwire.FileReferenceBlock:
        return BaselineFileReference(
            path=b.path,
            start_line=b.start_line,
            end_line=b.end_line,
            resolved_content=b.resolved_content,
            status=b.status,
        )
    if type(b) is msgwire.ToolCallBlock:
        return BaselineToolCall(id=b.id, name=b.name, arguments=b.arguments, approval=b.approval)
    raise TypeError(type(b))


def _bl_message(m: Any) -> Any:
    common = {"id": m.id, "timestamp": m.timestamp}
    if type(m) is msgwire.UserMessage:
        return BaselineUser(**common, content=[_bl_block(b) for b in m.content])
    if type(m) is msgwire.AssistantMessage:
        u = m.usage
        return BaselineAssistant(
            **common,
            content=[_bl_block(b) for b in m.content],
            stop_reason=m.stop_reason,  # type: ignore[arg-type]
            usage=None if u is None else BaselineUsage(**msgspec.structs.asdict(u)),
            model=m.model,
            provider=m.provider,
            response_id=m.response_id,
        )
    if type(m) is msgwire.ToolResultMessage:
        return BaselineToolResult(
            **common,
            tool_call_id=m.tool_call_id,
            tool_name=m.tool_name,
            content=[_bl_block(b) for b in m.content],
            is_error=m.is_error,
            status=m.status,
            error=None if m.error is None else BaselineToolError(message=m.error.message),
            started_at=m.started_at,
            duration_ms=m.duration_ms,
        )
    if type(m) is msgwire.SystemControlMessage:
        return BaselineSystemControl(**common, control=m.control, params=dict(m.params))
    raise TypeError(type(m))


def to_baseline(session: msgwire.Session) -> BaselineSession:
    return BaselineSession(
        version=session.version,
        id=session.id,
        system_prompt=session.system_prompt,
        created_at=session.created_at,
        updated_at=session.updated_at,
        metadata=dict(session.metadata),
        messages=[_bl_message(m) for m in session.messages],
    )


# --- the three forms together -------------------------------------------------------------------


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
BASELINE_ENCODER = msgspec.json.Encoder()
BASELINE_DECODER = msgspec.json.Decoder(BaselineSession)


@functools.cache
def build(seed: int = SEED, n_messages: int = N_MESSAGES) -> Workload:
    session = _session(seed, n_messages)
    pydantic_ai = to_pydantic_ai(session)
    baseline = to_baseline(session)
    return Workload(
        session=session,
        pydantic_ai=pydantic_ai,
        baseline=baseline,
        msgwire_json=msgwire.dumps(session),
        pydantic_ai_json=PYDANTIC_AI_ADAPTER.dump_json(pydantic_ai),
        baseline_json=BASELINE_ENCODER.encode(baseline),
    )


if __name__ == "__main__":  # python benches/workload.py: print the workload's figures
    import json

    print(json.dumps(build().describe(), indent=2))
