"""``benches/memory.py`` run small (2 MB), untimed: the script works and its figures hang
together. The 100 MB figures come from ``make bench-memory`` (benches/README.md)."""

from __future__ import annotations

from benches.memory import CASES, MB, report, table


def test_memory_report_small() -> None:
    results = report(2, CASES)
    assert [r["case"] for r in results] == list(CASES)
    for r in results:
        assert r["input"] > MB
        assert r["output"] > 0
        assert r["built_in_memory"] > 0
        assert r["peak_rss"] >= r["peak_rss_without_input"]
        assert r["tracemalloc_peak"] >= r["built_in_memory"]
    long_file, long_bytes = results[1], results[2]
    assert long_file["output"] == long_bytes["output"]  # the same message from a file and from bytes
    assert long_bytes["peak_rss"] - long_bytes["peak_rss_without_input"] == long_bytes["input"]
    assert "| loads |" in table(results)
