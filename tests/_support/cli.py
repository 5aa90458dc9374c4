"""The ``msgwire`` command run as a user runs it, for the tests of tests/cli: in its own process,
its input piped, and its data directory (where ``msgwire chat`` stores conversations) in the
test's own folder, never the user's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["chat", "environment", "msgwire"]


def environment(folder: Path) -> dict[str, str]:
    """This process's environment with the data directory in ``folder`` and no ``MSGWIRE_STORE``."""
    env = {key: value for key, value in os.environ.items() if key != "MSGWIRE_STORE"}
    env["XDG_DATA_HOME"] = str(folder / "data")
    return env


def msgwire(
    *args: str, env: dict[str, str], cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "msgwire", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        check=False,
    )


def chat(url: str, lines: list[str], *extra: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``msgwire chat`` against the model server at ``url`` (OpenAI's dialect), fed ``lines``."""
    command = ["chat", "--provider", "openai", "--base-url", url, "--model", "gpt-4o", "--api-key", "sk-test", *extra]
    return msgwire(*command, env=env, cwd=cwd, stdin="\n".join(lines) + "\n")
