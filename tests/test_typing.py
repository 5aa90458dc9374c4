"""The public API type-checks as users write it (msgspec's tests/typing habit): mypy --strict
passes on tests/typing/*_code.py (user_code.py, providers_code.py, store_code.py) and on every
Python block of README.md and docs/**/*.md (``tests._support.docs``: each block a module of its
own, its errors reported at ``file:line`` of the Markdown), and reports exactly the marked
mistakes of tests/typing/*_mistakes.py (``# error: code``, or ``# error: code, code`` for two
on a line). One mypy process checks them all: its start-up and its reading of msgwire cost
most of a run. The stub's honesty about the extension is stubtest's job (``make lint``)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests._support import docs

HERE = Path(__file__).parent / "typing"
CODE = ["user_code.py", "providers_code.py", "store_code.py"]
MISTAKES = ["user_mistakes.py", "providers_mistakes.py"]
EXAMPLES = docs.examples()


class MypyRun:
    """One mypy --strict run: its output, and its errors by file name as (line, code, message)."""

    def __init__(self, files: list[Path]) -> None:
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", *map(str, files)],
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,  # minutes on a loaded machine; never a hang
        )
        self.output = run.stdout + run.stderr
        self.errors: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
        for name, line, message, code in re.findall(
            r"^(?:.*/)?([^/\s]+\.py):(\d+): error: (.*?)\s+\[([\w-]+)\]$", self.output, re.MULTILINE
        ):
            self.errors[name].append((int(line), code, message))
        summary = re.search(r"(?:no issues found in|in \d+ files? \(checked) (\d+) source files?", self.output)
        assert run.returncode in (0, 1), self.output  # 2: mypy itself failed
        assert summary, self.output
        assert int(summary[1]) == len(files), self.output


@pytest.fixture(scope="module")
def mypy(tmp_path_factory: pytest.TempPathFactory) -> MypyRun:
    blocks = tmp_path_factory.mktemp("examples")
    for example in EXAMPLES:
        (blocks / f"{example.module}.py").write_text(example.code)
    return MypyRun([HERE / name for name in CODE + MISTAKES] + [blocks / f"{e.module}.py" for e in EXAMPLES])


@pytest.mark.parametrize("name", CODE)
def test_user_code_type_checks(name: str, mypy: MypyRun) -> None:
    assert mypy.errors[name] == [], mypy.output


@pytest.mark.parametrize("name", MISTAKES)
def test_mistakes_are_caught_where_they_are(name: str, mypy: MypyRun) -> None:
    expected = {
        (n, kind)
        for n, line in enumerate((HERE / name).read_text().splitlines(), 1)
        if (m := re.search(r"# error: ([\w, -]+)", line))
        for kind in m.group(1).replace(" ", "").split(",")
    }
    found = {(line, code) for line, code, _ in mypy.errors[name]}
    assert found == expected, mypy.output


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_the_example_type_checks(example: docs.Example, mypy: MypyRun) -> None:
    errors = [
        f"{example.path}:{example.source_line(line)}: {message} [{code}]"
        for line, code, message in mypy.errors[f"{example.module}.py"]
    ]
    assert errors == []
