"""``msgwire bench``: msgwire beside the peers that are installed, on the same bytes, in one run.

The command over the bench wing (``msgwire.bench``: the workloads, the cases, how they are
timed, the table, the JSON and the chart). The table gives each entry's median and ``median(peer)
/ median(msgwire)``: above 1, msgwire is that many times as fast. A peer that is not installed is
listed as skipped. ``--json`` prints the results as JSON (nothing else on standard output);
``--plot out.png`` draws them (matplotlib, the ``plot`` extra). The progress bar goes to
standard error. Figures depend on the machine: compare ratios from one run, not medians across
machines. benches/ holds the pytest-benchmark suites behind the figures in benches/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Collection

from rich.table import Table

from ..bench.cases import CASES
from ..bench.measure import MODES, Mode, fixed_rounds, run_cases, versions
from ..bench.report import results_json, results_table
from .commands import SUMMARIES
from .inputs import UsageError
from .render import console


def run(args: argparse.Namespace) -> int:
    mode = fixed_rounds(MODES["quick" if args.quick else "full"], args.rounds)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib: pip install 'msgwire[plot]'")
    out = console()
    results = run_cases(CASES, mode, console(stderr=True))
    if args.json:
        print(json.dumps(results_json(results, mode), indent=2))
    else:
        out.print(results_table(results, mode))
        found = versions()
        out.print(", ".join(f"{k} {v}" for k, v in found.items()), style="dim")
    if args.plot:
        from ..bench.plot import write_chart

        write_chart(results, args.plot, f"msgwire bench ({mode.name} mode)")
        console(stderr=True).print(f"wrote {args.plot}")
    return 0


def quick_subset(entries: Collection[tuple[str, str]]) -> Table:
    """The table of a few entries, each ``(group, entry)``, timed briefly at the quick sizes (the
    demo's speed section)."""
    quick = MODES["quick"]
    mode = Mode("demo", quick.sizes, 0.15, 3, 100)
    cases = [c for c in CASES if (c.group, c.entry) in entries]
    return results_table(run_cases(cases, mode, console(stderr=True)), mode)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bench",
        help=SUMMARIES["bench"],
        description="Time msgwire beside the peers that are installed, on the same bytes in one run: medians, "
        "and median(peer) / median(msgwire). Peers that are not installed are listed as skipped.",
    )
    parser.add_argument("--quick", action="store_true", help="smaller inputs and fewer rounds (a few seconds)")
    parser.add_argument("--plot", metavar="OUT.png", help="write a bar chart of the medians (needs matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--rounds", type=int, metavar="N", help="exactly N timed rounds per entry (no time budget)")
    parser.set_defaults(run=run)
