"""The README's main job, `make demo`, runs `python -m msgwire demo`: it must work and say
what it shows (not on a terminal here, so the recordings are decoded without the replay pace)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_and_shows_every_message_type(tmp_path: Path) -> None:
    # from outside the checkout: the examples are package data, not files of the source tree
    done = subprocess.run(
        [sys.executable, "-m", "msgwire", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for kind in ("user", "assistant", "tool_result", "system_control"):
        assert f"\n  {kind} " in out, kind
    for block in ("text", "thinking", "tool_call", "file", "image", "mcp"):
        assert f"\n      {block} " in out, block
    assert "Rust reads and rewrites them identically: True" in out
    assert "get_weather" in out  # the legacy rows were migrated


def test_demo_replays_every_dialect_converts_and_compares_speed(tmp_path: Path) -> None:
    # run outside the checkout: the examples ship inside the package
    done = subprocess.run(
        [sys.executable, "-m", "msgwire", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # 4. one recording per dialect, each assembled (a panel titled with provider and model)
    for provider, model in (
        ("openai", "gpt-4o-2024-08-06"),
        ("anthropic", "claude-sonnet-4-20250514"),
        ("openai", "gpt-5.5-2026-04-23"),
        ("gemini", "gemini-2.5-pro"),
        ("ollama", "gpt-oss:120b"),
    ):
        assert f"assistant · {provider} · {model} · stop=" in out, model
    assert "⚙ get_weather" in out  # tool calls with their arguments
    assert '"city": "Mexico City"' in out
    # ... and the one that fails mid-stream: the error, its byte offset, the partial message
    assert "✗ ProviderError at byte 27760" in out
    assert "the partial message is kept: 1 block(s), stop_reason=error" in out
    # 5. a conversion across providers with its loss report
    assert "anthropic → openai: 2 lossy step(s)" in out
    assert "the target's requests carry no thinking" in out
    # 6. the speed comparison: msgwire and at least the openai SDK measured side by side
    assert "msgwire beside its peers" in out
    assert "openai SDK" in out
    assert "reference" in out
    assert "error:" not in out.split("7. Speed")[1]  # every peer's result matched msgwire's
    assert "read back as OpenAI chunks: the same text, reasoning and usage: True" in out
    assert "data: [DONE]" in out
    # 8. the agent session against the scripted model: two calls at once, one run, one denied
    agent = out.split("8. An agent session")[1]
    assert "⚙ read_file" in agent
    assert "⚙ delete_file" in agent
    assert "✓ read_file approved by policy" in agent
    assert "✗ delete_file denied by user: keep the notes" in agent
    assert "port = 8080" in agent  # the tool really read the file
    assert "I did not delete notes.md" in agent
    assert "notes.md still there: True" in agent
    assert "📎 @notes.md:3-4: resolved" in agent
    assert "🖼 read by" in agent
    assert ("📎 MCP resource docs://readme attached" in agent) is (importlib.util.find_spec("mcp") is not None)
    for decision in ("user_input", "tool_call_requested", "tool_call_approved", "tool_call_denied", "planning"):
        assert decision in agent
    assert "✓ hash chain verified: " in agent
    assert "2 turn(s), 0 changed, 2 recorded result(s) reused, no tool ran again" in agent


def test_the_examples_are_package_data() -> None:
    import msgwire
    from msgwire.cli.demo import examples_dir

    assert examples_dir() == Path(msgwire.__file__).resolve().parent / "examples"


def test_unknown_command_fails_with_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "msgwire", "nonsense"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "invalid choice" in done.stderr
