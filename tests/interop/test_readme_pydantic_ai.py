"""The README's pydantic-ai example (the one-line swap to ``MsgwireModel``) runs as written, in a
fresh interpreter with warnings as errors; ``tests/test_typing.py`` checks it with mypy --strict."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## msgwire under pydantic-ai and openai-agents"


def test_the_readme_pydantic_ai_example_runs(tmp_path: Path) -> None:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the section has one runnable example"
    run = subprocess.run(
        [sys.executable, "-W", "error", "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
