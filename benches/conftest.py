"""Shared bench plumbing: after a timed run, print each group's medians and msgwire's ratios.

For every pytest-benchmark group, the entry whose name contains ``msgwire`` is the reference;
each other entry gets ``msgwire vs <entry> = <its median / msgwire's median>x``, so a figure
above 1 means msgwire is that many times as fast (``pydantic_ai``: 26x; the plain msgspec
baseline: about 1x). Groups without a msgwire entry just list their medians. Nothing is
printed under ``--benchmark-disable`` (the untimed smoke run of ``make test``).
"""

from __future__ import annotations

from typing import Any

import pytest

REFERENCE = "msgwire"


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.3f} {unit}"
    return f"{seconds * 1e9:8.0f} ns"


def _label(name: str, group: str) -> str:
    name = name.removeprefix("test_")
    return name.removeprefix(f"{group}_") if group else name


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    bench_session = getattr(config, "_benchmarksession", None)  # pytest-benchmark's run state
    if bench_session is None or bench_session.disabled:
        return
    groups: dict[str, list[Any]] = {}
    for bench in bench_session.benchmarks:
        if bench and not bench.has_error:
            groups.setdefault(bench.group or "", []).append(bench)
    if not groups:
        return
    tr = terminalreporter
    tr.section(f"medians; msgwire vs X = median(X) / median({REFERENCE})")
    for group, benches in sorted(groups.items()):
        ref = next((b for b in benches if REFERENCE in b.name), None)
        tr.write_line(f"{group or '(no group)'}:")
        for b in sorted(benches, key=lambda b: (b is not ref, b.stats.median)):
            line = f"  {_label(b.name, group):28} {_time(b.stats.median)}"
            if ref is not None and b is not ref:
                line += f"   msgwire vs {_label(b.name, group)} = {b.stats.median / ref.stats.median:.2f}x"
            tr.write_line(line)
