"""Hypothesis strategies for every public type of canonical schema v1.

Values stay inside what the wire can carry, as both sides (msgspec and the Rust core) read it:
timestamps timezone-aware UTC, floats finite, line numbers in the i64 range, token counts in
the u64 range, dict keys strings. Text is deliberately hostile: non-ASCII, emoji, control
characters, quotes and backslashes, U+2028/U+2029 (valid in JSON, not in JavaScript).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import msgspec
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from msgwire import (
    AssistantMessage,
    Base64Source,
    CacheControl,
    Citation,
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    PathSource,
    ServerToolCallBlock,
    ServerToolResultBlock,
    Session,
    SystemControlMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    UrlSource,
    Usage,
    UserMessage,
)
from msgwire.codec import BLOCK_CLASSES, MESSAGE_CLASSES

I64 = (-(2**63), 2**63 - 1)
U64_MAX = 2**64 - 1

# Characters a plain `st.text()` rarely draws but that break naive encoders.
_TRICKY = "\x00\x01\x08\t\n\x0b\x0c\r\x1b\x1f\x7f\x80\x85\xa0\u2028\u2029\ufeff\ufffd\"\\/<>&'é中ß😀👍🏽🇫🇷\U0010ffff"

chars = st.one_of(st.characters(codec="utf-8"), st.sampled_from(_TRICKY))
texts = st.text(chars, max_size=40)
nonempty_texts = st.text(chars, min_size=1, max_size=40)
ids = st.one_of(st.uuids().map(str), nonempty_texts)
timestamps = st.datetimes(
    min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2200, 1, 1), timezones=st.just(dt.UTC)
)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
line_numbers = st.integers(*I64)
token_counts = st.integers(0, U64_MAX)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


# --- arbitrary JSON (metadata, params, tool arguments, unknown objects) -----------------------

json_scalars = st.none() | st.booleans() | st.integers(*I64) | finite_floats | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=5)

# Tool arguments: whatever the model streamed. Mostly JSON text in odd spacing, sometimes broken.
_arguments_json = json_values.map(lambda v: msgspec.json.encode(v).decode())
_arguments_spaced = json_objects.map(lambda v: msgspec.json.format(msgspec.json.encode(v), indent=2).decode())
arguments_texts = st.one_of(_arguments_json, _arguments_spaced, st.just(""), st.just("{}"), texts)

_whitespace = st.text(st.sampled_from(" \t\n\r"), max_size=3)


@st.composite
def raw_objects(draw: st.DrawFn, tag: str) -> bytes:
    """A JSON object with `"type": tag`, its keys in any order and odd whitespace between
    tokens: the exact bytes an UnknownMessage / UnknownBlock must write back."""
    extra = draw(st.dictionaries(texts.filter(lambda k: k != "type"), json_values, max_size=4))
    items = [("type", tag), *extra.items()]
    order = draw(st.permutations(range(len(items))))
    ws = lambda: draw(_whitespace)  # noqa: E731 - a short local helper
    parts = [
        ws() + msgspec.json.encode(items[i][0]).decode() + ws() + ":" + ws() + msgspec.json.encode(items[i][1]).decode()
        for i in order
    ]
    return ("{" + ",".join(p + ws() for p in parts) + "}").encode()


def unknown_tags(known: Any) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(["hologram", "smell", "video", "x-custom"]), texts).filter(
        lambda t: t not in known
    )


unknown_blocks = unknown_tags(BLOCK_CLASSES).flatmap(lambda t: raw_objects(t).map(lambda raw: UnknownBlock(raw, t)))
unknown_messages = unknown_tags(MESSAGE_CLASSES).flatmap(
    lambda t: raw_objects(t).map(lambda raw: UnknownMessage(raw, t))
)

# --- content blocks ---------------------------------------------------------------------------

cache_controls = st.builds(CacheControl, type=st.just("ephemeral"), ttl=optional(st.sampled_from(["5m", "1h"])))
# A provider's object kept whole (a citation's, a server tool block's): as each provider writes
# it where msgwire writes it back to that provider (the SDKs' types check those bodies), else any
# object, in odd spacing.
_hostile_raw = texts.flatmap(raw_objects).map(msgspec.Raw)
indexes = st.integers(0, 2**63 - 1)


def _raw(value: dict[str, Any]) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(value))


_web_search_citations = st.fixed_dictionaries(
    {
        "type": st.just("web_search_result_location"),
        "cited_text": texts,
        "url": texts,
        "title": optional(texts),
        "encrypted_index": texts,
    }
)


@st.composite
def citations(draw: st.DrawFn) -> Citation:
    kind = draw(st.sampled_from(["web_search_result_location", "url_citation", "grounding", "other"]))
    if kind == "web_search_result_location":
        raw = draw(_web_search_citations)
        return Citation(kind=kind, url=raw["url"], title=raw["title"], cited_text=raw["cited_text"], raw=_raw(raw))
    return Citation(
        kind=draw(texts) if kind == "other" else kind,
        url=draw(optional(texts)),
        title=draw(optional(texts)),
        cited_text=draw(optional(texts)),
        start_index=draw(optional(indexes)),
        end_index=draw(optional(indexes)),
        raw=draw(st.just(msgspec.UNSET) | _hostile_raw) if kind == "other" else msgspec.UNSET,
    )


text_blocks = st.builds(
    TextBlock,
    text=texts,
    citations=st.lists(citations(), max_size=2),
    item_id=optional(nonempty_texts),
    cache_control=optional(cache_controls),
)
thinking_blocks = st.builds(
    ThinkingBlock, thinking=texts, signature=optional(texts), redacted=optional(texts), item_id=optional(nonempty_texts)
)
_server_names = st.sampled_from(["web_search", "web_fetch", "code_execution"])


@st.composite
def server_tool_call_blocks(draw: st.DrawFn) -> ServerToolCallBlock:
    call_id, dialect = draw(ids), draw(st.sampled_from(["anthropic", "openai-responses", "gemini", "other"]))
    if dialect == "anthropic":
        name, arguments = draw(_server_names), draw(json_objects)
        raw = {"type": "server_tool_use", "id": call_id, "name": name, "input": arguments}
        kind = "server_tool_use"
    elif dialect == "openai-responses":
        name, arguments = "web_search", {"type": "search", "query": draw(texts)}
        raw = {"type": "web_search_call", "id": call_id, "status": "completed", "action": arguments}
        kind = "web_search_call"
    elif dialect == "gemini":
        name, arguments = "google_search", {"queries": draw(st.lists(texts, max_size=2))}
        raw = {"webSearchQueries": arguments["queries"], "groundingChunks": [{"web": {"uri": draw(texts)}}]}
        kind = "grounding_metadata"
    else:
        block = ServerToolCallBlock(
            id=call_id,
            name=draw(texts),
            arguments=draw(arguments_texts),
            kind=draw(texts),
            dialect=draw(texts),
            raw=draw(_hostile_raw),
        )
        return block
    encoded = msgspec.json.encode(arguments).decode()
    return ServerToolCallBlock(id=call_id, name=name, arguments=encoded, kind=kind, dialect=dialect, raw=_raw(raw))


@st.composite
def server_tool_result_blocks(draw: st.DrawFn) -> ServerToolResultBlock:
    call_id = draw(ids)
    if draw(st.booleans()):
        result = {
            "type": "web_search_result",
            "url": draw(texts),
            "title": draw(texts),
            "encrypted_content": draw(texts),
        }
        raw = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": [result]}
        return ServerToolResultBlock(tool_call_id=call_id, kind=raw["type"], dialect="anthropic", raw=_raw(raw))
    return ServerToolResultBlock(
        tool_call_id=call_id,
        kind=draw(texts),
        is_error=draw(st.booleans()),
        dialect=draw(texts),
        raw=draw(_hostile_raw),
    )


image_sources = st.one_of(
    st.builds(UrlSource, url=texts),
    st.builds(Base64Source, media_type=texts, data=texts),
    st.builds(PathSource, path=texts, media_type=optional(texts)),
)
image_blocks = st.builds(
    ImageBlock,
    source=image_sources,
    recognition_mode=st.sampled_from(["vision", "ocr", "auto"]),
    recognized_text=optional(texts),
    vision_analysis=optional(texts),
    confidence=optional(finite_floats),
    mode_used=st.sampled_from([None, "vision", "ocr"]),
    error=optional(texts),
    status=st.sampled_from(["pending", "resolved", "error"]),
    script=optional(texts),
    language=optional(texts),
    notice=optional(texts),
    attempts=st.integers(0, 2**32 - 1),
    detail=st.sampled_from([None, "auto", "low", "high"]),
    cache_control=optional(cache_controls),
)
file_reference_blocks = st.builds(
    FileReferenceBlock,
    path=texts,
    start_line=optional(line_numbers),
    end_line=optional(line_numbers),
    resolved_content=optional(texts),
    status=st.sampled_from(["pending", "resolved", "error"]),
    error=optional(texts),
)
mcp_resource_blocks = st.builds(
    MCPResourceBlock,
    server_name=texts,
    resource_uri=texts,
    content=optional(texts),
    mime_type=optional(texts),
    retrieved_at=optional(timestamps),
    blob=optional(texts),
    status=st.sampled_from(["pending", "resolved", "error"]),
    error=optional(texts),
)
tool_call_blocks = st.builds(
    ToolCallBlock,
    id=ids,
    name=texts,
    arguments=arguments_texts,
    approval=st.sampled_from(["pending", "approved", "denied"]),
    malformed=st.booleans(),
    item_id=optional(texts),
    cache_control=optional(cache_controls),
)

# Known blocks by class, for tests that go through each one.
BLOCKS: dict[type, st.SearchStrategy[Any]] = {
    TextBlock: text_blocks,
    ThinkingBlock: thinking_blocks,
    ImageBlock: image_blocks,
    FileReferenceBlock: file_reference_blocks,
    MCPResourceBlock: mcp_resource_blocks,
    ToolCallBlock: tool_call_blocks,
    ServerToolCallBlock: server_tool_call_blocks(),
    ServerToolResultBlock: server_tool_result_blocks(),
}
known_blocks = st.one_of(*BLOCKS.values())
blocks = known_blocks | unknown_blocks
block_lists = st.lists(blocks, max_size=4)

# --- messages ---------------------------------------------------------------------------------

usages = st.builds(
    Usage,
    input_tokens=token_counts,
    output_tokens=token_counts,
    cache_read_tokens=token_counts,
    cache_write_tokens=token_counts,
    reasoning_tokens=token_counts,
)
tool_errors = st.builds(ToolError, message=texts, traceback=optional(texts), recoverable=st.booleans())

user_messages = st.builds(
    UserMessage,
    id=ids,
    timestamp=timestamps,
    content=block_lists,
    source=st.sampled_from(["direct", "broadcast", "synthetic", "context"]),
    name=optional(texts),
)
assistant_messages = st.builds(
    AssistantMessage,
    id=ids,
    timestamp=timestamps,
    content=block_lists,
    stop_reason=st.sampled_from(
        [None, "end_turn", "length", "tool_use", "content_filter", "refusal", "pause", "error", "aborted", "unknown"]
    ),
    raw_stop_reason=optional(texts),
    usage=optional(usages),
    model=optional(texts),
    provider=optional(texts),
    response_id=optional(texts),
    name=optional(texts),
)
tool_result_messages = st.builds(
    ToolResultMessage,
    id=ids,
    timestamp=timestamps,
    tool_call_id=texts,
    tool_name=optional(texts),
    content=block_lists,
    is_error=st.booleans(),
    status=st.sampled_from(["success", "error", "denied", "interrupted"]),
    error=optional(tool_errors),
    started_at=optional(timestamps),
    duration_ms=optional(finite_floats),
    structured_content=json_values,
    cache_control=optional(cache_controls),
)
system_control_messages = st.builds(
    SystemControlMessage,
    id=ids,
    timestamp=timestamps,
    control=texts,
    params=json_objects,
)

MESSAGES: dict[type, st.SearchStrategy[Any]] = {
    UserMessage: user_messages,
    AssistantMessage: assistant_messages,
    ToolResultMessage: tool_result_messages,
    SystemControlMessage: system_control_messages,
}
known_messages = st.one_of(*MESSAGES.values())
messages = known_messages | unknown_messages
message_lists = st.lists(messages, max_size=5)

sessions = st.builds(
    Session,
    id=ids,
    system_prompt=optional(texts),
    created_at=timestamps,
    updated_at=timestamps,
    metadata=json_objects,
    messages=message_lists,
)


# `make test-deep` multiplies every property test's examples (conftest.py has the profiles).
SCALE = int(os.environ.get("MSGWIRE_HYPOTHESIS_SCALE", "1"))


def examples(n: int, *, all_health_checks: bool = False) -> settings:
    """Settings for a property test: `n` examples (times SCALE), no deadline (the first call of a
    session imports and warms up more than a per-example deadline allows); the profile of
    conftest.py decides whether they are derandomized."""
    checks = list(HealthCheck) if all_health_checks else [HealthCheck.too_slow]
    return settings(max_examples=n * SCALE, deadline=None, suppress_health_check=checks)


# --- agent histories with tool calls, then interrupted and edited -----------------------------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_alnum = lambda lo, hi: st.text(st.sampled_from(_ALNUM), min_size=lo, max_size=hi)  # noqa: E731

# Tool-call ids as providers make them, and as histories break them.
call_ids = st.one_of(
    _alnum(24, 24).map(lambda s: "call_" + s),  # OpenAI
    _alnum(24, 24).map(lambda s: "toolu_01" + s),  # Anthropic
    st.tuples(st.sampled_from(["get_weather", "Bash", "search"]), st.integers(0, 12)).map(
        lambda t: f"functions.{t[0]}:{t[1]}"  # Kimi, Fireworks: refused by Anthropic
    ),
    _alnum(8, 8),  # Gemini 3
    _alnum(9, 9),  # Mistral
    _alnum(41, 90),  # too long for OpenAI Chat, some for Responses
    st.integers(0, 99).map(lambda n: f"call_9b2c4f1a8e01_{n}"),  # msgwire's own, for a call without one
    st.just(""),  # a hand-written Gemini-before-3 or Ollama call
    nonempty_texts,  # anything at all
)
tool_names = st.text(st.sampled_from(_ALNUM + "_"), min_size=1, max_size=20)
_object_arguments = json_objects.map(lambda v: msgspec.json.encode(v).decode())


# Empty content: "" (refused by Gemini as a text part, by Anthropic as a text block) and text of
# whitespace only (refused by Anthropic), with the whitespace of every language's definition:
# Rust's, Python's (U+001C-U+001F) and JavaScript's (U+FEFF).
BLANKS = " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\ufeff"
blank_texts = st.one_of(st.just(""), st.text(st.sampled_from(BLANKS), min_size=1, max_size=3))
blank_text_blocks = st.builds(TextBlock, text=blank_texts)
#: Text that is blank about half of the time.
maybe_blank_texts = st.one_of(blank_texts, nonempty_texts)


@st.composite
def blank_messages(draw: st.DrawFn) -> UserMessage | AssistantMessage:
    """A user or assistant message with nothing a model reads: no blocks, or blank text only."""
    content = draw(st.lists(blank_text_blocks, max_size=2))
    if draw(st.booleans()):
        return UserMessage(content=content)
    return AssistantMessage(
        content=content, provider=draw(optional(st.sampled_from(["openai", "anthropic", "gemini"])))
    )


@st.composite
def tool_histories(draw: st.DrawFn, blanks: bool = False) -> list[Any]:
    """An agent loop (user, assistant with 0-3 tool calls, their results, ...) then broken the
    ways real histories break: results lost (interrupted, crashed), answered twice, moved
    after later messages, orphaned (edited), call ids repeated across messages, and the
    last assistant message left with its calls unanswered.

    ``blanks=True`` makes empty content frequent: the text of user messages, assistant
    messages and tool results blank about half of the time, and 0-3 messages with nothing a
    model reads (``blank_messages``) inserted anywhere, the first position included."""
    messages: list[Any] = []
    used: list[str] = []
    words = maybe_blank_texts if blanks else nonempty_texts
    for _ in range(draw(st.integers(1, 5))):
        messages.append(UserMessage(content=[TextBlock(text=draw(words))]))
        for _ in range(draw(st.integers(1, 3))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                reuse = used and draw(st.integers(0, 9)) == 0
                call_id = draw(st.sampled_from(used)) if reuse else draw(call_ids)
                used.append(call_id)
                calls.append(ToolCallBlock(id=call_id, name=draw(tool_names), arguments=draw(_object_arguments)))
            text = [TextBlock(text=draw(words))] if draw(st.booleans()) or not calls else []
            messages.append(
                AssistantMessage(
                    content=[*text, *calls], provider=draw(optional(st.sampled_from(["openai", "anthropic", "gemini"])))
                )
            )
            messages.extend(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=draw(optional(tool_names)),
                    content=[TextBlock(text=draw(maybe_blank_texts if blanks else texts))],
                    is_error=draw(st.booleans()),
                )
                for call in draw(st.permutations(calls))
            )
    if draw(st.booleans()):  # interrupted: the last calls never ran
        while isinstance(messages[-1], ToolResultMessage):
            messages.pop()
    # the edits: each drawn position is removed, duplicated, moved later or orphaned
    for _ in range(draw(st.integers(0, 4))):
        if not messages:
            break
        k = draw(st.integers(0, len(messages) - 1))
        edit = draw(st.sampled_from(["remove", "duplicate", "move", "orphan"]))
        if edit == "remove":
            del messages[k]
        elif edit == "duplicate":
            messages.insert(draw(st.integers(k, len(messages))), messages[k])
        elif edit == "move":
            messages.insert(draw(st.integers(k, len(messages) - 1)), messages.pop(k))
        else:
            messages.insert(k, ToolResultMessage(tool_call_id=draw(call_ids), content=[TextBlock(text="late")]))
    if blanks:
        for _ in range(draw(st.integers(0, 3))):
            messages.insert(draw(st.integers(0, len(messages))), draw(blank_messages()))
    return messages


#: What Rust's ``str::trim`` removes: Unicode White_Space. Python's ``str.strip()`` also removes
#: U+001C-U+001F, so expectations about Rust's trimming must strip exactly these.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    return text.strip(RUST_WHITESPACE)
