"""Citations, server tool blocks and provider item ids (issue 9, sections 3 and 4), end to end on
the real recordings (tests/fixtures/realworld): each survives a round trip within its dialect
(stream -> message -> ``to_response`` / ``to_request`` / a transcoded stream of that dialect ->
the same blocks), goes to another dialect as far as that one can carry it (the rest in the
``LossReport`` or the transcoder's diagnostics), and loads without an "unknown block" warning.
OpenAI-side outputs write ``"{}"`` for a call without arguments, and the Responses requests
pass the openai SDK's own ``ResponseInputParam``."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import msgspec
import pytest
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

import msgwire
from msgwire import (
    AssistantMessage,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    UnknownBlock,
    formats,
)
from tests._support.sdk import anthropic_final, compare_messages, compare_response, openai_final, sdk_events

REALWORLD = Path(__file__).parents[1] / "fixtures" / "realworld"
CITED_ANTHROPIC = REALWORLD / "anthropic" / "claude-web-search-citations-long.sse"
WEB_SEARCH_RESPONSES = REALWORLD / "openai-responses" / "openai-web-search-call.sse"
GROUNDED_GEMINI = REALWORLD / "gemini" / "gemini-2.5-flash-google-search-grounding.sse"
REASONING_CALLS = REALWORLD / "openai-responses" / "openai-gpt-5-reasoning-parallel-function-calls.sse"

_RESPONSES_INPUT: TypeAdapter[Any] = TypeAdapter(ResponseInputParam)


def _provider_blocks(message: AssistantMessage) -> list[Any]:
    """The blocks this module is about, as plain data (raw objects decoded: bytes may differ)."""
    out: list[Any] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.citations:
            cited = [(c.kind, c.url, c.title, c.cited_text, c.start_index, c.end_index) for c in block.citations]
            out.append(("text", block.text, cited))
        elif isinstance(block, ServerToolCallBlock):
            out.append(("call", block.id, block.name, json.loads(block.arguments), block.kind, block.data()))
        elif isinstance(block, ServerToolResultBlock):
            out.append(("result", block.tool_call_id, block.kind, block.is_error, block.data()))
    return out


# --- the recordings decode to typed blocks -------------------------------------------------------


def test_anthropic_citations_and_server_tools_are_typed() -> None:
    message = msgwire.assemble(CITED_ANTHROPIC.read_bytes(), "anthropic")
    call, result = message.content[0], message.content[1]
    assert isinstance(call, ServerToolCallBlock)
    assert (call.name, call.kind, call.dialect) == ("web_search", "server_tool_use", "anthropic")
    assert "query" in json.loads(call.arguments)
    assert isinstance(result, ServerToolResultBlock)
    assert (result.tool_call_id, result.is_error) == (call.id, False)
    assert all(r["type"] == "web_search_result" for r in result.content())
    cited = [c for b in message.content if isinstance(b, TextBlock) for c in b.citations]
    assert len(cited) == 7
    assert all(c.kind == "web_search_result_location" and c.url and c.cited_text for c in cited)
    assert all(msgspec.json.decode(c.raw)["encrypted_index"] for c in cited)  # kept for Anthropic
    compare_messages(message, anthropic_final([CITED_ANTHROPIC.read_bytes()]))


def test_responses_annotations_item_ids_and_built_in_items_are_typed() -> None:
    data = WEB_SEARCH_RESPONSES.read_bytes()
    message = msgwire.assemble(data, "openai-responses")
    search, text = message.content
    assert isinstance(search, ServerToolCallBlock)
    assert (search.id, search.name, search.kind) == (search.data()["id"], "web_search", "web_search_call")
    assert json.loads(search.arguments)["query"] == "current population of Tokyo 2024"
    assert isinstance(text, TextBlock)
    assert (text.item_id or "").startswith("msg_")
    [citation] = text.citations
    assert (citation.kind, citation.title) == ("url_citation", "東京都の統計")
    assert citation.start_index is not None
    assert citation.end_index is not None
    assert citation.cited_text == text.text[citation.start_index : citation.end_index]
    assert citation.raw is msgspec.UNSET  # OpenAI wrote it as msgwire writes it: nothing more to keep
    compare_response(message, *sdk_events([data]))


def test_gemini_grounding_is_a_server_tool_call_and_citations() -> None:
    message = msgwire.assemble(GROUNDED_GEMINI.read_bytes(), "gemini")
    text, grounding = message.content
    assert isinstance(grounding, ServerToolCallBlock)
    assert (grounding.name, grounding.kind, grounding.dialect) == ("google_search", "grounding_metadata", "gemini")
    assert json.loads(grounding.arguments) == {"queries": ["price of Ethereum on January 1 2026"]}
    assert isinstance(text, TextBlock)
    assert len(text.citations) == 4
    for c in text.citations:  # the spans are the text's (Gemini's are bytes of the whole response)
        assert c.kind == "grounding"
        assert c.start_index is not None
        assert c.end_index is not None
        assert text.text[c.start_index : c.end_index] == c.cited_text
    assert [c.title for c in text.citations] == ["finbold.com", "ig.com", "binance.com", "xtb.com"]


def test_loads_warns_of_no_unknown_block(caplog: pytest.LogCaptureFixture) -> None:
    """Typed blocks, and msgwire's own provider parts, are no newer version's unknown types."""
    from msgwire import codec

    codec._warned_tags.clear()
    part = UnknownBlock(b'{"type":"provider_part","dialect":"anthropic","part":{"type":"container_upload"}}', "x")
    messages = [msgwire.assemble(p.read_bytes(), d) for p, d in [(CITED_ANTHROPIC, "anthropic")]]
    session = msgwire.Session(messages=[*messages, msgwire.assistant([part])])
    with caplog.at_level(logging.WARNING, logger="msgwire"):
        again = msgwire.loads(msgwire.dumps(session))
    assert again == session
    assert not [r for r in caplog.records if "unknown" in r.getMessage()]


# --- a round trip within each dialect -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "dialect"),
    [(CITED_ANTHROPIC, "anthropic"), (WEB_SEARCH_RESPONSES, "openai-responses"), (GROUNDED_GEMINI, "gemini")],
    ids=["anthropic", "openai-responses", "gemini"],
)
def test_same_dialect_response_and_transcode_keep_them(path: Path, dialect: str) -> None:
    message = msgwire.assemble(path.read_bytes(), dialect)
    converted = formats.convert_response(message, dialect)
    body, report = converted.dict(), converted.report
    assert not report
    assert _provider_blocks(formats.from_response(body, dialect)) == _provider_blocks(message)
    streamed = b"".join(msgwire.transcode(iter([path.read_bytes()]), dialect, dialect))
    assert _provider_blocks(msgwire.assemble(streamed, dialect)) == _provider_blocks(message)


@pytest.mark.parametrize(
    ("path", "dialect"), [(CITED_ANTHROPIC, "anthropic"), (WEB_SEARCH_RESPONSES, "openai-responses")]
)
def test_same_dialect_request_keeps_them(path: Path, dialect: str) -> None:
    history = [msgwire.user("q"), msgwire.assemble(path.read_bytes(), dialect), msgwire.user("thanks")]
    converted = formats.convert_request(history, dialect)
    body, report = converted.dict(), converted.report
    assert not report
    again = formats.from_request(body, dialect)
    assert _provider_blocks(again.messages[1]) == _provider_blocks(history[1])  # type: ignore[arg-type]
    assert formats.to_request(again, dialect) == body
    if dialect == "openai-responses":
        _RESPONSES_INPUT.validate_python(body["input"])


def test_transcoded_anthropic_stream_keeps_them_for_the_sdk() -> None:
    data = CITED_ANTHROPIC.read_bytes()
    streamed = b"".join(msgwire.transcode(iter([data]), "anthropic", "anthropic"))
    compare_messages(msgwire.assemble(streamed, "anthropic"), anthropic_final([streamed]))


# --- to another dialect: carried where it maps, reported where it does not -------------------------


def test_anthropic_citations_become_url_citations_and_server_tools_are_reported() -> None:
    message = msgwire.assemble(CITED_ANTHROPIC.read_bytes(), "anthropic")
    converted = formats.convert_response(message, "openai-responses")
    body, report = converted.dict(), converted.report
    annotations = [
        a for item in body["output"] if item["type"] == "message" for p in item["content"] for a in p["annotations"]
    ]
    assert len(annotations) == 7
    texts = [b for b in message.content if isinstance(b, TextBlock) and b.citations]
    first = texts[0]
    assert annotations[0] == {
        "type": "url_citation",
        "end_index": len(first.text),  # an Anthropic citation is its whole block's
        "start_index": 0,
        "title": first.citations[0].title,
        "url": first.citations[0].url,
    }
    assert {(e.kind, e.action) for e in report.entries} == {
        ("server_tool_call", "drop"),
        ("server_tool_result", "drop"),
    }
    # where there is no place at all: reported, never silent
    report = formats.convert_response(message, "openai").report
    assert [e.block for e in report.entries if e.kind == "citation"] == [
        i for i, b in enumerate(message.content) if isinstance(b, TextBlock) and b.citations
    ]
    report = formats.convert_request(
        [msgwire.user("q"), message], "openai-responses", policy=msgwire.Policy(server_tools="to_text")
    ).report
    assert {e.action for e in report.entries if e.kind.startswith("server_tool")} == {"to_text"}


def test_transcoding_to_a_dialect_without_them_says_so() -> None:
    transcoder = msgwire.Transcoder("anthropic", "openai")
    transcoder.feed(CITED_ANTHROPIC.read_bytes())
    transcoder.finish()
    codes = {d.code for d in transcoder.diagnostics}
    assert {"transcode_server_tool_dropped", "transcode_citations_dropped"} <= codes


def test_responses_url_citations_reach_anthropic_only_as_reported_drops() -> None:
    """An Anthropic citation needs its search result's encrypted index: a URL alone is not one."""
    message = msgwire.assemble(WEB_SEARCH_RESPONSES.read_bytes(), "openai-responses")
    converted = formats.convert_response(message, "anthropic")
    body, report = converted.dict(), converted.report
    assert all("citations" not in b for b in body["content"])
    assert {e.kind for e in report.entries} == {"citation", "server_tool_call"}


