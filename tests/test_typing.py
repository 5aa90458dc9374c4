"""The public API type-checks as users write it (msgspec's tests/typing habit): mypy --strict
passes on tests/typing/*_code.py (user_code.py, providers_code.py) and reports exactly the
marked mistakes of tests/typing/*_mistakes.py (``# error: code``, or ``# error: code, code`` for
two on a line). The stub's honesty about the extension is stubtest's job (``make lint``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "typing"


def _mypy(path: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return run.returncode, run.stdout + run.stderr


@pytest.mark.parametrize("name", ["user_code.py", "providers_code.py"])
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
