"""Harness part 4 (msgwire.harness.resources): resolving file mentions, OCR per page, the MCP
resource cache's hit path.

Groups (``conftest.py`` prints the ratios to the ``msgwire`` entry):

- ``mentions``: 1,000 ``@path:a-b`` mentions over messages, parsed and resolved in a workspace of
  ``MSGWIRE_BENCH_FILES`` files (2,000 by default; ``make bench`` sets 20,000), beside a plain
  ``open().read().splitlines()`` of the same ranges with no checks at all (the floor: what the
  containment, permission, binary and UTF-8 checks cost on top);
- ``ocr``: one rendered page (25 lines), ``TesseractOCR.recognize`` with its models kept loaded,
  beside the ``tesseract`` program run per page (what pytesseract does); for information;
- ``mcp_cache``: ``MCPResources.read`` of a cached resource, beside the same read going to the
  server (``refresh=True``: a stdio round trip), i.e. what a hit saves.

Every benchmark checks its result after timing (untimed), and nothing is asserted about speed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgwire import FileReferenceBlock, user
from msgwire.harness.resources import FileResolver, parse_mentions

FILES = int(os.environ.get("MSGWIRE_BENCH_FILES", "2000"))
MENTIONS = 1000
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    for i in range(FILES):
        folder = root / f"pkg{i % 50}" / f"sub{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text("".join(f"value_{n} = {n} * {i}\n" for n in range(200)))
    (root / ".env").write_text("SECRET=1\n")
    return root


def _texts() -> list[str]:
    """1,000 mentions over 100 messages of 10 each, ranges spread over the files."""
    step = max(FILES // MENTIONS, 1)
    mentions = [f"@pkg{i % 50}/sub{i % 7}/mod{i}.py:{i % 150 + 1}-{i % 150 + 20}" for i in range(0, FILES, step)][
        :MENTIONS
    ]
    return [" and ".join(["look at", *mentions[k : k + 10]]) for k in range(0, len(mentions), 10)]


@pytest.mark.benchmark(group="mentions")
def test_mentions_msgwire(benchmark: Any, workspace: Path) -> None:
    files = FileResolver(workspace)
    texts = _texts()

    def run() -> list[Any]:
        return [files.resolve_message(parse_mentions(user(t))) for t in texts]

    messages = benchmark(run)
    blocks = [b for m in messages for b in m.content if type(b) is FileReferenceBlock]
    assert len(blocks) == min(MENTIONS, FILES)
    assert all(b.status == "resolved" and b.resolved_content.count("\n") == 20 for b in blocks)


@pytest.mark.benchmark(group="mentions")
def test_mentions_plain_read(benchmark: Any, workspace: Path) -> None:
    import re

    pattern = re.compile(r"@(\S+?):(\d+)-(\d+)")
    texts = _texts()

    def run() -> list[str]:
        out = []
        for text in texts:
            for path, start, end in pattern.findall(text):
                with open(workspace / path) as f:
                    out.append("".join(f.read().splitlines(keepends=True)[int(start) - 1 : int(end)]))
        return out

    contents = benchmark(run)
    assert len(contents) == min(MENTIONS, FILES)


# --- OCR ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests._support.images import ENGLISH
    from tests._support.images import render as draw

    path = tmp_path_factory.mktemp("ocr") / "page.png"
    path.write_bytes(draw((ENGLISH * 9)[:25], size=22))
    return path


@pytest.mark.benchmark(group="ocr")
def test_ocr_msgwire(benchmark: Any, page: Path) -> None:
    from msgwire.harness.resources.ocr import TesseractOCR

    data = page.read_bytes()
    with TesseractOCR() as ocr:
        ocr.recognize(data)  # models loaded once, as a long-lived recognizer has them
        result = benchmark(ocr.recognize, data)
    assert "quick brown fox" in result.text


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract program is not installed")
@pytest.mark.benchmark(group="ocr")
def test_ocr_tesseract_program(benchmark: Any, page: Path) -> None:
    def run() -> str:
        return subprocess.run(
            ["tesseract", str(page), "-", "-l", "eng"], capture_output=True, text=True, check=True
        ).stdout

    assert "quick brown fox" in benchmark(run)


# --- MCP cache ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp() -> Iterator[Any]:
    from msgwire.harness.resources.mcp import MCPResources

    server = [sys.executable, str(HERE.parent / "tests" / "harness" / "resources" / "mcp_resource_server.py")]
    with MCPResources({"docs": server}) as resources:
        yield resources


@pytest.mark.benchmark(group="mcp_cache")
def test_mcp_cache_msgwire_hit(benchmark: Any, mcp: Any) -> None:
    first = mcp.read("docs", "docs://readme")
    hits = mcp.stats.hits
    block = benchmark(mcp.read, "docs", "docs://readme")
    assert block == first
    assert mcp.stats.hits > hits


@pytest.mark.benchmark(group="mcp_cache")
def test_mcp_cache_server_round_trip(benchmark: Any, mcp: Any) -> None:
    block = benchmark(lambda: mcp.read("docs", "docs://readme", refresh=True))
    assert block.content.startswith("# Readme")
