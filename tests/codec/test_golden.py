"""Golden documents: hand-written canonical sessions (tests/golden/*.json) that loads reads and
dumps writes back to exactly the same bytes. Each file is the canonical text plus one final
newline (the only byte not compared).

- full.json: every message and block type with every optional field set to a non-default value.
- minimal.json: every type with only its required fields (defaults are left out when written).
- empty.json: no messages, an empty system prompt.
- unknown.json: unknown messages and blocks, with odd whitespace and key order inside them.
- text.json: every escape msgspec writes and the characters it leaves raw (U+2028, DEL, emoji...).
- numbers.json: floats in both notations and at their limits, i64 and u64 extremes.
"""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec
import pytest

import msgwire
from msgwire import Session, UnknownBlock, UnknownMessage

GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.json"))


def test_the_corpus_is_there() -> None:
    assert {p.stem for p in GOLDEN} >= {"full", "minimal", "empty", "unknown", "text", "numbers"}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_document_round_trips_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    assert raw.endswith(b"}\n")
    doc = raw[:-1]
    session = msgwire.loads(doc)
    assert msgwire.dumps(session) == doc
    assert msgwire.loads(doc.decode()) == session


def test_full_document_sets_every_field() -> None:
    """Guards the corpus itself: every field of every type is present somewhere in full.json."""
    doc = msgwire.loads((Path(__file__).parents[1] / "golden" / "full.json").read_bytes())
    seen: dict[str, set[str]] = {}

    def visit(obj: object) -> None:
        if isinstance(obj, list):
            for item in obj:
                visit(item)
        elif isinstance(obj, msgspec.Struct):
            name = type(obj).__name__
            for field in obj.__struct_fields__:
                value = getattr(obj, field)
                default = next(f.default for f in msgspec.structs.fields(obj) if f.name == field)
                if value != default and value not in ([], {}):
                    seen.setdefault(name, set()).add(field)
                visit(value)

    visit(doc)
    for cls, fields in seen.items():
        expected = {f.name for f in msgspec.structs.fields(getattr(msgwire, cls))} - {"version"}
        assert fields == expected, cls
    assert set(seen) >= {
        "Session", "UserMessage", "AssistantMessage", "ToolResultMessage", "SystemControlMessage", "TextBlock",
        "ThinkingBlock", "ImageBlock", "UrlSource", "Base64Source", "PathSource", "FileReferenceBlock",
        "MCPResourceBlock", "ToolCallBlock", "Usage", "ToolError",
    }  # fmt: skip


def test_unknown_document_keeps_its_unknown_objects(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="msgwire"):
        session = msgwire.loads((Path(__file__).parents[1] / "golden" / "unknown.json").read_bytes())
    assert isinstance(session, Session)
    kinds = [type(m) for m in session.messages]
    assert kinds.count(UnknownMessage) == 2
    blocks = [b for m in session.messages for b in getattr(m, "content", [])]
    assert [b.type for b in blocks if type(b) is UnknownBlock] == ["smell", "video"]
