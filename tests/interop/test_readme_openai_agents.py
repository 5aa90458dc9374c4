"""The README's openai-agents example runs as written (its asserts check what it shows), in a
directory of its own (it makes ``agents.db`` where it runs) and with openai-agents' tracing off
(the example would otherwise try to export its traces)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## openai-agents sessions"


def test_the_readme_openai_agents_example_runs(tmp_path: Path) -> None:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the section has one runnable example"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    run = subprocess.run(
        [sys.executable, "-c", blocks[0]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "agents.db").is_file()
