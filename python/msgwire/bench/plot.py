"""``msgwire bench --plot out.png``: the medians as a bar chart (matplotlib, Agg: no display).

One panel per workload, one bar per entry (msgwire highlighted), a log scale since the peers
span three orders of magnitude, and each bar labelled with its median and its ratio to
msgwire; entries that did not run are listed in the panel with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cases import GROUPS, Result

MSGWIRE = "#d9480f"
PEER = "#868e96"


def write_chart(results: Sequence[Result], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed, none opened
    from matplotlib import pyplot as plt

    groups = [(g.name, [r for r in results if r.group == g.name]) for g in GROUPS]
    groups = [(name, rows) for name, rows in groups if rows]
    heights = [max(len(rows), 1) * 0.45 + 0.9 for _, rows in groups]
    figure, axes = plt.subplots(
        len(groups), 1, figsize=(9, sum(heights)), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    for axis, (name, rows) in zip(axes[:, 0], groups, strict=True):
        labels = [r.entry for r in rows]
        medians_ms = [(r.median_s or 0.0) * 1e3 for r in rows]
        colors = [MSGWIRE if r.entry.startswith("msgwire") else PEER for r in rows]
        positions = range(len(rows))
        axis.barh(positions, medians_ms, color=colors)
        axis.set_yticks(list(positions), labels)
        axis.invert_yaxis()
        axis.set_xscale("log")
        axis.set_title(name, loc="left", fontsize=10, fontweight="bold")
        axis.set_xlabel("median, ms (log scale)", fontsize=8)
        measured = [m for m in medians_ms if m > 0]
        if measured:
            axis.set_xlim(min(measured) / 2, max(measured) * 30)  # room for the labels
        for position, r, median in zip(positions, rows, medians_ms, strict=True):
            if r.median_s is None:
                axis.text(axis.get_xlim()[0] * 1.1, position, r.status, va="center", fontsize=8, color="#c92a2a")
                continue
            ratio = "msgwire" if r.entry == "msgwire" or r.ratio is None else f"{r.ratio:,.1f}x msgwire's time"
            axis.text(median * 1.08, position, f"{median:,.3g} ms  ({ratio})", va="center", fontsize=8)
    figure.suptitle(title, fontsize=12)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