# --- Responses requests the SDK accepts -----------------------------------------------------------


def test_a_responses_tool_use_history_replays_with_its_item_ids() -> None:
    data = REASONING_CALLS.read_bytes()
    reply = msgwire.assemble(data, "openai-responses")
    ids = [b.item_id for b in reply.content]
    assert all(ids)
    assert len(set(ids)) == len(ids)
    results = [msgwire.tool_result(c.id, "ok") for c in reply.tool_calls]
    history = [msgwire.user("q"), reply, *results]
    converted = formats.convert_request(history, "openai-responses")
    body, report = converted.dict(), converted.report
    assert not report
    _RESPONSES_INPUT.validate_python(body["input"])
    sent = {i.get("id") for i in body["input"]}
    assert set(ids) <= sent  # reasoning and calls with their own ids
    assert formats.to_request(formats.from_request(body, "openai-responses"), "openai-responses") == body


def test_without_item_ids_responses_requests_pass_the_sdk_too() -> None:
    """A history from another provider (no item ids): easy assistant messages, reasoning by the
    policy, every item accepted by ``ResponseInputParam``."""
    history = [
        msgwire.user("q"),
        AssistantMessage(
            provider="openai",
            content=[
                ThinkingBlock(thinking="plan", signature="ENC"),
                TextBlock(text="let me check"),
                ToolCallBlock(id="call_1", name="f", arguments=""),
            ],
        ),
        msgwire.tool_result("call_1", "42"),
        msgwire.assistant("done"),
    ]
    for policy in (msgwire.Policy(), msgwire.Policy(thinking="to_text"), msgwire.Policy(thinking="keep")):
        converted = formats.convert_request(history, "openai-responses", policy=policy)
        body, report = converted.dict(), converted.report
        _RESPONSES_INPUT.validate_python(body["input"])
        assert not [i for i in body["input"] if i.get("type") == "reasoning"]
        [step] = [e for e in report.entries if e.kind == "thinking"]
        assert step.action == ("drop" if policy.thinking == "drop" else "to_text")
        assert {"role": "assistant", "content": "let me check"} in body["input"]


