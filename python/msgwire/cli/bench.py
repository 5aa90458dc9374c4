"""``msgwire bench``: msgwire beside the peers that are installed, on the same bytes, in one run.

Each entry (``cases.CASES``) is called once untimed (its result is checked against msgwire's),
then timed with ``time.perf_counter`` round after round until it has both ``min_rounds`` and
``budget`` seconds, or ``max_rounds``; the table gives the median and ``median(peer) /
median(msgwire)``: above 1, msgwire is that many times as fast. A peer that is not installed is
listed as skipped. ``--json`` prints the results as JSON (nothing else on standard output);
``--plot out.png`` draws them (matplotlib, the ``plot`` extra). The progress bar goes to
standard error. Figures depend on the machine: compare ratios from one run, not medians across
machines. benches/ holds the pytest-benchmark suites behind the figures in benches/README.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import platform
import statistics
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .. import _core
from .cases import CASES, GROUPS, Case, Result, Sizes
from .inputs import UsageError
from .render import console


@dataclass(frozen=True)
class Mode:
    name: str
    sizes: Sizes
    budget: float  # seconds of timed rounds per entry, at least
    min_rounds: int
    max_rounds: int


MODES = {
    "quick": Mode("quick", Sizes(text_deltas=300, thinking_deltas=60, messages=200), 0.25, 3, 300),
    "full": Mode("full", Sizes(text_deltas=1500, thinking_deltas=300, messages=900), 2.0, 5, 3000),
}
PEER_DISTRIBUTIONS = ("msgspec", "openai", "anthropic", "httpx-sse", "pydantic-ai-slim", "orjson", "rich")


def fixed_rounds(mode: Mode, rounds: int | None) -> Mode:
    """``mode`` with exactly ``rounds`` timed rounds per entry (no time budget)."""
    if rounds is None:
        return mode
    return Mode(mode.name, mode.sizes, 0.0, rounds, rounds)


def measure(case: Case, mode: Mode) -> Result:
    result = Result(case.group, case.entry, case.note, "ok")
    missing = case.missing()
    if missing:
        result.status = f"skipped (not installed: {', '.join(missing)})"
        return result
    try:
        times = _timed_rounds(case, mode)
    except _WrongResult:
        result.status = "error: its result differs from msgwire's"
        return result
    except Exception as exc:  # a peer's own failure is reported in its row, not raised
        result.status = f"error: {type(exc).__name__}: {exc}"
        return result
    result.median_s = statistics.median(times)
    result.rounds = len(times)
    return result


class _WrongResult(Exception):
    pass


def _timed_rounds(case: Case, mode: Mode) -> list[float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a peer's notices are not the bench's output
        call, check = case.prepare(mode.sizes)
        if not check(call()):  # the untimed first call: a wrong result posts no figure
            raise _WrongResult
        times: list[float] = []
        spent = 0.0
        while len(times) < mode.max_rounds and (len(times) < mode.min_rounds or spent < mode.budget):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
            spent += times[-1]
    return times


def run_cases(cases: Sequence[Case], mode: Mode, progress_to: Console | None) -> list[Result]:
    """Every case in order, with a progress bar on ``progress_to``; ratios filled in per group."""
    columns = (TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    disabled = progress_to is None or not progress_to.is_terminal
    results: list[Result] = []
    with Progress(*columns, console=progress_to, transient=True, disable=disabled) as progress:
        task = progress.add_task("bench", total=len(cases))
        for case in cases:
            progress.update(task, description=f"{case.group}: {case.entry}")
            results.append(measure(case, mode))
            progress.advance(task)
    for group in {r.group for r in results}:
        reference = next((r for r in results if r.group == group and r.entry == "msgwire"), None)
        for r in results:
            if r.group == group and reference and reference.median_s and r.median_s is not None:
                r.ratio = r.median_s / reference.median_s
    return results


def versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "msgwire": _core.__version__}
    for name in PEER_DISTRIBUTIONS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


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
        from .plot import write_chart

        write_chart(results, args.plot, f"msgwire bench ({mode.name} mode)")
        console(stderr=True).print(f"wrote {args.plot}")
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bench",
        help="time msgwire beside the installed peers (SDKs, httpx-sse, pydantic-ai, msgspec, orjson)",
        description="Time msgwire beside the peers that are installed, on the same bytes in one run: medians, "
        "and median(peer) / median(msgwire). Peers that are not installed are listed as skipped.",
    )
    parser.add_argument("--quick", action="store_true", help="smaller inputs and fewer rounds (a few seconds)")
    parser.add_argument("--plot", metavar="OUT.png", help="write a bar chart of the medians (needs matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--rounds", type=int, metavar="N", help="exactly N timed rounds per entry (no time budget)")
    parser.set_defaults(run=run)
