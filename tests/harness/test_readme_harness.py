"""The README's harness example runs as written (its own asserts check what it shows)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Conversations, audit trail and tools"


def _example() -> str:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the section has one runnable example"
    return blocks[0]


def test_the_readme_example_runs() -> None:
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(_example(), f"{README}:{SECTION}", "exec"), namespace)
    conversation = namespace["conversation"]
    fork = namespace["fork"]
    assert fork.parent.conversation_id == conversation.id  # type: ignore[attr-defined]
    assert len(fork.entries) == 2  # type: ignore[attr-defined]
