"""Peak memory of ``msgwire.assemble`` over a large recording and of ``msgwire.loads`` of a
large session (issue 14, section 4), beside the size of what they build.

``python -m benches.memory [--mb 100]`` (``make bench-memory``) writes the inputs to a temporary
directory, then measures each case in a fresh subprocess, twice: once for the process's own peak
RSS (``resource.getrusage(...).ru_maxrss``, minus the RSS before the case ran) and once under
``tracemalloc`` (the peak of Python's allocations: the objects built; Rust's own allocations are
not traced, which the RSS covers). Cases:

- ``assemble-file``: ``assemble`` reading the workload recording (many short deltas: the message
  is small beside it) from an open file, 64 KiB at a time (the live case: the input is never
  whole in memory);
- ``assemble-file-long``: the same over a recording of long text deltas (the message is about
  as large as the recording);
- ``assemble-bytes-long``: that recording read into memory first, then ``assemble`` (RSS
  includes the input);
- ``loads``: the session read into memory, then ``loads`` (RSS includes the input).

Targets: ``assemble`` within twice the final message's size (its canonical JSON) plus a
constant; ``loads`` within three times the session's size. The recording is the OpenAI workload
of ``msgwire.bench.workloads`` scaled up (more text deltas, larger tool arguments), the session the
900-message workload of ``msgwire.bench.workloads.session()`` repeated with fresh ids. The test suite runs it
small (benches/test_memory.py); the figures go in benches/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

MB = 1024 * 1024
CASES = ("assemble-file", "assemble-file-long", "assemble-bytes-long", "loads")


def _peak_rss() -> int:
    """This process's peak RSS so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    """This process's RSS now, in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --- inputs ----------------------------------------------------------------------------------------


def recording(size: int) -> bytes:
    """An OpenAI Chat Completions stream of about ``size`` bytes: the bench workload's shape
    (its three tool calls) with more text deltas."""
    from msgwire.bench.workloads import openai_stream

    base = len(openai_stream())
    scale = max(1, round(size / base))
    return openai_stream(text_deltas=1500 * scale)


