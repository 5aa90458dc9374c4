"""The README's speed figures stand in benches/README.md, whose "In brief" table is the one
source of the figures quoted elsewhere (issue 28 section 1).

The rule:

- The README's speed table is the first Markdown table after the comment
  ``<!-- speed table`` in README.md; the summary is the first table after ``<!-- speed
  summary`` in benches/README.md.
- Every heading of the README's table is a heading of the summary (the README may leave
  columns out, never add one).
- Every row of the README's table names, in its first cell, a row of the summary, and each of
  its cells equals, character for character, that row's cell under the same heading.
- README.md quotes no speed figure anywhere else (a number followed by ``x``, ``µs``, ``us``,
  ``ms``, ``MB/s``, ``GB/s`` or ``%``, outside code blocks and tables: the speed table is its
  only table).
- Every speed figure of the docs (``docs/**/*.md``, the guide included, outside code blocks; ``x`` written
  against its number, so that ``4 x 200`` is a count) stands, as it is written, in a cell of the
  summary: the docs quote the table, in their own sentences.

So the workflow is: measure (``make bench``), write the run in its section of benches/README.md,
update the summary's row there (the range over the runs, not the best one; the fairest peer
first; the floor), then copy the row into the README, leaving out the columns it does not show.
A figure changed in the README alone, or a README row whose summary row changed, fails here.
Cells may not hold a ``|``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCHES = ROOT / "benches" / "README.md"

_FIGURE = re.compile(r"\d(?:[\d.,]*\d)?(?:[\u2013-]\d(?:[\d.,]*\d)?)?\s?(?:x\b|µs|us\b|ms\b|MB/s|GB/s|%)")


def table_after(markdown: str, marker: str) -> list[list[str]]:
    """The rows (cells stripped; the heading row first, the delimiter row left out) of the
    first table after ``marker``."""
    start = markdown.index(marker)
    lines = markdown[start:].splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            rows.append(cells)
    return rows


def mismatches(readme: str, benches: str) -> list[str]:
    """What in ``readme``'s speed table does not stand in ``benches``' summary, one line each."""
    quoted = table_after(readme, "<!-- speed table")
    source = table_after(benches, "<!-- speed summary")
    headings, source_headings = quoted[0], source[0]
    found = [f"heading {h!r} is not a heading of the summary" for h in headings if h not in source_headings]
    rows = {row[0]: dict(zip(source_headings, row, strict=True)) for row in source[1:]}
    for row in quoted[1:]:
        if row[0] not in rows:
            found.append(f"row {row[0]!r} is not a row of the summary")
            continue
        for heading, cell in zip(headings, row, strict=True):
            if heading in source_headings and rows[row[0]][heading] != cell:
                found.append(f"row {row[0]!r}, {heading!r}: {cell!r} where the summary has {rows[row[0]][heading]!r}")
    return found


def figures_outside_the_table(readme: str) -> list[str]:
    """Speed figures of ``readme`` outside its code blocks and its tables (it has one, the
    speed table)."""
    text = re.sub(r"^```.*?^```", "", readme, flags=re.MULTILINE | re.DOTALL)
    return _FIGURE.findall("\n".join(line for line in text.splitlines() if not line.startswith("|")))


_GUIDE_FIGURE = re.compile(r"\d(?:[\d.,]*\d)?(?:[\u2013-]\d(?:[\d.,]*\d)?)?(?:x\b|\s?(?:µs|us\b|ms\b|MB/s|GB/s|%))")


def figures_not_in_the_summary(guide: str, benches: str) -> list[str]:
    """Speed figures of a guide page (outside its code blocks) that no cell of ``benches``'
    summary holds."""
    cells = [cell for row in table_after(benches, "<!-- speed summary") for cell in row]
    text = re.sub(r"^\s*```.*?^\s*```", "", guide, flags=re.MULTILINE | re.DOTALL)

    def stands(figure: str) -> bool:  # a whole figure of a cell: "4 ms" is not the end of "0.84 ms"
        whole = re.compile(r"(?<![\d.,\u2013-])" + re.escape(figure) + r"(?![\d])")
        return any(whole.search(cell) for cell in cells)

    return [figure for figure in _GUIDE_FIGURE.findall(text) if not stands(figure)]


def test_the_docs_quote_figures_of_the_benches_summary() -> None:
    benches = BENCHES.read_text()
    pages = sorted((ROOT / "docs").rglob("*.md"))
    assert pages
    found = {str(page.relative_to(ROOT)): figures_not_in_the_summary(page.read_text(), benches) for page in pages}
    assert {name: figures for name, figures in found.items() if figures} == {}


def test_the_readme_speed_table_quotes_the_benches_summary() -> None:
    assert mismatches(README.read_text(), BENCHES.read_text()) == []


def test_the_readme_quotes_no_other_speed_figure() -> None:
    assert figures_outside_the_table(README.read_text()) == []


BENCHES_SAMPLE = """# Benchmarks

<!-- speed summary -->

| workload | msgwire | beside its peers | runs |
|---|---|---|---|
| loads | 1.0 ms | pydantic-ai 7.5x | two runs |
| dumps | 0.4 ms | pydantic-ai 27x | one run |
"""

README_SAMPLE = """# msgwire

<!-- speed table -->

| workload | beside its peers |
|---|---|
| loads | pydantic-ai 7.5x |
"""


def test_a_figure_the_summary_does_not_hold_is_named() -> None:
    assert mismatches(README_SAMPLE, BENCHES_SAMPLE) == []
    changed = README_SAMPLE.replace("7.5x", "10x")
    assert mismatches(changed, BENCHES_SAMPLE) == [
        "row 'loads', 'beside its peers': 'pydantic-ai 10x' where the summary has 'pydantic-ai 7.5x'"
    ]
    assert mismatches(README_SAMPLE.replace("| loads |", "| parse |"), BENCHES_SAMPLE) == [
        "row 'parse' is not a row of the summary"
    ]
    assert mismatches(README_SAMPLE.replace("beside its peers |\n", "peers |\n"), BENCHES_SAMPLE)[0] == (
        "heading 'peers' is not a heading of the summary"
    )


def test_a_figure_in_the_prose_is_found() -> None:
    assert figures_outside_the_table(README_SAMPLE) == []
    assert figures_outside_the_table(README_SAMPLE + "\nLoads at 0.94\u20131.0x msgspec, in 86 µs.\n") == [
        "0.94\u20131.0x",
        "86 µs",
    ]


def test_a_guide_figure_the_summary_does_not_hold_is_named() -> None:
    page = "Loads take 1.0 ms (pydantic-ai 7.5x); 4 x 200 appends.\n```\nprint('2.0x')\n```\n"
    assert figures_not_in_the_summary(page, BENCHES_SAMPLE) == []
    assert figures_not_in_the_summary(page.replace("7.5x", "8x"), BENCHES_SAMPLE) == ["8x"]
    assert figures_not_in_the_summary(page + "Dumps: 0.5 ms.", BENCHES_SAMPLE) == ["0.5 ms"]
    assert figures_not_in_the_summary("Loads: 0 ms, pydantic-ai 5x.", BENCHES_SAMPLE) == [
        "0 ms",
        "5x",
    ]  # parts of figures
    assert figures_not_in_the_summary("- a list item:\n  ```\n  2.0x\n  ```\n", BENCHES_SAMPLE) == []