# --- "{}" for a call without arguments, on every OpenAI-side output ---------------------------------


def _no_arguments() -> AssistantMessage:
    return AssistantMessage(
        provider="anthropic",
        content=[ToolCallBlock(id="toolu_1", name="now", arguments="")],
        stop_reason="tool_use",
        raw_stop_reason="tool_use",
        model="m",
    )


def test_a_call_without_arguments_is_an_empty_object_everywhere_openai_reads() -> None:
    message = _no_arguments()
    # to_response: Chat and Responses
    chat = formats.to_response(message, "openai")
    assert json.loads(chat["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {}
    responses = formats.to_response(message, "openai-responses")
    assert json.loads(responses["output"][0]["arguments"]) == {}
    # to_request: Chat and Responses
    history = [msgwire.user("what time is it"), message, msgwire.tool_result("toolu_1", "noon")]
    body = formats.to_request(history, "openai")
    assert json.loads(body["messages"][1]["tool_calls"][0]["function"]["arguments"]) == {}
    body = formats.to_request(history, "openai-responses")
    [call] = [i for i in body["input"] if i.get("type") == "function_call"]
    assert json.loads(call["arguments"]) == {}
    # streams: the SDKs' accumulators on a transcoded stream of an Anthropic call without input
    source = _anthropic_stream_without_input()
    chunks = b"".join(msgwire.transcode(iter([source]), "anthropic", "openai"))
    completion = openai_final([chunks])
    assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments) == {}
    events, response = sdk_events([b"".join(msgwire.transcode(iter([source]), "anthropic", "openai-responses"))])
    assert json.loads(response.output[0].arguments) == {}
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [json.loads(e.arguments) for e in done] == [{}]


def _anthropic_stream_without_input() -> bytes:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 3}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


# --- one join for a reply's text ----------------------------------------------------------------


@pytest.mark.parametrize("target", ["openai", "ollama"])
def test_streamed_and_non_streamed_writers_join_text_alike(target: str) -> None:
    """The 13 text blocks of a cited Anthropic reply (split at each citation, mid-sentence): a
    transcoded stream and ``to_response`` give the same one string, ``message.text``."""
    data = CITED_ANTHROPIC.read_bytes()
    message = msgwire.assemble(data, "anthropic")
    assert sum(isinstance(b, TextBlock) for b in message.content) > 2
    streamed = msgwire.assemble(b"".join(msgwire.transcode(iter([data]), "anthropic", target)), target)
    body = formats.to_response(message, target)
    text = body["choices"][0]["message"]["content"] if target == "openai" else body["message"]["content"]
    assert streamed.text == text == message.text
