"""The README's agent example runs as written and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## The agent loop (`msgwire.harness.Agent`)"


def test_the_readme_agent_example_prints_what_it_says() -> None:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, re.DOTALL)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{README}:{SECTION}", "exec"), {"__name__": "readme_agent"})
    assert out.getvalue() == shown
