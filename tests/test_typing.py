"""The public API type-checks as users write it (msgspec's tests/typing habit): mypy --strict
passes on tests/typing/*_code.py (user_code.py, providers_code.py, store_code.py) and reports exactly the
marked mistakes of tests/typing/*_mistakes.py (``# error: code``, or ``# error: code, code`` for
two on a line). Every Python block of README.md is mirrored, exactly, in tests/typing/readme/
(``tests._support.readme``), and mypy --strict passes on all of them. The stub's honesty about
the extension is stubtest's job (``make lint``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._support import readme

HERE = Path(__file__).parent / "typing"


def _mypy(path: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,  # minutes on a loaded machine; never a hang
    )
    return run.returncode, run.stdout + run.stderr


@pytest.mark.parametrize("name", ["user_code.py", "providers_code.py", "store_code.py"])
def test_user_code_type_checks(name: str) -> None:
    code, out = _mypy(HERE / name)
    assert code == 0, out


@pytest.mark.parametrize("name", ["user_mistakes.py", "providers_mistakes.py"])
def test_mistakes_are_caught_where_they_are(name: str) -> None:
    path = HERE / name
    expected = {
        (n, kind)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if (m := re.search(r"# error: ([\w, -]+)", line))
        for kind in m.group(1).replace(" ", "").split(",")
    }
    code, out = _mypy(path)
    assert code == 1, out
    found = {(int(n), kind) for n, kind in re.findall(r":(\d+): error: .*\[([\w-]+)\]", out)}
    assert found == expected, out


def test_every_readme_python_block_is_mirrored_exactly() -> None:
    problems = readme.differences(readme.README.read_text(), readme.mirror_files())
    assert not problems, "\n".join([*problems, "rewrite the mirror: python -m tests._support.readme"])


def test_the_readme_python_blocks_type_check() -> None:
    files = readme.mirror_files()
    assert files, "tests/typing/readme/ holds the README's blocks"
    code, out = _mypy(readme.MIRROR)  # one process for all: mypy's start-up costs seconds
    assert code == 0, out
    assert f"no issues found in {len(files)} source files" in out, out


MARKDOWN = """# Title

```python
a = 1
```

```sh
echo not python
```

- a list item:

  ```py
  if a:
      b = 2
  ```

```python title="c.py"
c = "```"
```
"""


def test_python_blocks_are_read_as_markdown_fences() -> None:
    assert readme.python_blocks(MARKDOWN) == ["a = 1\n", "if a:\n    b = 2\n", 'c = "```"\n']


def test_the_mirror_check_names_an_edited_a_missing_and_a_stale_file() -> None:
    mirror = readme.mirror_of(MARKDOWN)
    assert list(mirror) == ["readme_01.py", "readme_02.py", "readme_03.py"]
    assert readme.differences(MARKDOWN, mirror) == []
    edited = {**mirror, "readme_02.py": "if a:\n    b = 3\n"}
    assert readme.differences(MARKDOWN, edited) == ["readme_02.py: differs from the README's Python block 2 at line 2"]
    fewer = {name: text for name, text in mirror.items() if name != "readme_03.py"}
    assert readme.differences(MARKDOWN, fewer) == ["readme_03.py: missing (the README's Python block 3)"]
    removed_block = MARKDOWN[: MARKDOWN.index('```python title="c.py"')]
    assert readme.differences(removed_block, mirror) == ["readme_03.py: the README has no such block"]
