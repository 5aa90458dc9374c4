"""`parse_mentions`: `@path`, `@path:10-20`, `@path:10`, `@"path with spaces":3-5` in user text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from msgwire import FileReferenceBlock, TextBlock, user
from msgwire.harness.resources import find_mentions, parse_mentions
from tests._support.strategies import examples


def refs(text: str, **kw: object) -> list[tuple[str, int | None, int | None]]:
    message = parse_mentions(user(text), **kw)  # type: ignore[arg-type]
    return [(b.path, b.start_line, b.end_line) for b in message.content if type(b) is FileReferenceBlock]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see @src/app.py", [("src/app.py", None, None)]),
        ("see @src/app.py:10-20, thanks", [("src/app.py", 10, 20)]),
        ("line @src/app.py:10 alone", [("src/app.py", 10, 10)]),
        ('read @"docs/my notes.md":3-5 please', [("docs/my notes.md", 3, 5)]),
        ('whole @"a dir/b c.txt".', [("a dir/b c.txt", None, None)]),
        ("ide style @lib/x.rs#L5-L9 and @lib/y.rs#L7", [("lib/x.rs", 5, 9), ("lib/y.rs", 7, 7)]),
        ("ends a sentence: @README.md.", [("README.md", None, None)]),
        ("(@lib/x.rs) and [@a.py]", [("lib/x.rs", None, None), ("a.py", None, None)]),
        ("normalised @./src/../src/app.py", [("src/app.py", None, None)]),
        ("kept for the resolver @../etc/passwd", [("../etc/passwd", None, None)]),
        ("absolute @/etc/hosts:1-2", [("/etc/hosts", 1, 2)]),
        ("twice @a.py and @a.py, once", [("a.py", None, None)]),
        ("mail alice@example.com or bob@x.org", []),
        ("ping @alice and @bob!", []),
        ("bare @ and @/ and @. are nothing", []),
        ("code `@app.route` and ```\n@decorator.x\n``` stays", []),
        ("a backslash path\\@x.py is not a mention", []),
        ("a colon then a space: @src/app.py: it fails", [("src/app.py", None, None)]),
        ("ends with a colon @src/app.py:", [("src/app.py", None, None)]),
        ("an anchor @README.md#Lists", [("README.md", None, None)]),
        ("a range then a full stop @src/app.py:10-20.", [("src/app.py", 10, 20)]),
        ("@bob:hi is a handle saying hi", []),
    ],
)
def test_mentions(text: str, expected: list[tuple[str, int | None, int | None]]) -> None:
    assert refs(text) == expected


@pytest.mark.parametrize(
    ("text", "typed", "path", "error"),
    [
        ("@src/app.py:abc", "@src/app.py:abc", "src/app.py", "'abc' is not a line range (write :10 or :10-20"),
        ("see @src/app.py:-3.", "@src/app.py:-3", "src/app.py", "'-3' is not a line range (write :10 or :10-20"),
        ("@src/app.py:10-x", "@src/app.py:10-x", "src/app.py", "'10-x' is not a line range"),
        ("@src/app.py:5:30", "@src/app.py:5:30", "src/app.py", "'5:30' is not a line range"),
        ("@lib/x.rs#L-3", "@lib/x.rs#L-3", "lib/x.rs", "'-3' is not a line range (write #L10 or #L10-L20"),
        ('@"my notes.md":one', '@"my notes.md":one', "my notes.md", "'one' is not a line range"),
    ],
)
def test_a_range_that_is_not_one_is_refused_with_the_reason(text: str, typed: str, path: str, error: str) -> None:
    """Newcomer finding 24: ``@src/app.py:abc`` and ``@src/app.py:-3`` referenced the whole file."""
    [block] = parse_mentions(user(text)).content[1:]
    assert type(block) is FileReferenceBlock
    assert (block.path, block.start_line, block.end_line, block.status) == (path, None, None, "error")
    assert (block.error or "").startswith(f"{typed!r}: {error}")


def test_a_bare_name_is_a_path_when_it_exists() -> None:
    assert refs("build with @Makefile") == []
    assert refs("build with @Makefile", exists=lambda p: p == "Makefile") == [("Makefile", None, None)]
    assert refs("ask @alice", exists=lambda p: p == "Makefile") == []


def test_the_text_stays_as_typed_and_blocks_follow_it() -> None:
    typed = 'compare @src/a.py:3-5 with @"b c.md"'
    message = user(typed)
    parsed = parse_mentions(message)
    assert parsed.id == message.id
    assert parsed.content[0] == TextBlock(text=typed)
    assert [type(b) for b in parsed.content] == [TextBlock, FileReferenceBlock, FileReferenceBlock]
    assert all(b.status == "pending" for b in parsed.content[1:])  # type: ignore[union-attr]
    mentions = find_mentions(typed)
    assert [typed[m.start : m.end] for m in mentions] == ["@src/a.py:3-5", '@"b c.md"']
    assert [m.typed for m in mentions] == ["@src/a.py:3-5", '@"b c.md"']


def test_no_mention_gives_the_message_itself() -> None:
    message = user("nothing to see")
    assert parse_mentions(message) is message


_words = st.sampled_from(
    [
        "see",
        "@src/a.py",
        "@b.md:3",
        "@c.rs:4-9",
        '@"d e.txt":1-2',
        "@c.rs:x",
        "@b.md#L-2",
        "x@y.com",
        "@handle",
        "`@code.x`",
        ",",
        ".",
    ]
)


@given(st.lists(_words, max_size=12).map(" ".join))
@examples(200)
def test_parsing_twice_changes_nothing_and_keeps_the_text(text: str) -> None:
    once = parse_mentions(user(text))
    assert once.content[0] == TextBlock(text=text)
    assert parse_mentions(once) is once
    for block in once.content[1:]:
        assert type(block) is FileReferenceBlock
        assert "@" not in block.path
        assert block.path not in ("y.com", "handle", "code.x")
