"""``msgwire bench``'s results as a table (rich) and as JSON; the chart is ``plot.py``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from .cases import GROUPS, Result
from .measure import Mode, versions


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:,.2f} {unit}"
    return f"{seconds * 1e9:,.0f} ns"


def results_table(results: Sequence[Result], mode: Mode) -> Table:
    table = Table(
        title=f"msgwire beside its peers ({mode.name} mode): same bytes, same run",
        caption="vs msgwire = median(entry) / median(msgwire): above 1, msgwire is that many times as fast",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("workload", style="bold", no_wrap=True)
    table.add_column("entry", no_wrap=True)
    table.add_column("median", justify="right", no_wrap=True)
    table.add_column("rounds", justify="right", style="dim", no_wrap=True)
    table.add_column("vs msgwire", justify="right", no_wrap=True)
    table.add_column("what is timed", style="dim", overflow="fold")
    sizes = mode.sizes
    for group in GROUPS:
        rows = [r for r in results if r.group == group.name]
        if not rows:
            continue
        labels = [group.name, f"[dim]{group.size(sizes) / 1e3:,.0f} KB[/dim]"]
        for i, r in enumerate(rows):
            if r.median_s is None:  # what did not run says why, where the note would be
                style = "yellow" if r.status.startswith("skipped") else "red"
                cells = ["—", "", "—", f"[{style}]{escape(r.status)}[/{style}]"]
            else:
                ratio = "reference" if r.entry == "msgwire" else _ratio(r.ratio)
                cells = [_time(r.median_s), str(r.rounds), ratio, r.note]
            label = labels[i] if i < len(labels) else ""
            table.add_row(label, r.entry, *cells, end_section=i == len(rows) - 1)
    return table


def _ratio(ratio: float | None) -> str:
    if ratio is None:
        return "—"
    style = "green" if ratio >= 1 else "yellow"
    return f"[{style}]{ratio:,.2f}x[/{style}]" if ratio < 10 else f"[{style}]{ratio:,.0f}x[/{style}]"


def results_json(results: Sequence[Result], mode: Mode) -> dict[str, Any]:
    groups = []
    for group in GROUPS:
        rows = [asdict(r) for r in results if r.group == group.name]
        if rows:
            for row in rows:
                del row["group"]
            groups.append(
                {
                    "name": group.name,
                    "workload": group.workload(mode.sizes),
                    "bytes": group.size(mode.sizes),
                    "entries": rows,
                }
            )
    skipped = sorted({r.entry for r in results if r.status.startswith("skipped")})
    return {"mode": mode.name, "versions": versions(), "groups": groups, "skipped": skipped}
