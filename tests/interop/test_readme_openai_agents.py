"""The README's openai-agents examples run as written (their asserts check what they show), in a
fresh interpreter with warnings as errors and openai-agents' tracing off (the examples would
otherwise try to export their traces): the session example (``StoreSession``) twice in the same
directory, leaving nothing behind there (review finding 14: it left ``agents.db`` and failed on
a second run), and the model example (``MsgwireModel``). ``tests/test_typing.py`` checks both
with mypy --strict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(heading: str) -> list[str]:
    text = README.read_text()
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", len(heading))]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_readme_session_example_runs_twice_and_leaves_nothing_behind(tmp_path: Path) -> None:
    (block,) = _blocks("## openai-agents sessions")
    for _ in range(2):
        run = _run(block, tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_the_readme_model_example_runs(tmp_path: Path) -> None:
    blocks = [b for b in _blocks("## msgwire under pydantic-ai and openai-agents") if "interop.openai_agents" in b]
    assert len(blocks) == 1, "the section has one openai-agents example"
    run = _run(blocks[0], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
