"""The README's persistence and swarm example runs as written (its asserts check what it shows)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Persistence and the swarm"


def test_the_readme_store_example_runs() -> None:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the section has one runnable example"
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(blocks[0], f"{README}:{SECTION}", "exec"), namespace)
    assert namespace["audit"]
