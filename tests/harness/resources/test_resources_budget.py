"""TokenBudget: MCP resources pruned least recently used first, never a tool pair broken, every
removal logged and recorded; and `resolve`, the one call before each request."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    FileReferenceBlock,
    ImageBlock,
    MCPResourceBlock,
    TextBlock,
    ToolCallBlock,
    UserMessage,
    assistant,
    formats,
    tool_result,
    user,
)
from msgwire.harness.resources import TokenBudget, estimate_tokens, resolve
from msgwire.harness.resources.ocr import TesseractOCR
from tests._support.images import render
from tests._support.strategies import examples, tool_histories


def resource(uri: str, size: int, at: int | None = None) -> MCPResourceBlock:
    retrieved = dt.datetime.fromtimestamp(at, dt.UTC) if at is not None else None
    return MCPResourceBlock(
        server_name="docs", resource_uri=uri, content="x" * size, status="resolved", retrieved_at=retrieved
    )


def context(*blocks: MCPResourceBlock) -> UserMessage:
    return UserMessage(content=list(blocks), source="context")


def test_estimate_tokens() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde", "é" * 4, "漢字")] == [0, 1, 1, 2, 2, 2]


def test_under_budget_nothing_changes() -> None:
    history = [context(resource("a://1", 40)), user("hi")]
    pruned = TokenBudget(1000).prune(history)
    assert pruned.messages == history
    assert all(a is b for a, b in zip(pruned.messages, history, strict=True))
    assert (pruned.removed, pruned.over_budget) == ([], False)
    assert pruned.tokens == TokenBudget(1000).count(history)


def test_least_recently_used_first_logged_and_recorded(caplog: pytest.LogCaptureFixture) -> None:
    used = {"a://old": 100.0, "a://new": 300.0, "a://mid": 200.0}
    history = [
        context(resource("a://new", 400), resource("a://old", 400)),
        user("question"),
        context(resource("a://mid", 400)),
    ]
    budget = TokenBudget(200, last_used=lambda server, uri: used.get(uri))
    with caplog.at_level(logging.INFO, logger="msgwire.harness.resources"):
        pruned = budget.prune(history)
    assert [r.resource_uri for r in pruned.removed] == ["a://old", "a://mid"]
    assert pruned.tokens <= 200
    assert not pruned.over_budget
    assert pruned.tokens == budget.count(pruned.messages)
    assert [len(m.content) for m in pruned.messages] == [2, 1, 1]  # type: ignore[union-attr]
    assert pruned.messages[0].content[1] == TextBlock(  # type: ignore[union-attr]
        text="(MCP resource a://old from docs left out: token budget)"
    )
    record = pruned.removed[0]
    assert (record.decision, record.actor, record.message_id, record.block, record.last_used) == (
        "context_pruned",
        "resources.budget",
        history[0].id,
        1,
        100.0,
    )
    note = pruned.messages[0].content[1]  # type: ignore[union-attr]
    assert record.tokens == budget.block_tokens(history[0].content[1]) - budget.block_tokens(note)  # type: ignore[union-attr]
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 2
    assert logged[0].startswith(f"pruned MCP resource a://old from docs (message {history[0].id}")
    assert history[0].content[1].content == "x" * 400  # type: ignore[union-attr]  # the history is untouched


def test_without_usage_the_oldest_retrieval_then_the_earliest_position_goes_first() -> None:
    history = [context(resource("a://1", 400), resource("a://2", 400, at=50)), context(resource("a://3", 400, at=10))]
    pruned = TokenBudget(150).prune(history)
    assert [r.resource_uri for r in pruned.removed] == ["a://1", "a://3"]


def test_over_budget_is_said_and_no_turn_is_dropped() -> None:
    history = [user("x" * 4000), context(resource("a://1", 400), resource("a://2", 20))]
    pruned = TokenBudget(100).prune(history)
    assert len(pruned.messages) == 2
    assert pruned.over_budget
    assert [r.resource_uri for r in pruned.removed] == ["a://1"]


def test_a_resource_in_a_tool_result_goes_but_the_result_stays() -> None:
    call = ToolCallBlock(id="call_1", name="fetch_docs", arguments='{"q": "port"}')
    history = [
        user("what port?"),
        assistant([call]),
        tool_result("call_1", [resource("a://doc", 800)]),
        assistant("8080"),
    ]
    pruned = TokenBudget(100).prune(history)
    assert [type(m) for m in pruned.messages] == [type(m) for m in history]
    assert pruned.messages[1] is history[1]
    msgwire.validate(pruned.messages)
    converted = formats.convert_request(pruned.messages, "anthropic")
    body, report = converted.dict(), converted.report
    assert not report.by_kind("tool_result")  # no placeholder: the result is still there
    assert body["messages"][2]["content"][0]["content"] == "(MCP resource a://doc from docs left out: token budget)"


def _kept(blocks: list[Any]) -> list[Any]:
    note = "left out: token budget)"
    return [
        b for b in blocks if type(b) is not MCPResourceBlock and not (type(b) is TextBlock and b.text.endswith(note))
    ]


_resources = st.builds(
    lambda uri, size, at: resource(uri, size, at),
    st.sampled_from(["a://1", "a://2", "b://3"]),
    st.integers(0, 300),
    st.none() | st.integers(0, 100),
)


@given(
    tool_histories(),
    st.lists(st.tuples(st.integers(0, 30), st.lists(_resources, min_size=1, max_size=3))),
    st.integers(1, 400),
)
@examples(60)
def test_pruning_keeps_every_message_and_every_tool_pair(history: list[Any], inserts: list[Any], limit: int) -> None:
    history = list(history)
    for at, blocks in inserts:
        history.insert(min(at, len(history)), context(*blocks))
    budget = TokenBudget(limit)
    pruned = budget.prune(history)
    assert [m.id for m in pruned.messages] == [m.id for m in history]
    for before, after in zip(history, pruned.messages, strict=True):
        assert type(after) is type(before)
        if type(before) is msgwire.SystemControlMessage:
            continue
        assert len(after.content) == len(before.content)  # a resource is replaced where it stood
        assert _kept(after.content) == _kept(before.content)  # tool calls, results' text: all there
    assert pruned.tokens == budget.count(pruned.messages)
    assert pruned.over_budget == (pruned.tokens > limit)
    resources_left = sum(type(b) is MCPResourceBlock for m in pruned.messages for b in getattr(m, "content", []))
    resources_before = sum(type(b) is MCPResourceBlock for m in history for b in getattr(m, "content", []))
    assert resources_before - resources_left == len(pruned.removed)
    if pruned.over_budget:  # every resource left is one whose note would cost as much
        for m in pruned.messages:
            for b in getattr(m, "content", []):
                if type(b) is MCPResourceBlock:
                    note = TextBlock(
                        text=f"(MCP resource {b.resource_uri} from {b.server_name} left out: token budget)"
                    )
                    assert budget.block_tokens(b) <= budget.block_tokens(note)


def test_resolve_is_the_one_call_before_a_request(tmp_path: Path) -> None:
    from msgwire.harness.resources import FileResolver, ImageRecognizer, parse_mentions

    (tmp_path / "app.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "scan.png").write_bytes(render(["Invoice total 1234 EUR"]))
    plain = user("hello")
    typed = parse_mentions(user("see @app.py:2 and @nope.py"))
    scan = user([TextBlock(text="what does it say?"), ImageBlock(source=msgwire.PathSource(path="scan.png"))])
    with TesseractOCR() as ocr:
        files = FileResolver(tmp_path)
        images = ImageRecognizer(ocr=ocr, files=files)
        history = [plain, typed, scan]
        resolved = resolve(history, [files, images])
        assert resolved[0] is plain
        refs = [b for b in resolved[1].content if type(b) is FileReferenceBlock]  # type: ignore[union-attr]
        assert [(b.status, b.resolved_content) for b in refs] == [("resolved", "b = 2\n"), ("error", None)]
        image = resolved[2].content[1]  # type: ignore[union-attr]
        assert (image.status, image.mode_used, image.recognized_text) == ("resolved", "ocr", "Invoice total 1234 EUR")  # type: ignore[union-attr]
        again = resolve(resolved, [files, images])
        assert all(a is b for a, b in zip(again, resolved, strict=True))
