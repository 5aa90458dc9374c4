"""How ``msgwire bench`` times its cases: each entry (``cases.CASES``) is called once untimed
(its result is checked against msgwire's), then timed with ``time.perf_counter`` round after
round until it has both ``min_rounds`` and ``budget`` seconds, or ``max_rounds``. A peer that is
not installed is listed as skipped, a peer that fails or computes something else as an error:
neither posts a figure.
"""

from __future__ import annotations

import importlib.metadata
import platform
import statistics
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import _core
from .cases import Case, Result, Sizes


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
