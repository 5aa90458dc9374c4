"""msgwire.formats.RequestCache: re-building the request of a growing conversation gives the
bytes and the report of a build from scratch, whatever happened to the history in between
(appends, edits and approvals that keep a message's id, forks, removals), in every dialect."""

from __future__ import annotations

import threading
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from msgwire import (
    AssistantMessage,
    Message,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    assistant,
    tool_result,
    user,
)
from msgwire.formats import DIALECTS, RequestCache, convert_request, to_request_json
from msgwire.types import Policy, Request, Tool
from tests._support.strategies import examples, messages, nonempty_texts, texts, tool_histories


def _edited(draw: st.DrawFn, message: Any) -> Any:
    """`message` with other content and the same id: an edit, or an approval decided."""
    if isinstance(message, AssistantMessage):
        calls = [b for b in message.content if isinstance(b, ToolCallBlock)]
        if calls and draw(st.booleans()):
            call = draw(st.sampled_from(calls))
            decided = msgspec.structs.replace(call, approval=draw(st.sampled_from(["approved", "denied"])))
            if draw(st.booleans()):  # the approver changed the arguments too
                decided = msgspec.structs.replace(decided, arguments='{"edited": true}')
            content = [decided if b is call else b for b in message.content]
            return msgspec.structs.replace(message, content=content)
        return msgspec.structs.replace(message, content=[TextBlock(text=draw(texts))])
    if isinstance(message, ToolResultMessage):
        return msgspec.structs.replace(message, is_error=not message.is_error, content=[TextBlock(text=draw(texts))])
    if isinstance(message, UserMessage):
        return msgspec.structs.replace(message, content=[TextBlock(text=draw(texts))])
    return message


@st.composite
def conversations(draw: st.DrawFn) -> list[list[Any]]:
    """The states of one conversation as an agent loop sends them: grown a message at a time
    (tool histories broken the ways real ones break, with any other message mixed in), and,
    between two steps, sometimes a message edited or approved in place (same id), a fork (a
    prefix with another message after it), a message removed, or nothing new at all."""
    pool = draw(tool_histories(blanks=draw(st.booleans())))
    for message in draw(st.lists(messages, max_size=3)):
        pool.insert(draw(st.integers(0, len(pool))), message)
    states: list[list[Any]] = []
    current: list[Any] = []
    for message in pool:
        current = [*current, message]
        states.append(current)
        change = draw(st.sampled_from(["none", "none", "none", "edit", "fork", "remove", "same"]))
        k = draw(st.integers(0, len(current) - 1))
        if change == "edit":
            current = [*current[:k], _edited(draw, current[k]), *current[k + 1 :]]
        elif change == "fork":
            current = [*current[:k], draw(messages)]
        elif change == "remove":
            current = [*current[:k], *current[k + 1 :]]
        if change != "none":
            states.append(current)
    return states


@examples(40)
@given(conversations(), st.sampled_from([None, "stopped", ""]), st.one_of(st.none(), nonempty_texts))
def test_every_rebuild_is_a_full_build(states: list[list[Any]], missing: str | None, system: str | None) -> None:
    cache = RequestCache()  # one cache for every dialect and both option sets: they must not mix
    for state in states:
        for dialect in DIALECTS:
            options: dict[str, Any] = {"system_prompt": system}
            if missing is not None and dialect != "anthropic":
                options["missing_result"] = missing
            cached = convert_request(state, dialect, cache=cache, **options)
            full = convert_request(state, dialect, **options)
            assert cached.body == full.body, (dialect, len(state))
            assert cached.report == full.report, (dialect, len(state))


def _loop() -> list[Message]:
    history: list[Message] = [user("look at the logs")]
    for n in range(6):
        call = ToolCallBlock(id=f"call_{n}", name="read", arguments=f'{{"page": {n}}}')
        history.append(AssistantMessage(content=[TextBlock(text=f"page {n}"), call]))
        history.append(tool_result(f"call_{n}", f"line {n}", tool_name="read"))
    history.append(assistant("done"))
    return history


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_edit_that_keeps_the_id_is_not_served_stale(dialect: Any) -> None:
    history = _loop()
    cache = RequestCache()
    to_request_json(history, dialect, cache=cache)
    first = history[0]
    assert isinstance(first, UserMessage)
    edited = msgspec.structs.replace(first, content=[TextBlock(text="look at the metrics")])
    again = [edited, *history[1:]]
    body = to_request_json(again, dialect, cache=cache)
    assert b"look at the metrics" in body
    assert b"look at the logs" not in body
    assert body == to_request_json(again, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_result_appended_replaces_the_placeholder_it_answers(dialect: Any) -> None:
    history = [*_loop()[:-1], AssistantMessage(content=[ToolCallBlock(id="call_x", name="read", arguments="{}")])]
    cache = RequestCache()
    before = convert_request(history, dialect, cache=cache)
    assert [e.action for e in before.report.entries].count("placeholder") == 1
    grown = [*history, tool_result("call_x", "the last page", tool_name="read")]
    after = convert_request(grown, dialect, cache=cache)
    assert after == convert_request(grown, dialect)
    assert b"the last page" in after.body
    assert "placeholder" not in [e.action for e in after.report.entries]


def test_messages_are_read_once_and_keyed_by_content() -> None:
    history = _loop()
    cache = RequestCache()
    to_request_json(history, "openai", cache=cache)
    assert len(cache) == len(history)
    to_request_json([*history, user("more")], "openai", cache=cache)
    assert len(cache) == len(history) + 1
    # equal messages made again (a conversation loaded anew) are the same content: nothing new
    copies = [msgspec.json.decode(msgspec.json.encode(m), type=Message) for m in history]  # type: ignore[arg-type]
    assert copies == history
    assert copies[0] is not history[0]
    assert to_request_json(copies, "openai", cache=cache) == to_request_json(history, "openai")
    assert len(cache) == len(history) + 1


def test_a_session_and_a_request_use_their_system_prompt_tools_and_settings() -> None:
    history = _loop()
    tool = Tool(name="read", description="Read a page", parameters={"type": "object"})
    session = Session(system_prompt="be brief", messages=history)
    request = Request(model="m", max_tokens=100, system_prompt="be brief", tools=[tool], messages=history)
    cache = RequestCache()
    for dialect in DIALECTS:
        assert to_request_json(session, dialect, cache=cache) == to_request_json(session, dialect)
        assert convert_request(request, dialect, cache=cache) == convert_request(request, dialect)
        policy = Policy(thinking="to_text")
        assert to_request_json(history, dialect, policy=policy, cache=cache) == to_request_json(
            history, dialect, policy=policy
        )


def test_a_cache_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="RequestCache"):
        to_request_json(_loop(), "openai", cache={})  # type: ignore[arg-type]


def test_builds_from_two_threads_take_turns() -> None:
    history = _loop()
    cache = RequestCache()
    expected = {n: to_request_json(history[:n], "openai") for n in range(1, len(history) + 1)}
    failures: list[BaseException] = []

    def grow() -> None:
        try:
            for n in range(1, len(history) + 1):
                assert to_request_json(history[:n], "openai", cache=cache) == expected[n]
        except BaseException as failure:  # reported by the main thread
            failures.append(failure)

    threads = [threading.Thread(target=grow) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
