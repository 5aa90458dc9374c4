"""The README's main job, `make demo`, runs `python -m msgwire demo`: it must work and say
what it shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_shows_every_message_type() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "msgwire", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for kind in ("user", "assistant", "tool_result", "system_control"):
        assert f"\n  {kind} " in out, kind
    for block in ("text", "thinking", "tool_call", "file", "image", "mcp"):
        assert f"\n      {block} " in out, block
    assert "Rust reads and rewrites them identically: True" in out
    assert "get_weather" in out  # the legacy rows were migrated


def test_unknown_command_fails_with_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "msgwire", "nonsense"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "invalid choice" in done.stderr
