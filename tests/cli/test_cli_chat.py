"""``msgwire chat`` and ``msgwire audit``, as a user runs them: the command in its own process,
its input piped, against the scripted model server on 127.0.0.1 (and, for ``/resource``, the
test MCP server over stdio). No mocks: the tools read real files of a workspace folder, and
the conversations are stored in a data directory of the test's own (tests/_support/cli.py).
Storing and resuming them: test_cli_sessions.py."""

from __future__ import annotations

import json
import os
import pty
import select
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from msgwire.harness import Conversation
from msgwire.testing import ScriptedServer, error, reply, tool_call
from tests._support import cli

ROOT = Path(__file__).resolve().parents[2]
MCP_SERVER = ROOT / "tests" / "harness" / "resources" / "mcp_resource_server.py"


def _png(width: int = 8, height: int = 8) -> bytes:
    """A white PNG written by hand (what the image loader sniffs: signature, IHDR, data)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "app.py").write_text("import os\nPORT = 8080\nDEBUG = False\n")
    (folder / "notes.txt").write_text("buy milk\ncall mom\n")
    (folder / "shot.png").write_bytes(_png())
    return folder


def _chat(server: ScriptedServer, workspace: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    env = cli.environment(workspace.parent)
    return cli.chat(server.url, lines, "--workspace", str(workspace), *extra, env=env, cwd=workspace)


def test_a_chat_session_end_to_end(workspace: Path) -> None:
    script = [
        reply([tool_call("read_file", {"path": "notes.txt"}), tool_call("grep", {"pattern": "PORT"})]),
        reply("notes.txt says: buy milk, call mom."),
        reply("A screenshot, all white."),  # the image, read by vision (gpt-4o sees)
        reply([tool_call("read_file", {"path": "app.py"})]),
        reply("The image is blank; the readme says port 8080."),
        reply("Plan: 1. read app.py."),
    ]
    with ScriptedServer(script) as server:
        done = _chat(
            server,
            workspace,
            [
                "What do @app.py:2-3 and notes.txt say? Grep PORT too.",
                "a",  # read_file
                "d",  # grep
                "not needed",
                "/image shot.png",
                "/resource docs docs://readme",
                "What is in the image and the readme?",
                "e",
                '{"path": "notes.txt", "start_line": 1, "end_line": 1}',
                "/mode plan",
                "/fork",
                "What next?",
                "/save trail.jsonl",
                "/audit",
                "/quit",
            ],
            "--mcp",
            f"docs={sys.executable} {MCP_SERVER}",
        )
        requests = server.wait(6)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    # the mention, the decisions, the tools' real output, the streamed answers
    assert "📎 app.py: resolved" in out
    assert "✓ read_file approved by user" in out
    assert "✗ grep denied by user: not needed" in out
    assert "→ read_file: 1 | buy milk 2 | call mom" in out
    assert "notes.txt says: buy milk, call mom." in out
    assert "✓ read_file approved by user (arguments edited)" in out
    assert "→ read_file: 1 | buy milk" in out.split("(arguments edited)")[1]
    # what the model was sent
    first = requests[0].json()["messages"]
    assert "2 | PORT = 8080\n3 | DEBUG = False" in first[-1]["content"][1]["text"]
    vision = requests[2].json()["messages"][0]["content"]
    assert any(part["type"] == "image_url" for part in vision)
    asked = requests[3].json()["messages"]
    assert any('<mcp_resource server="docs" uri="docs://readme"' in str(m["content"]) for m in asked)
    assert any(p.get("type") == "image_url" for m in asked if isinstance(m["content"], list) for p in m["content"])
    assert requests[5].json()["messages"][0]["content"].startswith("You are a careful coding assistant in planning")
    # the commands
    assert "docs:docs://readme attached (text/markdown" in out
    assert "🖼 shot.png attached" in out
    assert "mode plan:" in out
    assert "forked: conversation" in out
    assert "hash chain verified" in out
    trail = Conversation.load_audit(workspace / "trail.jsonl")
    assert trail.verify()
    assert trail.parent is not None
    assert trail.mode == "plan"
    decisions = [e.decision for e in trail.entries]
    for decision in ("resources_resolved", "tool_call_denied", "permission_denied", "mode_change", "tool_executed"):
        assert decision in decisions
    edited = next(e for e in trail.entries if e.decision == "tool_call_approved" and e.audit.get("edited"))
    assert edited.audit["reason"] == "edited by the user"


def test_the_audit_command_shows_the_timeline_and_catches_a_change(workspace: Path) -> None:
    script = [reply([tool_call("read_file", {"path": "notes.txt"})]), reply("It says buy milk.")]
    with ScriptedServer(script) as server:
        done = _chat(server, workspace, ["Read notes.txt", "a", "/save trail.json", "/quit"])
    assert done.returncode == 0, done.stderr
    path = workspace / "trail.json"
    shown = subprocess.run(
        [sys.executable, "-m", "msgwire", "audit", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.returncode == 0, shown.stderr
    for word in ("user_input", "tool_call_requested", "tool_call_approved", "tool_executed", "planning"):
        assert word in shown.stdout
    assert "1 model call(s)" not in shown.stdout  # two: the call, then the answer
    assert "2 model call(s)" in shown.stdout
    assert "✓ hash chain verified: 5 entries" in shown.stdout
    document = json.loads(path.read_text())
    document["entries"][2]["audit"]["by"] = "somebody else"
    path.write_text(json.dumps(document))
    broken = subprocess.run(
        [sys.executable, "-m", "msgwire", "audit", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert broken.returncode == 1
    assert "✗ hash chain broken at seq 2" in broken.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "msgwire", "audit", str(workspace / "nope.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2
    assert "no such file" in missing.stderr


def test_chat_needs_a_model(workspace: Path) -> None:
    with ScriptedServer() as server:
        env = cli.environment(workspace.parent)
        done = cli.msgwire("chat", "--provider", "openai", "--base-url", server.url, env=env, cwd=workspace)
    assert done.returncode == 2
    assert "no model" in done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a pseudo-terminal needs fork")
def test_a_chat_on_a_terminal_prompts_and_streams(workspace: Path) -> None:
    """On a pseudo-terminal the chat prompts with ``input`` (nothing is echoed for it) and the
    answer streams in; the approval question waits for the key."""
    with ScriptedServer([reply([tool_call("list_dir", {})]), reply("Three files.")]) as server:
        command = [sys.executable, "-m", "msgwire", "chat", "--provider", "openai", "--base-url", server.url]
        command += ["--model", "gpt-4o", "--api-key", "sk-test", "--workspace", str(workspace)]
        env = cli.environment(workspace.parent)
        pid, fd = pty.fork()
        if pid == 0:  # the child: the chat, its terminal the pty
            os.execve(sys.executable, command, env)
        seen = bytearray()

        def until(token: bytes, timeout: float = 30.0) -> bool:
            deadline = time.monotonic() + timeout
            while token not in seen and time.monotonic() < deadline:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        seen.extend(os.read(fd, 4096))
                    except OSError:
                        break
            return token in seen

        try:
            assert until(b"you> ")
            os.write(fd, b"What is here?\r")
            assert until(b"[a]pprove / [d]eny / [e]dit? ")
            os.write(fd, b"a\r")
            assert until(b"Three files.")
            assert until(b"you> ", 10)
            os.write(fd, b"/quit\r")
        finally:
            _, status = os.waitpid(pid, 0)
            os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"app.py" in seen  # list_dir ran, approved on the terminal


def test_a_failed_model_call_is_shown_once_and_the_chat_goes_on(workspace: Path) -> None:
    """The loop's ``stream_failed`` event says it; the run ends there (newcomer finding 18: it
    was printed again as the exception)."""
    script = [error(400, "the model is not available to you"), reply("Back again.")]
    with ScriptedServer(script) as server:
        done = _chat(server, workspace, ["hi", "still there?"])
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())  # the console wraps long lines (the error names its URL)
    assert shown.count("the model is not available to you") == 1
    assert "at POST http://127.0.0.1:" in shown
    assert "error," in done.stdout  # the run's end: (1 step(s), error, ...)
    assert "Back again." in done.stdout


def test_the_approval_prompt_says_what_the_answers_are(workspace: Path) -> None:
    """An answer it does not know, a wrong-typed edit typed at the prompt among them, is
    answered with the three answers (newcomer finding 20), then asked again."""
    with ScriptedServer([reply([tool_call("grep", {"pattern": "PORT"})]), reply("Found it.")]) as server:
        done = _chat(server, workspace, ["Grep PORT", "maybe", '{"pattern": 5}', "a"])
    assert done.returncode == 0, done.stderr
    hint = "the answers are a (approve), d (deny, then a reason) or e (edit the arguments, as a JSON object)"
    assert f"maybe? {hint}" in done.stdout
    assert f'{{"pattern": 5}}? {hint}' in done.stdout
    assert "✓ grep approved by user" in done.stdout


def test_switching_to_the_mode_in_force_says_so_and_records_nothing(workspace: Path) -> None:
    """``/mode act`` in act (newcomer finding 19): no mode_change in the trail, no "system prompt
    changed" in its timeline; a real switch still records one."""
    with ScriptedServer([reply("Hello.")]) as server:
        done = _chat(server, workspace, ["hi", "/mode act", "/mode plan", "/save trail.json"])
    assert done.returncode == 0, done.stderr
    assert "already in mode act: nothing changed" in done.stdout
    trail = Conversation.load_audit(workspace / "trail.json")
    changes = [e.message.params for e in trail.entries if e.decision == "mode_change"]  # type: ignore[union-attr]
    assert changes == [{"old": "act", "new": "plan"}]


