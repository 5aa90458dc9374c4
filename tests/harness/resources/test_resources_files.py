"""`FileResolver`: a real workspace in tmp_path (files, symlinks, binary and non-UTF-8 files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from msgwire import FileReferenceBlock, TextBlock, formats, user
from msgwire.errors import ResourceError
from msgwire.harness.resources import FileResolver, Rules, parse_mentions


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "docs" / "my notes").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "src" / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 13)))
    (root / "docs" / "my notes" / "a b.md").write_text("# Notes\nfirst\nsecond\n")
    (root / "docs" / "empty.txt").write_text("")
    (root / ".env").write_text("TOKEN=hunter2\n")
    (root / "secrets" / "db.txt").write_text("password\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (root / "big.txt").write_text("x" * 50 + "\n" + "short\n" * 3 + "y" * 5000 + "\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    (root / "src" / "link_out.txt").symlink_to(tmp_path / "outside.txt")
    (root / "src" / "link_env").symlink_to(root / ".env")
    (root / "src" / "link_in.txt").symlink_to(root / "docs" / "my notes" / "a b.md")
    return root


def ref(path: str, start: int | None = None, end: int | None = None) -> FileReferenceBlock:
    return FileReferenceBlock(path=path, start_line=start, end_line=end)


def test_whole_file_and_line_ranges(workspace: Path) -> None:
    files = FileResolver(workspace)
    whole = files.resolve(ref("src/app.py"))
    assert (whole.status, whole.error) == ("resolved", None)
    assert whole.resolved_content == (workspace / "src" / "app.py").read_text()
    assert files.resolve(ref("src/app.py", 3, 4)).resolved_content == "line 3\nline 4\n"
    assert files.resolve(ref("src/app.py", 12, 12)).resolved_content == "line 12\n"
    assert files.resolve(ref("src/app.py", 1, 12)).resolved_content == whole.resolved_content
    spaced = files.resolve(ref("docs/my notes/a b.md", 2, 3))
    assert spaced.resolved_content == "first\nsecond\n"
    assert files.resolve(ref(str(workspace / "src" / "app.py"), 2, 2)).resolved_content == "line 2\n"
    assert files.resolve(ref("docs/empty.txt")).resolved_content == ""
    assert files.resolve(ref("src/link_in.txt", 1, 1)).resolved_content == "# Notes\n"  # a link inside is fine


@pytest.mark.parametrize(
    ("block", "error"),
    [
        (ref("src/app.py", 13, 13), "'src/app.py' has 12 lines: lines 13 run past its end"),
        (ref("src/app.py", 10, 20), "'src/app.py' has 12 lines: lines 10-20 run past its end"),
        (ref("src/app.py", 5, 3), "the range 5-3 ends before it starts"),
        (ref("src/app.py", 0, 2), "line numbers start at 1"),
        (ref("nope.py"), "file not found: 'nope.py'"),
        (ref("src"), "'src' is a directory, not a file"),
        (ref("../outside.txt"), "'../outside.txt' is outside the workspace root"),
        (ref("src/../../outside.txt"), "'src/../../outside.txt' is outside the workspace root"),
        (ref("src/link_out.txt"), "'src/link_out.txt' leads outside the workspace root (through a symbolic link)"),
        (ref("logo.png"), "'logo.png' is a binary file"),
        (ref("latin1.txt"), "'latin1.txt' is not valid UTF-8 (byte 3)"),
        (ref(".env"), "permission denied: role 'user' may not read '.env' (denied by '.env')"),
        (ref("src/link_env"), "permission denied: role 'user' may not read 'src/link_env' (denied by '.env')"),
        (ref(""), "empty path"),
    ],
)
def test_every_bad_reference_is_an_error_on_the_block(workspace: Path, block: FileReferenceBlock, error: str) -> None:
    resolved = FileResolver(workspace).resolve(block)
    assert (resolved.status, resolved.error, resolved.resolved_content) == ("error", error, None)


def test_absolute_paths_outside_the_root_are_refused(workspace: Path, tmp_path: Path) -> None:
    outside = str(tmp_path / "outside.txt")
    assert FileResolver(workspace).resolve(ref(outside)).error == f"{outside!r} is outside the workspace root"
    assert FileResolver(workspace, extra_roots=[tmp_path]).resolve(ref(outside)).resolved_content == "outside\n"
    anywhere = FileResolver(workspace, allow_any_path=True)  # the caller opts in
    assert anywhere.resolve(ref(outside)).resolved_content == "outside\n"
    assert anywhere.resolve(ref("../outside.txt")).resolved_content == "outside\n"
    assert anywhere.resolve(ref("src/link_out.txt")).resolved_content == "outside\n"
    denied = "permission denied: role 'user' may not read '.env' (denied by '.env')"
    assert anywhere.resolve(ref(".env")).error == denied  # the deny list still applies


def test_without_a_root_nothing_outside_the_working_directory_is_read(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newcomer finding 11: ``FileResolver()`` read any absolute path, ``/etc/shadow`` included."""
    monkeypatch.chdir(workspace)
    files = FileResolver()
    assert files.resolve(ref("src/app.py", 1, 1)).resolved_content == "line 1\n"  # relative to the working directory
    outside = str(tmp_path / "outside.txt")
    assert files.resolve(ref(outside)).error == f"{outside!r} is outside the working directory"
    assert files.resolve(ref("/etc/shadow")).error == "'/etc/shadow' is outside the working directory"
    assert files.resolve(ref("../outside.txt")).error == "'../outside.txt' is outside the working directory"
    assert files.resolve(ref("src/link_out.txt")).error == (
        "'src/link_out.txt' leads outside the working directory (through a symbolic link)"
    )
    assert not files.exists(outside)
    monkeypatch.chdir(tmp_path)  # the directory of when it was made counts, not today's
    assert files.resolve(ref("src/app.py", 2, 2)).resolved_content == "line 2\n"
    assert FileResolver(allow_any_path=True).resolve(ref(outside)).resolved_content == "outside\n"


