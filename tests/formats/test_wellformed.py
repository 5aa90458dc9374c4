"""Every request ``msgwire.formats`` writes is well formed, whatever the history it comes from.

``validate(body, dialect)`` below encodes what each provider documents (or answers with a 400)
about tool calls and their results, plus the shapes of the SDKs' own param types (pydantic
``TypeAdapter`` over ``openai.types.chat.ChatCompletionMessageParam``,
``anthropic.types.MessageParam`` and ``openai.types.responses.ResponseInputParam``; Gemini and
Ollama have no SDK among the dependencies, their shapes are checked by hand):

- OpenAI Chat: "An assistant message with 'tool_calls' must be followed by tool messages
  responding to each 'tool_call_id'", and a ``tool`` message must answer the ``tool_calls`` of
  the assistant message before it; a call id has at most 40 characters ("string too long.
  Expected a string with maximum length 40"). Mistral's API, behind the same dialect: ids of
  exactly 9 characters ``[a-zA-Z0-9]``.
- Anthropic: roles alternate; each ``tool_use`` is answered by one ``tool_result`` in the user
  message right after it ("tool_use ids were found without tool_result blocks immediately
  after"), the results first in that message, and nowhere else; ids match
  ``^[a-zA-Z0-9_-]+$`` ("String should match pattern") and are unique.
- Gemini: roles alternate (user, model); the content after a model content with function
  calls holds one functionResponse per call ("the number of function response parts should be
  equal to the number of function call parts"), with the call's name (and its id, when sent).
- OpenAI Responses: one ``function_call_output`` per ``function_call`` ("No tool output found
  for function call"), none without an earlier call ("No tool call found for function call
  output"), before the next user message; ``call_id`` of 1 to 64 characters.
- Ollama: a ``tool`` message per call, right after the assistant message, named after the
  call (Ollama pairs results with calls by name and order).

And about empty content:

- Anthropic: "text content blocks must be non-empty" and "... must contain non-whitespace
  text" (checked on every text block, a string content or system prompt, and a tool result's
  text: its ``content`` may be left out, not blank); "all messages must have non-empty
  content". Where the input opens with a user message, so does the request ("first message
  must use the user role", still Bedrock's rule).
- Gemini: every content has parts, every part holds something, and no text part is empty
  ("Unable to submit request because it has an empty text parameter") but the one carrying a
  ``thoughtSignature``; the conversation opens with a user content as for Anthropic (a
  function call must follow a user turn).
- OpenAI Chat: no content array is empty ("array too short"); an assistant message has
  content or tool calls. ``"content": ""`` is accepted.
- OpenAI Responses: no message item has an empty ``content`` array. ``input_text`` with
  ``""`` is accepted. Items pass the SDK's ``ResponseInputParam`` as written: reasoning items
  and output messages carry their item ids (and ``status``, ``annotations``), assistant text
  without an item id is an easy message ``{"role": "assistant", "content": "..."}``.

The histories are the generic hostile sessions of ``strategies.sessions`` and agent loops
broken the ways real ones break (``strategies.tool_histories``). Same-provider round trips of
the fixture corpus stay byte-identical, and the validator itself is shown to reject the
bodies providers reject.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from anthropic.types import MessageParam
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

from msgwire import (
    AssistantMessage,
    ImageBlock,
    Message,
    PathSource,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    UserMessage,
    assistant,
    context,
    tool_result,
    user,
)
from msgwire.formats import (
    DIALECTS,
    EMPTY_MESSAGE,
    MISSING_RESULT,
    convert_request,
    from_request,
    to_request,
    to_request_json,
)
from msgwire.types import LossReport
from tests._support.strategies import examples, sessions, tool_histories

FIXTURES = Path(__file__).parents[1] / "fixtures" / "requests"

# --- the validator ------------------------------------------------------------------------------


class Malformed(AssertionError):
    """A body the provider would refuse."""


def rule(holds: bool, why: str) -> None:
    if not holds:
        raise Malformed(why)


IdRule = Callable[[str], bool]

ID_RULES: dict[str, IdRule] = {
    "openai": lambda i: 1 <= len(i) <= 40,
    "openai-responses": lambda i: 1 <= len(i) <= 64,
    "anthropic": lambda i: re.fullmatch(r"[a-zA-Z0-9_-]+", i) is not None,
    "mistral": lambda i: re.fullmatch(r"[a-zA-Z0-9]{9}", i) is not None,
    "gemini": lambda i: i != "",
}

_OPENAI = TypeAdapter(list[ChatCompletionMessageParam])
_ANTHROPIC = TypeAdapter(list[MessageParam])
_RESPONSES = TypeAdapter(ResponseInputParam)


def _drain(value: Any) -> Any:
    """Pydantic validates ``Iterable[...]`` fields lazily: iterate every one."""
    if isinstance(value, dict):
        return {k: _drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)):
        return [_drain(v) for v in value]
    return value


def _blank(text: str) -> bool:
    """Empty or whitespace only, by Python's definition (Rust's and U+001C-U+001F) and JavaScript's
    (U+FEFF): what Anthropic refuses as a text block, whichever the check."""
    return not text.replace("\ufeff", "").strip()


def _anthropic_text_ok(content: Any, where: str) -> None:
    """A string content, or every text block of a list (nested in tool results too), is not blank."""
    if isinstance(content, str):
        rule(not _blank(content), f"{where}: blank text {content!r}")
        return
    for k, block in enumerate(content):
        if block["type"] == "text":
            rule(not _blank(block["text"]), f"{where}[{k}]: a blank text block {block['text']!r}")
        elif block["type"] == "tool_result" and "content" in block:
            _anthropic_text_ok(block["content"], f"{where}[{k}].content")


def _ids_ok(ids: list[str], rules: list[IdRule], where: str) -> None:
    for call_id in ids:
        rule(all(r(call_id) for r in rules), f"{where}: id {call_id!r} refused")
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    rule(not repeated, f"{where}: ids used by more than one call: {repeated}")


def _openai(body: dict[str, Any], rules: list[IdRule]) -> None:
    rule(set(body) <= {"messages", "tools"}, f"keys {set(body)}")
    _drain(_OPENAI.validate_python(body["messages"]))
    messages = body["messages"]
    every: list[str] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        rule(m["role"] != "tool", f"messages[{i}]: a tool message answering no assistant tool_calls before it")
        i += 1
        if m["role"] != "assistant":
            rule(m.get("content") != [], f"messages[{i - 1}]: an empty content array")
            continue
        calls = [c["id"] for c in m.get("tool_calls", [])]
        rule(m.get("content") != [], f"messages[{i - 1}]: an empty content array")
        rule(bool(calls) or m.get("content") is not None, f"messages[{i - 1}]: an assistant message with nothing")
        every += calls
        answers = []
        while i < len(messages) and messages[i]["role"] == "tool":
            rule(messages[i]["content"] != [], f"messages[{i}]: an empty content array")
            answers.append(messages[i]["tool_call_id"])
            i += 1
        rule(Counter(answers) == Counter(calls), f"messages[{i - 1}]: tool messages {answers} for tool_calls {calls}")
    _ids_ok(every, rules, "tool_calls")


def _anthropic(body: dict[str, Any], rules: list[IdRule]) -> None:
    rule(set(body) <= {"system", "messages", "tools"}, f"keys {set(body)}")
    rule(isinstance(body.get("system", ""), str), "system")
    if "system" in body:
        _anthropic_text_ok(body["system"], "system")
    _drain(_ANTHROPIC.validate_python(body["messages"]))
    messages = body["messages"]
    roles = [m["role"] for m in messages]
    rule(all(a != b for a, b in itertools.pairwise(roles)), f"roles do not alternate: {roles}")
    every: list[str] = []
    uses_before: list[str] = []
    for i, m in enumerate(messages):
        rule(m["content"] != [], f"messages[{i}]: no content")
        _anthropic_text_ok(m["content"], f"messages[{i}].content")
        blocks = m["content"] if isinstance(m["content"], list) else []
        kinds = [b["type"] for b in blocks]
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if m["role"] == "user":
            rule(not uses, f"messages[{i}]: tool_use in a user message")
            rule(Counter(results) == Counter(uses_before), f"messages[{i}]: tool_result {results} for {uses_before}")
            first = kinds[: len(results)]
            rule(all(k == "tool_result" for k in first), f"messages[{i}]: tool_result blocks not first: {kinds}")
            uses_before = []
        else:
            rule(not results, f"messages[{i}]: tool_result in an assistant message")
            every += uses
            uses_before = uses
    rule(not uses_before, f"tool_use {uses_before} without tool_result blocks after them")
    _ids_ok(every, rules, "tool_use")
    if messages and messages[-1]["role"] == "assistant":  # a prefill: no trailing whitespace
        content = messages[-1]["content"]
        texts = [content] if isinstance(content, str) else [b["text"] for b in content if b["type"] == "text"]
        rule(
            not texts or texts[-1] == texts[-1].replace("\ufeff", " ").rstrip() or _blank(texts[-1]),
            f"the final assistant turn ends with whitespace: {texts[-1:]!r}",
        )


_OLLAMA_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content", "images"},
    "assistant": {"role", "content", "thinking", "tool_calls"},
    "tool": {"role", "content", "images", "tool_name"},
}


def _ollama(body: dict[str, Any], rules: list[IdRule]) -> None:
    del rules  # Ollama requests carry no call ids
    rule(set(body) <= {"messages", "tools"}, f"keys {set(body)}")
    messages = body["messages"]
    i = 0
    while i < len(messages):
        m = messages[i]
        rule(set(m) <= _OLLAMA_KEYS.get(m["role"], set()), f"messages[{i}]: {set(m)}")
        rule(isinstance(m["content"], str), f"messages[{i}]: content")
        rule(m["role"] != "tool", f"messages[{i}]: a tool message answering no tool_calls before it")
        i += 1
        names = [c["function"]["name"] for c in m.get("tool_calls", [])]
        rule(all(isinstance(c["function"]["arguments"], dict) for c in m.get("tool_calls", [])), "arguments")
        answers = []
        while names and i < len(messages) and messages[i]["role"] == "tool":
            answers.append(messages[i].get("tool_name"))
            i += 1
        rule(Counter(answers) == Counter(names), f"messages[{i - 1}]: tool messages {answers} for calls {names}")


def _gemini(body: dict[str, Any], rules: list[IdRule]) -> None:
    rule(set(body) <= {"systemInstruction", "contents", "tools"}, f"keys {set(body)}")
    for part in body.get("systemInstruction", {"parts": []})["parts"]:
        rule(part.get("text") != "", "systemInstruction: an empty text part")
    contents = body["contents"]
    roles = [c["role"] for c in contents]
    rule(set(roles) <= {"user", "model"}, f"roles {roles}")
    rule(all(a != b for a, b in itertools.pairwise(roles)), f"roles do not alternate: {roles}")
    every: list[str] = []
    calls_before: list[dict[str, Any]] = []
    for i, content in enumerate(contents):
        rule(bool(content["parts"]), f"contents[{i}]: no parts")
        for k, part in enumerate(content["parts"]):
            rule(bool(set(part) - {"thoughtSignature", "thought"}), f"contents[{i}].parts[{k}]: holds nothing")
            empty = part.get("text") == "" and "thoughtSignature" not in part
            rule(not empty, f"contents[{i}].parts[{k}]: an empty text part")
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        responses = [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]
        rule(all(isinstance(c.get("args", {}), dict) for c in calls), f"contents[{i}]: args not an object")
        rule(all(isinstance(r["response"], dict) for r in responses), f"contents[{i}]: response not an object")
        if content["role"] == "model":
            rule(not responses, f"contents[{i}]: functionResponse in a model content")
            every += [c["id"] for c in calls if "id" in c]
            calls_before = calls
            continue
        rule(not calls, f"contents[{i}]: functionCall in a user content")
        names = (Counter(r["name"] for r in responses), Counter(c["name"] for c in calls_before))
        rule(names[0] == names[1], f"contents[{i}]: responses {names[0]} for calls {names[1]}")
        ids = (Counter(r["id"] for r in responses if "id" in r), Counter(c["id"] for c in calls_before if "id" in c))
        rule(ids[0] == ids[1], f"contents[{i}]: response ids {ids[0]} for call ids {ids[1]}")
        calls_before = []
    rule(not calls_before, f"function calls {calls_before} without responses after them")
    _ids_ok(every, rules, "functionCall")


def _responses(body: dict[str, Any], rules: list[IdRule]) -> None:
    rule(set(body) <= {"instructions", "input", "tools"}, f"keys {set(body)}")
    items = body["input"]
    # the items as they are: reasoning and output messages with their ids, easy messages else
    _drain(_RESPONSES.validate_python(items))
    calls: dict[str, int] = {}
    every: list[str] = []
    outputs: Counter[str] = Counter()
    for k, item in enumerate(items):
        if item.get("type", "message") == "message":
            rule(item["content"] != [], f"input[{k}]: a message with an empty content array")
        if item.get("type") == "function_call":
            every.append(item["call_id"])
            calls[item["call_id"]] = k
        elif item.get("type") == "function_call_output":
            rule(item["call_id"] in calls, f"input[{k}]: an output without an earlier call")
            between = items[calls[item["call_id"]] : k]
            rule(not any(i.get("role") == "user" for i in between), f"input[{k}]: an output after a user message")
            outputs[item["call_id"]] += 1
    rule(outputs == Counter(every), f"outputs {dict(outputs)} for calls {every}")
    _ids_ok(every, rules, "function_call")


_VALIDATORS = {
    "openai": _openai,
    "anthropic": _anthropic,
    "ollama": _ollama,
    "gemini": _gemini,
    "openai-responses": _responses,
}


def validate(body: dict[str, Any], dialect: str, server: str | None = None) -> dict[str, Any]:
    """Raise ``Malformed`` unless ``dialect`` (and the ``server`` behind it) accepts ``body``."""
    rules = [r for name in (dialect, server) if name is not None and (r := ID_RULES.get(name))]
    _VALIDATORS[dialect](body, rules)
    return body


# Every dialect, and the servers with stricter ids behind the openai one.
TARGETS = [(d, None) for d in DIALECTS] + [("openai", "mistral"), ("openai", "anthropic")]


def _target_id(target: tuple[str, str | None]) -> str:
    return target[0] + (f"+{target[1]}" if target[1] else "")


# --- what the input asks for, computed here without msgwire ----------------------------------


def unanswered(messages: list[Message]) -> int:
    """Calls left without a result by the rule msgwire documents: a result answers the latest
    earlier assistant message holding a call with its id, the first such call not answered."""
    owner: dict[str, int] = {}
    open_calls: dict[int, list[str]] = {}
    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            ids = [b.id for b in m.content if isinstance(b, ToolCallBlock)]
            open_calls[i] = ids
            owner.update((call_id, i) for call_id in ids)
        elif isinstance(m, ToolResultMessage) and m.tool_call_id in owner:
            waiting = open_calls[owner[m.tool_call_id]]
            if m.tool_call_id in waiting:
                waiting.remove(m.tool_call_id)
    return sum(len(ids) for ids in open_calls.values())


def input_calls(messages: list[Message]) -> list[tuple[int, int, str]]:
    return [
        (i, b, block.id)
        for i, m in enumerate(messages)
        if isinstance(m, AssistantMessage)
        for b, block in enumerate(m.content)
        if isinstance(block, ToolCallBlock)
    ]


def sent_call_ids(body: dict[str, Any], dialect: str) -> list[str | None]:
    """The id of every call in the body, in order (``None``: no id sent)."""
    if dialect == "openai":
        return [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])]
    if dialect == "anthropic":
        return [
            b["id"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_use"
        ]
    if dialect == "gemini":
        return [p["functionCall"].get("id") for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    if dialect == "openai-responses":
        return [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    return [None for m in body["messages"] for _ in m.get("tool_calls", [])]


def first_message(messages: list[Message]) -> int:
    """The index of the first user or assistant message (-1: none), the first a request sends."""
    return next((i for i, m in enumerate(messages) if isinstance(m, (UserMessage, AssistantMessage))), -1)


def first_role(body: dict[str, Any], dialect: str) -> str | None:
    turns = body["contents"] if dialect == "gemini" else body["messages"]
    return turns[0]["role"] if turns else None


def first_text(body: dict[str, Any], dialect: str) -> str | None:
    """The text of the first turn when it is a single text (Anthropic, Gemini)."""
    if dialect == "gemini":
        parts = body["contents"][0]["parts"] if body["contents"] else []
        return parts[0].get("text") if len(parts) == 1 else None
    content = body["messages"][0]["content"] if body["messages"] else None
    return content if isinstance(content, str) else None


def placeholders_sent(body: dict[str, Any], dialect: str, text: str) -> int:
    """How many results in the body are placeholders with ``text``."""
    if dialect in ("openai", "ollama"):
        return sum(m["role"] == "tool" and m["content"] == text for m in body["messages"])
    if dialect == "anthropic":
        return sum(
            b["type"] == "tool_result" and b.get("content") == text and b.get("is_error") is True
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
        )
    if dialect == "gemini":
        return sum(
            p.get("functionResponse", {}).get("response") == {"error": text}
            for c in body["contents"]
            for p in c["parts"]
        )
    return sum(i.get("type") == "function_call_output" and i["output"] == text for i in body["input"])


# --- any history --------------------------------------------------------------------------------

MISSING = "⟂ no result ⟂"


def _check_conversion(messages: list[Message], dialect: str, server: str | None) -> tuple[dict[str, Any], LossReport]:
    converted = convert_request(messages, dialect, missing_result=MISSING, tool_call_ids=server)
    body, report = converted.dict(), converted.report
    validate(body, dialect, server)
    # a placeholder for each call the input left without a result, reported at the call
    placeholders = [e for e in report.entries if e.action == "placeholder" and e.kind == "tool_result"]
    assert len(placeholders) == unanswered(messages) == placeholders_sent(body, dialect, MISSING)
    assert all(e.block is not None for e in placeholders)
    # the other placeholder: the opening user message, where the provider needs one
    opening = first_message(messages)
    kept = [(e.message, e.block, e.kind) for e in report.entries if e.action == "placeholder" and e not in placeholders]
    assert kept in ([], [(opening, None, "message")])
    if dialect in ("anthropic", "gemini") and opening >= 0 and isinstance(messages[opening], UserMessage):
        assert first_role(body, dialect) == "user"
    if kept:
        assert dialect in ("anthropic", "gemini")
        assert first_text(body, dialect) == EMPTY_MESSAGE
    # every id the target accepts is sent unchanged, every other one replaced and reported
    rewritten = {(e.message, e.block) for e in report.entries if e.action == "rewrite"}
    calls = input_calls(messages)
    sent = sent_call_ids(body, dialect)
    assert len(sent) == len(calls)
    for (i, b, own), new in zip(calls, sent, strict=True):
        if (i, b) in rewritten:
            assert new is not None
            assert new != own
        elif dialect == "gemini" and new is None:
            assert own == "" or re.fullmatch(r"call_[0-9a-fA-F-]*_\d+", own)
        elif dialect != "ollama":
            assert new == own
    if dialect == "ollama":
        assert not rewritten
    assert all(e.kind == "tool_call_id" for e in report.entries if e.action == "rewrite")
    assert [(e.message, e.block is None) for e in report.entries] == sorted(
        (e.message, e.block is None) for e in report.entries
    )
    return body, report


@examples(150)
@given(tool_histories())
def test_broken_agent_histories_give_well_formed_requests(messages: list[Message]) -> None:
    for dialect, server in TARGETS:
        _check_conversion(messages, dialect, server)


@examples(100)
@given(sessions)
def test_any_session_gives_well_formed_requests(session: Session) -> None:
    for dialect, server in TARGETS:
        _check_conversion(list(session.messages), dialect, server)


@examples(60)
@given(tool_histories(), st.data())
def test_ids_are_the_same_every_time_and_as_the_history_grows(messages: list[Message], data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(messages)))
    for dialect, server in TARGETS:
        once = to_request_json(messages, dialect, tool_call_ids=server)
        assert to_request_json(list(messages), dialect, tool_call_ids=server) == once
        # prompt caching: the calls of a prefix keep their ids when more messages follow
        whole = sent_call_ids(msgspec.json.decode(once), dialect)
        prefix = sent_call_ids(to_request(messages[:cut], dialect, tool_call_ids=server), dialect)
        assert whole[: len(prefix)] == prefix


@examples(80)
@given(tool_histories(), st.integers(1, 8))
def test_context_build_then_to_request_is_well_formed(messages: list[Message], window: int) -> None:
    ctx = context.build(Session(system_prompt="be brief", messages=messages), window=window)
    for dialect, server in TARGETS:
        body = to_request(ctx.messages, dialect, system_prompt=ctx.system_prompt, tool_call_ids=server)
        validate(body, dialect, server)


@examples(60)
@given(tool_histories())
def test_a_request_read_back_is_written_again_unchanged(messages: list[Message]) -> None:
    for dialect in DIALECTS:
        body = to_request(messages, dialect)
        converted = convert_request(from_request(body, dialect), dialect)
        again, report = converted.dict(), converted.report
        assert again == body
        assert not [e for e in report.entries if e.action in ("placeholder", "rewrite")]


# --- the fixture corpus: real requests ----------------------------------------------------------


def _fixtures() -> list[Any]:
    return [
        pytest.param(dialect, path, id=f"{dialect}/{path.stem}")
        for dialect in DIALECTS
        for path in sorted((FIXTURES / dialect).glob("*.json"))
    ]


@pytest.mark.parametrize(("dialect", "path"), _fixtures())
def test_fixtures_are_well_formed_and_round_trip_unchanged(dialect: str, path: Path) -> None:
    body = json.loads(path.read_bytes())
    validate(body, dialect)
    role = "developer" if dialect == "openai" and body["messages"][0]["role"] == "developer" else "system"
    converted = convert_request(from_request(body, dialect), dialect, system_role=role)
    again, report = converted.dict(), converted.report
    assert again == body
    assert not report


@pytest.mark.parametrize(("dialect", "path"), _fixtures())
def test_fixtures_convert_well_formed_to_every_other_dialect(dialect: str, path: Path) -> None:
    session = from_request(json.loads(path.read_bytes()), dialect)
    for target, server in TARGETS:
        _check_conversion(list(session.messages), target, server)


def _fixture(dialect: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / dialect / f"{name}.json").read_bytes())
    return body


def test_the_validator_refuses_what_providers_refuse() -> None:
    chat = _fixture("openai", "parallel_tool_calls")
    # system, user, assistant (2 calls), tool, tool, assistant
    unanswered_call = copy.deepcopy(chat)
    del unanswered_call["messages"][4]
    moved = copy.deepcopy(chat)
    moved["messages"] += [{"role": "user", "content": "and?"}, moved["messages"].pop(4)]
    answered_twice = copy.deepcopy(chat)
    answered_twice["messages"].insert(5, answered_twice["messages"][3])
    for bad in (unanswered_call, moved, answered_twice):
        with pytest.raises(Malformed):
            validate(bad, "openai")
    too_long = copy.deepcopy(chat)
    call = next(m for m in too_long["messages"] if m.get("tool_calls"))["tool_calls"][0]
    answer = next(m for m in too_long["messages"] if m.get("tool_call_id") == call["id"])
    call["id"] = answer["tool_call_id"] = "call_" + "x" * 36  # 41 characters
    with pytest.raises(Malformed, match="refused"):
        validate(too_long, "openai")
    with pytest.raises(Malformed, match="refused"):
        validate(chat, "openai", "mistral")

    claude = _fixture("anthropic", "parallel_tool_use")
    kimi = copy.deepcopy(claude)
    use = next(b for b in kimi["messages"][1]["content"] if b["type"] == "tool_use")
    answer = next(b for b in kimi["messages"][2]["content"] if b["tool_use_id"] == use["id"])
    use["id"] = answer["tool_use_id"] = "functions.get_weather:0"
    with pytest.raises(Malformed, match="refused"):
        validate(kimi, "anthropic")
    text_first = copy.deepcopy(claude)
    text_first["messages"][2]["content"].insert(0, {"type": "text", "text": "here"})
    with pytest.raises(Malformed, match="not first"):
        validate(text_first, "anthropic")
    lost = copy.deepcopy(claude)
    del lost["messages"][2:]
    with pytest.raises(Malformed, match="without tool_result"):
        validate(lost, "anthropic")

    gemini = _fixture("gemini", "function_calling_gemini3")
    short = copy.deepcopy(gemini)
    short["contents"][2]["parts"] = short["contents"][2]["parts"][:1]
    with pytest.raises(Malformed, match="responses"):
        validate(short, "gemini")
    responses = _fixture("openai-responses", "function_calls")
    orphan = copy.deepcopy(responses)
    orphan["input"] = [
        i for i in orphan["input"] if i.get("call_id") != "call_12345xyz" or i["type"] != "function_call"
    ]
    with pytest.raises(Malformed, match="without an earlier call"):
        validate(orphan, "openai-responses")
    ollama = _fixture("ollama", "tool_calls")
    one_short = copy.deepcopy(ollama)
    del one_short["messages"][3]  # user, assistant (2 calls), tool, tool, assistant
    with pytest.raises(Malformed):
        validate(one_short, "ollama")


# --- each rule, by example ----------------------------------------------------------------------

KIMI = ToolCallBlock(id="functions.get_weather:0", name="get_weather", arguments='{"city": "Paris"}')


def test_a_foreign_id_is_replaced_for_the_provider_that_refuses_it_only() -> None:
    messages = [user("weather?"), assistant([KIMI]), tool_result(KIMI.id, "rain")]
    body, report = _check_conversion(messages, "anthropic", None)
    new = body["messages"][1]["content"][0]["id"]
    assert re.fullmatch(r"call_[0-9a-f]{16}", new)
    assert body["messages"][2]["content"][0]["tool_use_id"] == new
    (step,) = report.entries
    assert (step.message, step.block, step.kind, step.action) == (1, 0, "tool_call_id", "rewrite")
    assert "functions.get_weather:0" in step.reason
    assert "^[a-zA-Z0-9_-]+$" in step.reason
    assert to_request(messages, "anthropic") == body  # the same every time
    body, report = _check_conversion(messages, "openai", None)
    assert body["messages"][1]["tool_calls"][0]["id"] == KIMI.id
    assert not report


def test_a_long_responses_id_is_replaced_for_openai_chat() -> None:
    long_id = "fc_" + "0123456789abcdef" * 4  # 67 characters
    messages = [user("q"), assistant([ToolCallBlock(id=long_id, name="f")]), tool_result(long_id, "ok")]
    chat, _ = _check_conversion(messages, "openai", None)
    assert len(chat["messages"][1]["tool_calls"][0]["id"]) <= 40
    responses, report = _check_conversion(messages, "openai-responses", None)
    assert len(responses["input"][1]["call_id"]) <= 64
    assert report.entries[0].action == "rewrite"
    forty = "call_" + "a" * 35
    body, report = _check_conversion(
        [user("q"), assistant([ToolCallBlock(id=forty, name="f")]), tool_result(forty, "ok")], "openai", None
    )
    assert body["messages"][1]["tool_calls"][0]["id"] == forty
    assert not report


def test_mistral_ids_are_nine_letters_or_digits() -> None:
    messages = [user("q"), assistant([KIMI]), tool_result(KIMI.id, "rain")]
    body, report = _check_conversion(messages, "openai", "mistral")
    new = body["messages"][1]["tool_calls"][0]["id"]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", new)
    assert body["messages"][2]["tool_call_id"] == new
    assert "Mistral" in report.entries[0].reason
    kept = [user("q"), assistant([ToolCallBlock(id="D681PevKs", name="f")]), tool_result("D681PevKs", "ok")]
    body, report = _check_conversion(kept, "openai", "mistral")
    assert body["messages"][1]["tool_calls"][0]["id"] == "D681PevKs"
    assert not report
    with pytest.raises(ValueError, match="tool_call_ids"):
        to_request(messages, "openai", tool_call_ids="cohere")  # type: ignore[arg-type]


def test_empty_ids_get_one_where_the_dialect_needs_it() -> None:
    calls = [ToolCallBlock(id="", name="a"), ToolCallBlock(id="", name="b")]
    messages = [user("q"), assistant(list(calls)), tool_result("", "first")]
    for dialect in ("openai", "anthropic", "openai-responses"):
        body, _ = _check_conversion(messages, dialect, None)
        ids = sent_call_ids(body, dialect)
        assert all(ids), (dialect, ids)
        assert len(set(ids)) == 2, (dialect, ids)
    gemini, report = _check_conversion(messages, "gemini", None)
    assert sent_call_ids(gemini, "gemini") == [None, None]  # Gemini before 3: no ids, paired by name
    assert not report.by_kind("tool_call_id")
    ollama, _ = _check_conversion(messages, "ollama", None)
    assert [m.get("tool_name") for m in ollama["messages"][2:]] == ["a", "b"]


def test_an_id_repeated_by_a_later_call_is_replaced_there() -> None:
    first = ToolCallBlock(id="call_0", name="f")
    again = ToolCallBlock(id="call_0", name="g")
    messages = [
        user("q"),
        assistant([first]),
        tool_result("call_0", "1"),
        assistant([again]),
        tool_result("call_0", "2"),
    ]
    body, report = _check_conversion(messages, "openai", None)
    ids = sent_call_ids(body, "openai")
    assert ids[0] == "call_0"
    assert ids[1] != "call_0"
    assert [m.get("tool_call_id") for m in body["messages"] if m["role"] == "tool"] == ids
    assert [(e.message, e.kind) for e in report.entries] == [(3, "tool_call_id")]
    assert "repeats" in report.entries[0].reason


def test_the_last_assistant_message_gets_placeholders_too() -> None:
    """The decision: a request asks the model for a reply; no provider accepts calls without
    results, wherever they stand. A caller about to run the calls appends their results first."""
    messages = [user("q"), assistant([TextBlock(text="looking"), KIMI])]
    for dialect, server in TARGETS:
        body, report = _check_conversion(messages, dialect, server)
        assert [(e.message, e.block, e.action) for e in report.entries if e.kind == "tool_result"] == [
            (1, 1, "placeholder")
        ]
    body = to_request(messages, "anthropic")
    assert body["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": body["messages"][1]["content"][1]["id"],
                "content": MISSING_RESULT,
                "is_error": True,
            }
        ],
    }
    body = to_request(messages, "openai", missing_result="The user interrupted this call.")
    assert body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": KIMI.id,
        "content": "The user interrupted this call.",
    }
    body = to_request(messages, "gemini")
    assert body["contents"][-1]["parts"] == [
        {"functionResponse": {"name": "get_weather", "id": KIMI.id, "response": {"error": MISSING_RESULT}}}
    ]


def test_a_placeholder_comes_after_the_real_results_of_its_message() -> None:
    a = ToolCallBlock(id="call_a", name="f")
    b = ToolCallBlock(id="call_b", name="g")
    messages = [user("q"), assistant([a, b]), user("never mind"), tool_result("call_b", "done")]
    body, _ = _check_conversion(messages, "openai", None)
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in body["messages"]] == [
        ("user", None, "q"),
        ("assistant", None, None),
        ("tool", "call_b", "done"),
        ("tool", "call_a", MISSING),
        ("user", None, "never mind"),
    ]


def test_a_result_after_a_later_assistant_message_moves_back_to_its_call() -> None:
    call = ToolCallBlock(id="call_slow", name="f")
    messages = [user("q"), assistant([call]), assistant("still waiting"), tool_result("call_slow", "late")]
    for dialect, server in TARGETS:
        body, report = _check_conversion(messages, dialect, server)
        assert not report.by_kind("tool_result"), dialect
    body = to_request(messages, "openai")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant"]


def test_a_second_result_for_one_call_is_dropped_and_the_first_sent() -> None:
    call = ToolCallBlock(id="call_x", name="f")
    messages = [user("q"), assistant([call]), tool_result("call_x", "first"), tool_result("call_x", "retry")]
    for dialect, server in TARGETS:
        _check_conversion(messages, dialect, server)
    converted = convert_request(messages, "anthropic")
    body, report = converted.dict(), converted.report
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "call_x", "content": "first"}]
    assert [(e.message, e.kind, e.action) for e in report.entries] == [(3, "tool_result", "drop")]
    assert "second result" in report.entries[0].reason


def test_missing_result_must_be_text() -> None:
    with pytest.raises(TypeError, match="missing_result"):
        to_request([user("q")], "openai", missing_result=None)  # type: ignore[arg-type]
    body = to_request([user("q"), assistant([KIMI])], "openai", missing_result="")
    assert body["messages"][-1]["content"] == ""


def test_without_ids_the_answers_to_one_tool_follow_the_call_order() -> None:
    """Ollama (and Gemini for calls that came without ids) pair the results of one tool with its
    calls by order: results that came back in another order are sent in call order."""
    calls = [ToolCallBlock(id="call_p", name="get_weather"), ToolCallBlock(id="call_t", name="get_weather")]
    messages = [
        user("Paris and Tokyo?"),
        assistant(list(calls)),
        tool_result("call_t", "Tokyo: 22"),
        tool_result("call_p", "Paris: 14"),
    ]
    ollama, _ = _check_conversion(messages, "ollama", None)
    assert [m["content"] for m in ollama["messages"][2:]] == ["Paris: 14", "Tokyo: 22"]
    openai, _ = _check_conversion(messages, "openai", None)  # paired by id: sent as they came
    assert [m["tool_call_id"] for m in openai["messages"][2:]] == ["call_t", "call_p"]
    # Gemini before 3: msgwire made the ids up, they are not sent; only the second call answered
    made_up = [ToolCallBlock(id="call_9b2c4f1a8e01_0", name="f"), ToolCallBlock(id="call_9b2c4f1a8e01_1", name="f")]
    interrupted = [user("q"), assistant(list(made_up)), tool_result("call_9b2c4f1a8e01_1", "second")]
    gemini, _ = _check_conversion(interrupted, "gemini", None)
    responses = [p["functionResponse"] for p in gemini["contents"][-1]["parts"]]
    assert responses == [
        {"name": "f", "response": {"error": MISSING}},
        {"name": "f", "response": {"result": "second"}},
    ]


# --- empty content ------------------------------------------------------------------------------


@examples(120)
@given(tool_histories(blanks=True))
def test_histories_with_empty_content_give_well_formed_requests(messages: list[Message]) -> None:
    for dialect, server in TARGETS:
        _, report = _check_conversion(messages, dialect, server)
        # only messages are dropped for being empty: never a block, never a message with calls
        for e in report.by_kind("message"):
            m = messages[e.message]
            assert e.block is None
            assert not (isinstance(m, AssistantMessage) and any(isinstance(b, ToolCallBlock) for b in m.content))


@examples(60)
@given(tool_histories(blanks=True), st.integers(1, 8))
def test_context_build_then_to_request_opens_with_a_user_turn(messages: list[Message], window: int) -> None:
    """``context.build`` opens ``messages`` with a user message; the request keeps it first where
    the provider needs that (Anthropic, Gemini), even when the message is blank."""
    ctx = context.build(Session(system_prompt=" ", messages=messages), window=window)
    for dialect, server in TARGETS:
        body, _ = _check_conversion(ctx.messages, dialect, server)
        if dialect in ("anthropic", "gemini"):
            assert first_role(body, dialect) == "user"


@examples(60)
@given(tool_histories(blanks=True))
def test_a_request_with_empty_content_read_back_is_written_again_unchanged(messages: list[Message]) -> None:
    for dialect in DIALECTS:
        body = to_request(messages, dialect)
        converted = convert_request(from_request(body, dialect), dialect)
        again, report = converted.dict(), converted.report
        assert again == body
        assert not [e for e in report.entries if e.action in ("placeholder", "rewrite", "drop")]


CALL = ToolCallBlock(id="call_1", name="f", arguments="{}")


def test_anthropic_leaves_blank_text_out_and_drops_the_messages_it_empties() -> None:
    messages = [
        user("q"),
        assistant([TextBlock(text="\n\n"), CALL]),
        tool_result("call_1", " "),
        user([TextBlock(text=""), TextBlock(text="and?")]),
        assistant(" \t"),
        user(""),
        assistant("done"),
    ]
    body, report = _check_conversion(messages, "anthropic", None)
    assert body["messages"] == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "f", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1"}, {"type": "text", "text": "and?"}],
        },
        {"role": "assistant", "content": "done"},
    ]
    # the blank blocks are not reported; the two messages left empty are (their turns merged)
    assert [(e.message, e.block, e.kind, e.action) for e in report.entries] == [
        (4, None, "message", "drop"),
        (5, None, "message", "drop"),
    ]
    assert "system" not in to_request([user("q")], "anthropic", system_prompt="\u3000")


def test_anthropic_results_keep_an_error_message_and_leave_blank_text_out() -> None:
    failed = ToolResultMessage(
        tool_call_id="call_1", content=[TextBlock(text="")], is_error=True, error=ToolError(message="boom")
    )
    body = validate(to_request([user("q"), assistant([CALL]), failed], "anthropic"), "anthropic")
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "boom", "is_error": True}
    ]
    body = validate(to_request([user("q"), assistant([CALL])], "anthropic", missing_result=""), "anthropic")
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "is_error": True}]


def test_gemini_leaves_empty_text_parts_out_but_keeps_whitespace_and_signatures() -> None:
    signed = assistant(
        [TextBlock(text=""), TextBlock(text=" "), ThinkingBlock(thinking="", signature="SIG")],
        provider="gemini",
    )
    messages = [user("q"), signed, user(""), assistant([TextBlock(text=""), CALL]), tool_result("call_1", "")]
    body, report = _check_conversion(messages, "gemini", None)
    # the empty user message is dropped and the two model contents merge: roles still alternate
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {
            "role": "model",
            "parts": [
                {"text": " "},
                {"text": "", "thoughtSignature": "SIG"},
                {"functionCall": {"name": "f", "args": {}, "id": "call_1"}},
            ],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "call_1", "response": {"result": ""}}}]},
    ]
    assert [(e.message, e.kind, e.action) for e in report.entries] == [(2, "message", "drop")]
    assert "systemInstruction" not in to_request([user("q")], "gemini", system_prompt="")


def test_openai_chat_sends_empty_text_and_never_an_empty_content_array() -> None:
    unsendable = ImageBlock(source=PathSource(path="/tmp/a.png"))
    messages = [user(""), assistant([TextBlock(text="")]), user([unsendable]), assistant([TextBlock(text=""), CALL])]
    body, report = _check_conversion(messages, "openai", None)
    assert body["messages"][:2] == [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}]
    # the user message left with no part is dropped, not sent as "content": []
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "assistant", "tool"]
    assert body["messages"][2]["content"] == ""
    assert [(e.message, e.kind, e.action) for e in report.entries if e.block is None] == [(2, "message", "drop")]


def test_responses_sends_empty_text_and_never_an_empty_content_array() -> None:
    unsendable = ImageBlock(source=PathSource(path="/tmp/a.png"))
    body, report = _check_conversion(
        [user(""), user([unsendable]), assistant([TextBlock(text=""), CALL])], "openai-responses", None
    )
    assert body["input"][0] == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ""}]}
    assert [i.get("role") or i["type"] for i in body["input"]] == [
        "user",
        "assistant",
        "function_call",
        "function_call_output",
    ]
    assert [(e.message, e.kind, e.action) for e in report.entries if e.block is None] == [(1, "message", "drop")]


def test_ollama_takes_empty_messages() -> None:
    body, report = _check_conversion([user(""), assistant([TextBlock(text="")])], "ollama", None)
    assert body["messages"] == [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}]
    assert not report


@pytest.mark.parametrize(("dialect", "blank"), [("anthropic", " \n"), ("gemini", "")])
def test_a_blank_opening_user_message_is_sent_as_empty_message(dialect: str, blank: str) -> None:
    messages = [user(blank), assistant("hello"), user("hi")]
    body, report = _check_conversion(messages, dialect, None)
    assert first_role(body, dialect) == "user"
    assert first_text(body, dialect) == EMPTY_MESSAGE
    (step,) = report.entries
    assert (step.message, step.block, step.kind, step.action) == (0, None, "message", "placeholder")
    assert EMPTY_MESSAGE in step.reason
    # a later one is dropped: the request already opens with a user turn
    body, report = _check_conversion([user("hi"), assistant("hello"), user(""), assistant("still?")], dialect, None)
    assert [(e.message, e.action) for e in report.entries] == [(2, "drop")]
    # the window context.build sends opens with the user message; blank, it is kept the same way
    ctx = context.build(Session(messages=[user(""), assistant([CALL]), tool_result("call_1", "ok")]), window=2)
    assert isinstance(ctx.messages[0], UserMessage)
    body, _ = _check_conversion(ctx.messages, dialect, None)
    assert first_text(body, dialect) == EMPTY_MESSAGE


def test_the_validator_refuses_empty_content_where_providers_do() -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("anthropic", {"messages": [{"role": "user", "content": ""}]}, "blank"),
        ("anthropic", {"messages": [{"role": "user", "content": [{"type": "text", "text": " \n"}]}]}, "blank"),
        ("anthropic", {"messages": [{"role": "user", "content": []}]}, "no content"),
        ("anthropic", {"system": "\ufeff", "messages": [{"role": "user", "content": "q"}]}, "blank"),
        (
            "anthropic",
            {
                "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "\x1c"}]},
                ]
            },
            "blank",
        ),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": ""}]}]}, "empty text part"),
        ("gemini", {"contents": [{"role": "user", "parts": [{}]}]}, "holds nothing"),
        ("gemini", {"systemInstruction": {"parts": [{"text": ""}]}, "contents": []}, "empty text part"),
        ("openai", {"messages": [{"role": "user", "content": []}]}, "empty content array"),
        ("openai", {"messages": [{"role": "assistant", "content": None}]}, "with nothing"),
        ("openai-responses", {"input": [{"type": "message", "role": "user", "content": []}]}, "empty content array"),
    ]
    for dialect, body, why in cases:
        with pytest.raises(Malformed, match=why):
            validate(body, dialect)
    # and takes what they take
    validate({"messages": [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}]}, "openai")
    validate(
        {"contents": [{"role": "model", "parts": [{"text": " "}, {"text": "", "thoughtSignature": "S"}]}]}, "gemini"
    )
    validate(
        {"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": ""}]}]},
        "openai-responses",
    )


def test_anthropic_prefill_ends_without_trailing_whitespace() -> None:
    """A request that ends with an assistant turn (a prefill) is continued from its last
    character; Anthropic refuses one that ends with whitespace."""
    session = Session(messages=[user("Write JSON."), assistant("Here it is:\n\n  ")])
    converted = convert_request(session, "anthropic")
    body, report = converted.dict(), converted.report
    assert body["messages"][-1] == {"role": "assistant", "content": "Here it is:"}
    assert [(e.kind, e.action) for e in report.entries] == [("text", "strip")]
    validate(body, "anthropic")
    # only the final turn: earlier assistant text keeps its whitespace
    session = Session(messages=[*session.messages, user("more")])
    assert to_request(session, "anthropic")["messages"][1]["content"] == "Here it is:\n\n  "