def long_recording(size: int, piece: int = 2000) -> bytes:
    """An OpenAI stream of about ``size`` bytes whose text deltas are long (``piece`` characters):
    the final message is about as large as the recording."""
    from msgwire.bench.workloads import WORDS

    head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,'
    text = " ".join(WORDS)
    text = (text * (piece // len(text) + 1))[:piece]
    delta = f'data: {head}"delta":{{"content":{json.dumps(text)}}},"finish_reason":null}}]}}\n\n'.encode()
    count = max(1, size // len(delta))
    end = f'data: {head}"delta":{{}},"finish_reason":"stop"}}]}}\n\ndata: [DONE]\n\n'.encode()
    return delta * count + end


def session(size: int) -> bytes:
    """A canonical session of about ``size`` bytes: the 900-message workload repeated, each copy
    with fresh message ids (ids are unique within a conversation)."""
    import msgspec

    import msgwire
    from benches.workload import build

    base = build().session
    messages: list[Any] = []
    copy = 0
    while True:
        messages.extend(msgspec.structs.replace(message, id=f"{message.id}-{copy}") for message in base.messages)
        copy += 1
        data = msgwire.dumps(msgspec.structs.replace(base, messages=messages))
        if len(data) >= size:
            return data


MAKERS = {"workload": recording, "long": long_recording, "loads": session}


# --- one case, in a fresh process --------------------------------------------------------------------


def run_case(case: str, path: Path, traced: bool) -> dict[str, Any]:
    """Measure ``case`` on the input at ``path`` (in this process: call it in a fresh one)."""
    import msgwire

    size = path.stat().st_size
    before = _rss()  # now, not the peak: the imports may have peaked higher than a small case
    input_bytes = 0
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    if case.startswith("assemble-file"):
        with path.open("rb") as source:
            built: Any = msgwire.assemble(source, "openai")
    elif case.startswith("assemble-bytes"):
        data = path.read_bytes()
        input_bytes = len(data)
        built = msgwire.assemble(data, "openai")
    elif case == "loads":
        data = path.read_bytes()
        input_bytes = len(data)
        built = msgwire.loads(data)
    else:
        raise ValueError(case)
    seconds = time.perf_counter() - started
    held, traced_peak = tracemalloc.get_traced_memory() if traced else (None, None)
    if traced:
        tracemalloc.stop()
    peak = _peak_rss() - before
    out = len(msgwire.dumps(built))
    return {
        "case": case,
        "input": size,
        "output": out,
        "peak_rss": None if traced else peak,
        "peak_rss_without_input": None if traced else peak - input_bytes,
        "tracemalloc_peak": traced_peak,
        # what the built objects hold (traced and still allocated at the end), the input aside
        "built_in_memory": None if held is None else held - input_bytes,
        "seconds": seconds,
    }


def _python(*args: str) -> str:
    """``python -m benches.memory *args`` in a fresh interpreter; its standard output."""
    root = Path(__file__).resolve().parent.parent
    # the repository for benches/, after what the caller set (a worktree's python/ for msgwire)
    path = [p for p in (os.environ.get("PYTHONPATH"), str(root)) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    command = [sys.executable, "-m", "benches.memory", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True, env=env, cwd=root).stdout


def measure(case: str, path: Path, traced: bool) -> dict[str, Any]:
    """``run_case`` in a fresh interpreter, its result. The parent stays small (inputs are made
    in another child): a child's ru_maxrss starts from its parent's RSS at the fork."""
    out = _python("--child", case, str(path), *(["--traced"] if traced else []))
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def report(mb: float, cases: tuple[str, ...] = CASES) -> list[dict[str, Any]]:
    """Every case at ``mb`` megabytes of input, RSS and tracemalloc runs merged."""
    size = int(mb * MB)
    results = []
    with tempfile.TemporaryDirectory(prefix="msgwire-memory-") as tmp:
        paths = {kind: Path(tmp) / f"{kind}.input" for kind in MAKERS}
        for case in cases:
            kind = "loads" if case == "loads" else "long" if case.endswith("-long") else "workload"
            path = paths[kind]
            if not path.exists():
                _python("--make", kind, str(path), str(size))
            rss = measure(case, path, traced=False)
            traced = measure(case, path, traced=True)
            rss["tracemalloc_peak"] = traced["tracemalloc_peak"]
            rss["built_in_memory"] = traced["built_in_memory"]
            results.append(rss)
    return results


def table(results: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table. ``assemble`` is held to the message it built (as the
    process holds it: Python objects), ``loads`` to the session's JSON."""
    rows = [
        "| case | input | built: JSON / in memory | peak RSS | peak RSS without input | tracemalloc peak "
        "| ratio | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        mb = {k: v / MB for k, v in r.items() if isinstance(v, int)}
        if r["case"] == "loads":
            with_input, without = r["peak_rss"] / r["input"], r["peak_rss_without_input"] / r["input"]
            ratio = f"{with_input:.2f}x the session ({without:.2f}x without it)"
            target = "≤ 3x the session"
        else:
            ratio = f"{r['peak_rss_without_input'] / r['built_in_memory']:.2f}x the message"
            target = "≤ 2x the message + c"
        rows.append(
            f"| {r['case']} | {mb['input']:.1f} MB | {mb['output']:.1f} / {mb['built_in_memory']:.1f} MB "
            f"| {mb['peak_rss']:.1f} MB | {mb['peak_rss_without_input']:.1f} MB | {mb['tracemalloc_peak']:.1f} MB "
            f"| {ratio} | {target} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="input size in MB (default 100)")
    parser.add_argument("--case", action="append", choices=CASES, help="only these cases")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--make", nargs=3, metavar=("KIND", "PATH", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make:
        kind, path, size = args.make
        Path(path).write_bytes(MAKERS[kind](int(size)))
        return
    if args.child:
        case, path = args.child
        print(json.dumps(run_case(case, Path(path), args.traced)))
        return
    results = report(args.mb, tuple(args.case or CASES))
    print(table(results))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