def test_a_root_that_is_not_a_directory_is_refused(workspace: Path, tmp_path: Path) -> None:
    """Newcomer finding 24: a missing root was only ever reported as 'file not found: a.py'."""
    missing = tmp_path / "nonexistent"
    does_not_exist = re.escape(f"the workspace root '{missing}' does not exist")
    with pytest.raises(ValueError, match=f"^{does_not_exist}$"):
        FileResolver(missing)
    with pytest.raises(ValueError, match=f"^{does_not_exist}$"):
        FileResolver(workspace, extra_roots=[missing])
    not_a_directory = re.escape(f"the workspace root '{tmp_path / 'outside.txt'}' is not a directory")
    with pytest.raises(ValueError, match=f"^{not_a_directory}$"):
        FileResolver(tmp_path / "outside.txt")
    # a root removed after the resolver was made
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "a.py").write_text("x\n")
    files = FileResolver(gone)
    (gone / "a.py").unlink()
    gone.rmdir()
    assert files.resolve(ref("a.py")).error == f"the workspace root '{gone}' does not exist any more"


def test_a_symlinked_workspace_root_still_contains_its_files(workspace: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    assert FileResolver(alias).resolve(ref("src/app.py", 1, 1)).resolved_content == "line 1\n"


def test_size_limits(workspace: Path) -> None:
    files = FileResolver(workspace, max_bytes=100)
    whole = files.resolve(ref("big.txt"))
    size = (workspace / "big.txt").stat().st_size
    assert whole.error == f"'big.txt' is {size:,} bytes, over the limit of 100"
    # a range of a file over the limit is read when the range itself fits
    assert files.resolve(ref("big.txt", 2, 4)).resolved_content == "short\n" * 3
    assert files.resolve(ref("big.txt", 4, 5)).error == "lines 4-5 of 'big.txt' are over the limit of 100 bytes"


def test_role_permissions_deny_always_wins(workspace: Path) -> None:
    permissions = {
        "planner": Rules(allow=("docs/**", "src/*.py")),
        "agent": Rules(allow=("**",), deny=("secrets",)),
        "reader": Rules(allow=("**",), deny=("src/app.py",)),
    }
    files = FileResolver(workspace, permissions=permissions)
    assert files.resolve(ref("src/app.py", 1, 1), role="planner").status == "resolved"
    assert files.resolve(ref("docs/my notes/a b.md"), role="planner").status == "resolved"
    assert files.resolve(ref("secrets/db.txt"), role="planner").error == (
        "permission denied: role 'planner' may not read 'secrets/db.txt' (no allow rule matches)"
    )
    assert files.resolve(ref("secrets/db.txt"), role="agent").error == (
        "permission denied: role 'agent' may not read 'secrets/db.txt' (denied by 'secrets')"
    )
    assert files.resolve(ref("src/app.py"), role="agent").status == "resolved"
    # the allow-all rule does not beat the deny rule, nor the global deny list
    assert files.resolve(ref("src/app.py"), role="reader").error == (
        "permission denied: role 'reader' may not read 'src/app.py' (denied by 'src/app.py')"
    )
    assert files.resolve(ref(".env"), role="agent").error == (
        "permission denied: role 'agent' may not read '.env' (denied by '.env')"
    )
    assert files.resolve(ref("src/app.py"), role="stranger").error == (
        "permission denied: role 'stranger' has no file permissions"
    )
    # through a link, the real path is checked too
    assert files.resolve(ref("src/link_in.txt"), role="planner").status == "resolved"
    assert files.resolve(ref("src/link_env"), role="agent").status == "error"
    # the global list can be replaced
    assert FileResolver(workspace, deny=()).resolve(ref(".env")).resolved_content == "TOKEN=hunter2\n"


def test_check_raises_for_explicit_lookups(workspace: Path) -> None:
    files = FileResolver(workspace)
    assert files.check("src/app.py") == (workspace / "src" / "app.py").resolve()
    with pytest.raises(ResourceError, match="outside the workspace root"):
        files.check("../outside.txt")
    assert files.exists("src/app.py")
    assert not files.exists("src")
    assert not files.exists("../outside.txt")


def test_a_fifo_is_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    assert FileResolver(workspace).resolve(ref("pipe")).error == "'pipe' is not a regular file"


def test_a_message_with_mentions_resolves_and_renders_numbered(workspace: Path) -> None:
    """End to end: typed text -> blocks -> resolved -> the request text the Rust core writes."""
    files = FileResolver(workspace)
    typed = 'look at @src/app.py:9-10 and @"docs/my notes/a b.md":2 and @.env and @missing.py'
    message = files.resolve_message(parse_mentions(user(typed)))
    assert message.content[0] == TextBlock(text=typed)
    assert [b.status for b in message.content[1:]] == ["resolved", "resolved", "error", "error"]  # type: ignore[union-attr]
    body = formats.to_request([message], "openai")
    texts = [p["text"] for p in body["messages"][0]["content"]]
    assert texts[1] == '<file path="src/app.py" lines="9-10">\n 9 | line 9\n10 | line 10\n</file>'
    assert texts[2] == '<file path="docs/my notes/a b.md" lines="2-2">\n2 | first\n</file>'
    assert texts[3].startswith('<file path=".env" status="error" error="permission denied')
    assert texts[4] == '<file path="missing.py" status="error" error="file not found: \'missing.py\'"/>'
    # resolving again changes nothing: only pending blocks are read
    assert files.resolve_message(message) is message


def test_a_mention_with_a_bad_range_is_not_read_whole(workspace: Path) -> None:
    files = FileResolver(workspace)
    message = files.resolve_message(parse_mentions(user("what about @src/app.py:abc and @src/app.py:2")))
    refused, line = message.content[1:]  # type: ignore[union-attr]
    assert (refused.status, refused.resolved_content) == ("error", None)  # type: ignore[union-attr]
    assert refused.error.startswith("'@src/app.py:abc': 'abc' is not a line range")  # type: ignore[union-attr]
    assert line.resolved_content == "line 2\n"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("pattern", "path", "denied"),
    [
        ("*.py", "src/app.py", True),  # a name pattern matches at any depth
        ("src/*.py", "src/app.py", True),
        ("*/app.py", "src/app.py", True),
        ("app.py", "src/app.py", True),
        ("src", "src/app.py", True),  # a directory covers its contents
        ("src/", "src/app.py", True),
        ("docs/**", "docs/my notes/a b.md", True),
        ("**/a b.md", "docs/my notes/a b.md", True),
        ("docs/*.md", "docs/my notes/a b.md", False),  # * stays within one name
        ("app.p?", "src/app.py", True),
        ("[!a]pp.py", "src/app.py", False),
        ("[a]pp.py", "src/app.py", True),
        ("App.py", "src/app.py", False),  # case-sensitive
        ("sr", "src/app.py", False),
    ],
)
def test_globs(workspace: Path, pattern: str, path: str, denied: bool) -> None:
    resolved = FileResolver(workspace, deny=(pattern,)).resolve(ref(path))
    assert (resolved.status == "error") is denied, resolved.error


def test_absolute_globs_match_the_real_path(workspace: Path) -> None:
    real = (workspace / "src").resolve()
    files = FileResolver(workspace, deny=(f"{real}/*.py",))
    assert files.resolve(ref("src/app.py")).status == "error"
    assert files.resolve(ref("docs/empty.txt")).status == "resolved"
