"""The README's Providers example runs as it is written (against the scripted server)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def _example() -> str:
    text = README.read_text()
    section = text[text.index("## Providers (`msgwire.harness.providers`)") :]
    code = section[section.index("```python\n") + len("```python\n") :]
    return code[: code.index("```")]


def test_the_readme_example_runs() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_example(), "README.md", "exec"), {})
    assert out.getvalue().splitlines() == ["call: read_file {'path': 'notes.txt'}", "notes.txt says: buy milk."]
