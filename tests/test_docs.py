"""Every Python example of README.md and docs/**/*.md runs as written, named by where it stands
(``README.md:57``, ``docs/guide/streams.md:42``); the conventions of the fences (a block not
run, the output shown for a block) are in ``tests/_support/docs.py``. ``tests/test_typing.py``
type-checks the same blocks with ``mypy --strict`` in its one mypy run.

Each example runs as ``python -W error example.py`` would run it: a fresh interpreter, warnings
as errors, an empty temporary working directory (holding ``tests/fixtures``, a link to the
repository's recordings), none of the providers' API keys or msgwire's own settings in the
environment, and openai-agents' tracing off. It must exit 0, write nothing on standard error
(a warning logged goes there too), print exactly the output block shown for it (when one is)
and leave nothing at the repository's root. Relative links between the Markdown files lead
somewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._support import docs

EXAMPLES = docs.examples()

# what would reach a real provider, or point msgwire at the reader's own store and model
_SETTINGS = re.compile(r"^(OPENAI|ANTHROPIC|GOOGLE|GEMINI|GROQ|MISTRAL|DEEPSEEK|OPENROUTER|OLLAMA|MSGWIRE)_")


# Runs the example's padded text under its Markdown file's name: a traceback points at file:line.
_RUN = (
    "import pathlib, sys; "
    "exec(compile(pathlib.Path(sys.argv[1]).read_text(), sys.argv[2], 'exec'), {'__name__': '__main__'})"
)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_the_example_runs(example: docs.Example, tmp_path: Path) -> None:
    if example.skip is not None:
        pytest.skip(example.skip)
    cwd = tmp_path / "cwd"
    (cwd / "tests").mkdir(parents=True)
    (cwd / "tests" / "fixtures").symlink_to(docs.ROOT / "tests" / "fixtures")
    code = tmp_path / "example.py"
    code.write_text(example.padded)
    env = {name: value for name, value in os.environ.items() if not _SETTINGS.match(name)}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    before = sorted(os.listdir(docs.ROOT))
    run = subprocess.run(
        [sys.executable, "-W", "error", "-c", _RUN, str(code), str(docs.ROOT / example.path)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # seconds at most on a loaded machine; never a hang
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == "", "the example wrote on standard error (or logged a warning)"
    if example.output is not None:
        assert run.stdout == example.output, "the example does not print the output block shown under it"
    assert sorted(os.listdir(docs.ROOT)) == before, "the example left something at the repository's root"


def test_the_readme_shows_three_examples_that_run() -> None:
    # decode a stream, run an agent with a tool, store and verify a trail
    assert len([e for e in EXAMPLES if e.path == "README.md" and e.skip is None]) == 4


_LINK = re.compile(r"\]\((?!https?://|mailto:)(?P<target>[^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown text (lower case, punctuation dropped,
    spaces as hyphens), fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("path", docs.markdown_files(), ids=lambda p: p.relative_to(docs.ROOT).as_posix())
def test_relative_links_lead_somewhere(path: Path) -> None:
    text = path.read_text()
    broken = []
    for match in _LINK.finditer(text):
        target, _, anchor = match["target"].partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{match['target']}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text()):
            broken.append(f"{match['target']}: no such heading")
    assert broken == []


MARKDOWN = """# Title

```python
a = 1
```

prints

```text output
one
```

```sh
echo not python
```

- a list item:

  ```py test="skip: needs an API key"
  if a:
      b = 2
  ```

````python title="c.py"
c = "```"
````

```text
not an output
```
"""


def test_blocks_are_read_with_their_line_settings_and_output() -> None:
    found = docs.read(MARKDOWN, "x.md")
    assert [(e.id, e.code, e.output, e.skip) for e in found] == [
        ("x.md:3", "a = 1\n", "one\n", None),
        ("x.md:19", "if a:\n    b = 2\n", None, "needs an API key"),
        ("x.md:24", 'c = "```"\n', None, None),
    ]
    assert found[1].module == "x_md_19"
    assert found[1].source_line(2) == 21  # "    b = 2" stands on line 21
    assert found[2].settings == {"title": "c.py"}


def test_a_traceback_names_the_markdown_line(tmp_path: Path) -> None:
    (example,) = docs.read("text\n\n```python\nx = 1\nraise ValueError(x)\n```\n", "x.md")
    code = tmp_path / "example.py"
    code.write_text(example.padded)
    run = subprocess.run([sys.executable, "-c", _RUN, str(code), "x.md"], capture_output=True, text=True, check=False)
    assert 'File "x.md", line 5, in <module>' in run.stderr


@pytest.mark.parametrize(
    ("markdown", "problem"),
    [
        ("```python\nx = 1\n", "x.md:1: a fence that is never closed"),
        ("```text output\nx\n```\n", "x.md:1: an output block with no Python block of its own above it"),
        ("```python\n```\n```text output\n```\n```text output\n```\n", "x.md:5: an output block with no Python"),
    ],
)
def test_a_misplaced_fence_is_an_error_naming_its_line(markdown: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        docs.read(markdown, "x.md")


def test_an_unknown_test_setting_is_an_error() -> None:
    (example,) = docs.read('```python test="later"\n```\n', "x.md")
    with pytest.raises(ValueError, match=re.escape('x.md:1: test="later"')):
        _ = example.skip
