"""Starting msgwire in a fresh process (issue 30): ``import msgwire``, ``msgwire --help`` and
``import msgwire.harness`` beside a bare ``python -c pass``, with what each loads.

Each case runs in a new interpreter, the cases in turn round after round (so that a busy moment
of a shared machine falls on all of them); for each: the wall time (median and worst), the CPU
time of the process (user + system, median), the ratio of its median wall time to the bare
interpreter's, and, from one more run under ``-X importtime``, the modules it imported and the
import time they took together. ``--tree DIR`` (repeatable) runs every case with ``PYTHONPATH=DIR``
for each tree in turn, in the same rounds: a checkout before a change beside one after it.

Run: ``.venv/bin/python -m benches.startup [--rounds 20] [--tree python --tree /tmp/base/python]``.
The first ``from_response`` of a fresh process beside the next ones: ``python -m
benches.wire_interleaved first-call``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

CASES: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "import msgwire": ["-c", "import msgwire"],
    # what the console script does (pyproject.toml: msgwire = "msgwire.cli:main")
    "msgwire --help": ["-c", "import sys; from msgwire.cli import main; sys.exit(main())", "--help"],
    "import msgwire.harness": ["-c", "import msgwire.harness"],
}


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run's wall time and CPU time (user + system of the child), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _imports(args: list[str], env: dict[str, str]) -> tuple[int, float]:
    """The modules a run imported (``-X importtime``: the interpreter's own start-up included)
    and their import time together (the top-level imports' cumulative times), in seconds."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    lines = [line for line in run.stderr.decode().splitlines() if line.startswith("import time:")][1:]
    top = [line for line in lines if not line.split("|")[2].startswith("  ")]
    return len(lines), sum(int(line.split("|")[1]) for line in top) / 1e6


def _env(tree: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.path.abspath(tree)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tree", action="append", help="a python/ folder to import msgwire from (repeatable)")
    args = parser.parse_args()
    trees: list[str | None] = list(args.tree) if args.tree else [None]
    walls: dict[tuple[str | None, str], list[float]] = {(t, c): [] for t in trees for c in CASES}
    cpus: dict[tuple[str | None, str], list[float]] = {(t, c): [] for t in trees for c in CASES}
    print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
    for _ in range(args.rounds):
        for tree in trees:
            for case, case_args in CASES.items():
                wall, cpu = _run(case_args, _env(tree))
                walls[tree, case].append(wall)
                cpus[tree, case].append(cpu)
    print(f"load after: {os.getloadavg()[0]:.1f}; {args.rounds} runs of each")
    for tree in trees:
        if tree is not None:
            print(f"\nPYTHONPATH={tree}")
        bare = statistics.median(walls[tree, "python -c pass"])
        columns = ("wall median", "worst", "CPU median", "x bare", "modules", "imports")
        print(f"{'case':24} " + " ".join(f"{c:>{w}}" for c, w in zip(columns, (11, 8, 10, 7, 8, 8), strict=True)))
        for case, case_args in CASES.items():
            wall, cpu = statistics.median(walls[tree, case]), statistics.median(cpus[tree, case])
            modules, imported = _imports(case_args, _env(tree))
            print(
                f"{case:24} {wall * 1e3:8.1f} ms {max(walls[tree, case]) * 1e3:5.0f} ms {cpu * 1e3:7.1f} ms "
                f"{wall / bare:6.2f}x {modules:8d} {imported * 1e3:5.1f} ms"
            )


if __name__ == "__main__":
    main()
