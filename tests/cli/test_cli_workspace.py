"""The example tools of ``msgwire chat`` and the demo, run by the real ``ToolRunner`` on a real
folder: they read what the workspace holds and refuse what it must not give (a path out of it,
through ``..`` or a symlink, and secrets such as ``.env``), as the model is told."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import msgwire
from msgwire.cli.workspace import workspace_tools
from msgwire.harness import ToolRunner


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("import os\nPORT = 8080\nDEBUG = False\n")
    (root / ".env").write_text("TOKEN=hunter2\nPORT = 1\n")
    (root / "blob.bin").write_bytes(b"\0\1\2PORT")
    (tmp_path / "outside.txt").write_text("PORT = 9\n")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    return root


def _call(root: Path, name: str, **arguments: object) -> msgwire.ToolResultMessage:
    message = msgwire.assistant([msgwire.ToolCallBlock(id="c1", name=name, arguments=json.dumps(arguments))])
    with ToolRunner(workspace_tools(root, policy="auto")) as runner:
        (result,) = asyncio.run(runner.run(message))
    return result


def test_read_list_and_grep_what_the_workspace_holds(workspace: Path) -> None:
    assert _call(workspace, "read_file", path="src/app.py", start_line=2, end_line=3).text == (
        "2 | PORT = 8080\n3 | DEBUG = False"
    )
    listing = _call(workspace, "list_dir").text.splitlines()
    assert listing[0] == "src/"
    assert "escape.txt" in listing
    assert _call(workspace, "grep", pattern=r"PORT\s*=").text == "src/app.py:2: PORT = 8080"  # not .env, not the link


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside.txt", "outside the workspace"),
        ("escape.txt", "symbolic link"),
        (".env", "permission denied"),
        ("blob.bin", "binary"),
        ("nope.txt", "no file"),
    ],
)
def test_what_read_file_refuses_the_model_is_told(workspace: Path, path: str, why: str) -> None:
    result = _call(workspace, "read_file", path=path)
    assert (result.status, result.is_error) == ("error", True)
    assert why in result.text
    assert "hunter2" not in result.text


def test_a_line_past_the_end_says_how_long_the_file_is(workspace: Path) -> None:
    assert "has 3 lines" in _call(workspace, "read_file", path="src/app.py", start_line=9).text