def test_the_timeline_says_a_prompt_changed_only_when_it_did() -> None:
    """A no-op mode change as older versions recorded it (act -> act, the same prompt on both
    sides) is shown without "system prompt changed"."""
    from rich.console import Console

    from msgwire import system_control
    from msgwire.cli.timeline import timeline

    conversation = Conversation(modes={"act": "Act.", "plan": "Plan."}, mode="act")
    same = {"system_prompt": {"old": "Act.", "new": "Act."}}
    conversation.add(system_control("mode_change", old="act", new="act"), "mode_change", same)
    conversation.switch_mode("plan")
    out = Console(width=200, record=True)
    out.print(timeline(conversation.entries))
    rows = [line for line in out.export_text().splitlines() if "mode_change" in line]
    assert len(rows) == 2
    assert "system prompt changed" not in rows[0]
    assert "system prompt changed" in rows[1]


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ("{}", "no entries and no conversation_id"),
        ('{"hello": 1}', "no entries and no conversation_id"),
        ("[]", "Expected `object`, got `array`"),
        ("hello", "JSON is malformed"),
    ],
)
def test_audit_refuses_a_file_that_is_no_audit_trail(tmp_path: Path, document: str, why: str) -> None:
    """Exit 1 and "not an audit trail" with the reason, as ``--help`` says (newcomer finding 4)."""
    path = tmp_path / "not-a-trail.json"
    path.write_text(document)
    done = cli.msgwire("audit", str(path), env=cli.environment(tmp_path))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"msgwire audit: not an audit trail: {path}: {why}")


@pytest.mark.parametrize("command", ["chat", "audit", "sessions"])
def test_help_is_plain_text(tmp_path: Path, command: str) -> None:
    """The help comes from the module's docstring, without its ``literal`` markup (newcomer
    finding 17); chat's and sessions' say where conversations are kept."""
    done = cli.msgwire(command, "--help", env=cli.environment(tmp_path) | {"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert "``" not in done.stdout
    assert f"msgwire {command}" in done.stdout
    if command != "audit":
        assert "~/.local/share/msgwire/" in done.stdout
        assert str(tmp_path / "data" / "msgwire" / "sessions.db") in "".join(done.stdout.split())
    assert max(len(line) for line in done.stdout.splitlines()) <= 100


def test_chat_refuses_a_base_url_without_scheme_at_start(workspace: Path) -> None:
    env = cli.environment(workspace.parent)
    done = cli.chat("localhost:47811", ["hello"], env=env, cwd=workspace)
    assert done.returncode == 2
    assert "base_url 'localhost:47811'" in done.stderr
    assert "'http://localhost:47811'" in done.stderr
