"""The wire layer's rows of issues 22 and 30, measured interleaved: each round times every entry of
a row in turn (each entry a batch of calls of about two milliseconds; the order changes from round
to round), so a burst of load on this shared machine falls on all of them alike, and a row's ratios
come from one run. Prints each entry's median per call and ``msgwire vs X = median(X) /
median(msgwire)`` (above 1: msgwire is faster), by the wall clock and by the thread's CPU time
(``time.thread_time``: what the entry itself ran, without the time other processes held the core;
on a loaded machine a short batch is more likely than a long one to be stretched by a wait for the
core, which pulls the wall-clock ratios of short entries down). ``--runs N`` repeats the whole
measurement and ends with each ratio's median and worst run.

Rows (``ROWS``):

- ``from-response-<size>``: ``msgwire.from_response`` of a Chat Completions body
  (``msgwire.bench.workloads.chat_completion``: hostile text, with escapes of every kind, non-ASCII
  and code, and one tool call, every field of the recorded body; ``20k`` with 11 KB of code as
  the call's arguments) beside the openai SDK's ``ChatCompletion.model_validate_json``, the floor
  inside the boundary of docs/design.md section 2 (msgspec's decode of the result's canonical
  JSON into ``AssistantMessage``) and ``orjson.loads`` of the body; ``1m`` is the ~1 MB reply of
  ``formats_workload.py`` (thinking, text, 200 calls of 2-20 KB of code). Every body is written as
  Go writes JSON (``workloads.go_escaped``: ``<``, ``>``, ``&`` as ``\\u`` escapes).
- ``from-response-anthropic`` / ``-openai-responses``: the same ~1 MB reply, beside their SDKs.
- ``to-request``: ``to_request_json`` of the 900-message session beside the hand-written
  conversion of ``formats_workload.py``.
- ``rebuild``: a full build, and the re-build after one append with a ``RequestCache`` that has
  just built the 899 before it (``test_formats.py``'s entry).
- ``rebuild-one-at-a-time``: a chat of 900 text messages of 400-600 characters; its last 100
  messages are appended one at a time, as an agent does, each build with the conversation's
  cache; the median of those builds beside a full build of the 900.
- ``openai-stream``: ``msgwire.assemble`` of the OpenAI workload in 16 KiB chunks beside the
  httpx-sse + ``json.loads`` loop, ``orjson.loads`` of every pre-split data line, and the lines
  split in Python (``msgwire.bench.peers``, ``test_stream.py``'s entries).
- ``anthropic-stream``: the same for the Anthropic workload, beside the anthropic SDK's
  ``messages.stream`` accumulator (over an ``httpx2`` mock transport) and ``orjson.loads`` per line.
- ``partial-args``: ``msgwire.stream(..., partial_args=True)`` of 64 KB of arguments in 20-byte
  deltas, one event per read, ``parsed`` read once at the end, beside the same loop without the
  option (``test_stream.py``'s partial-args entries; the ratio is the option's cost, below 1).
- ``loads`` / ``dumps``: ``msgwire.loads`` / ``dumps`` of the 900-message session beside msgspec
  with hand-written Structs of the same schema, the same bytes (the floor, ``msgwire.bench.forms``)
  and pydantic-ai's ``ModelMessagesTypeAdapter`` on its form of the conversation (``workload.py``).
- ``first-call``: not a row of entries: ``from_response`` timed in fresh processes, the first
  call beside the median of the next ones (``first_call``).

Run: ``.venv/bin/python -m benches.wire_interleaved [--rounds N] [--busy N] [ROW ...]``;
``--busy N`` keeps N other processes spinning on the machine while it measures.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import orjson

import msgwire
from benches.formats_workload import by_hand, large_reply, sdk_type
from msgwire import _core
from msgwire._corestream import decode_message
from msgwire.bench.peers import httpx_sse_loop, mock_transport, pieces, split_and_parse
from msgwire.bench.workloads import anthropic_stream, chat_completion, go_escaped, long_tool_call, openai_stream

SIZES = {"0.6k": 600, "0.9k": 900, "2.4k": 2400, "20k": 20_000}
LONG_ARGUMENTS = {"20k": 11_000}  # bytes of code in the call's arguments; a short call elsewhere
# Each timing is a batch of calls of about this much CPU time (``--batch-ms``). Equal batches for
# every entry: with batches of 2 ms and three calls at least, a 0.8 ms entry was timed over 2.5 ms
# and its 3.6 ms peer over 11 ms, and on a loaded machine the short window was the more stretched
# by waits for the core (wall-clock ratios of 2.1-2.6x where the CPU time said 2.7-3.3x).
BATCH_SECONDS = 0.02

Entries = dict[str, Callable[[], object]]


def _from_response_row(body: bytes, sdk: Any) -> Entries:
    canonical = _core.from_response_json(body, "openai", id=msgwire.new_id(), timestamp="2026-01-01T00:00:00Z")
    return {
        "msgwire": lambda: msgwire.from_response(body, "openai"),
        "sdk": lambda: sdk.model_validate_json(body),
        "floor_msgspec": lambda: decode_message(canonical),
        "orjson": lambda: orjson.loads(body),
    }


def _small_body(size: int, arguments: int = 0) -> bytes:
    """The recorded shape is 0.8 KB without text: 0.6 KB is a body without the fields an SDK
    fills with defaults (annotations, service tier, fingerprint, usage details)."""
    if size >= 900:
        return chat_completion(size, arguments=arguments)
    whole = json.loads(chat_completion(900))
    for key in ("service_tier", "system_fingerprint"):
        del whole[key]
    del whole["choices"][0]["message"]["annotations"]
    for key in ("prompt_tokens_details", "completion_tokens_details"):
        del whole["usage"][key]
    text = whole["choices"][0]["message"]["content"]
    while len(encoded := go_escaped(json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode())) > size:
        text = text[:-8]
        whole["choices"][0]["message"]["content"] = text
    return encoded


def _chat(n: int, seed: int = 20261126) -> list[msgwire.Message]:
    """``n`` user and assistant text messages of 400-600 characters, alternating."""
    rng = random.Random(seed)
    words = ("the", "stream", "parser", "reads", "every", "byte", "once", "and", "keeps", "its", "state", "—", "café")
    messages: list[msgwire.Message] = []
    for i in range(n):
        size = rng.randint(400, 600)
        text = ""
        while len(text) < size:
            text += rng.choice(words) + " "
        block = msgwire.TextBlock(text=text[:size])
        kind = msgwire.UserMessage if i % 2 == 0 else msgwire.AssistantMessage
        messages.append(kind(content=[block]))
    return messages


def _rows(names: set[str]) -> dict[str, Entries]:
    rows: dict[str, Entries] = {}
    want = lambda name: not names or name in names  # noqa: E731
    if any(want(f"from-response-{s}") for s in [*SIZES, "1m"]):
        from openai.types.chat import ChatCompletion

        for label, size in SIZES.items():
            if want(f"from-response-{label}"):
                body = _small_body(size, LONG_ARGUMENTS.get(label, 0))
                rows[f"from-response-{label}"] = _from_response_row(body, ChatCompletion)
    for dialect in ("openai", "anthropic", "openai-responses"):
        name = "from-response-1m" if dialect == "openai" else f"from-response-{dialect}"
        if want(name):
            body = msgwire.formats.to_response_json(
                large_reply(dialect), dialect, policy=msgwire.Policy(thinking="keep")
            )
            sdk = sdk_type(dialect)
            if dialect == "openai":
                rows[name] = _from_response_row(go_escaped(body), sdk)
            else:
                rows[name] = {
                    "msgwire": lambda b=body, d=dialect: msgwire.from_response(b, d),
                    "sdk": lambda b=body, s=sdk: s.model_validate_json(b),
                }
    if want("to-request") or want("rebuild"):
        from benches.workload import build  # pydantic-ai is loaded only for the rows that use it

        session = build().session
        if want("to-request"):
            rows["to-request"] = {
                "msgwire": lambda: msgwire.formats.to_request_json(session, "openai"),
                "by_hand": lambda: by_hand(session),
            }
        if want("rebuild"):
            rows["rebuild"] = _rebuild_row(session)
    if want("rebuild-one-at-a-time"):
        rows["rebuild-one-at-a-time"] = _one_at_a_time_row()
    if want("openai-stream"):
        data = openai_stream()
        chunks = pieces(data)
        client = httpx.Client(transport=mock_transport(data, httpx))
        lines = [line[6:] for line in data.split(b"\n") if line.startswith(b"data: {")]

        def per_line() -> None:
            for line in lines:
                orjson.loads(line)

        rows["openai-stream"] = {
            "msgwire": lambda: msgwire.assemble(chunks, "openai"),
            "httpx_sse_loop": lambda: httpx_sse_loop(client),
            "orjson_per_line": per_line,
            "orjson_split_in_python": lambda: split_and_parse(data),
        }
    if want("anthropic-stream"):
        rows["anthropic-stream"] = _anthropic_row()
    if want("partial-args"):
        rows["partial-args"] = _partial_args_row()
    if want("loads") or want("dumps"):
        from benches.workload import PYDANTIC_AI_ADAPTER, build
        from msgwire.bench.forms import BASELINE_DECODER, BASELINE_ENCODER

        w = build()
        if want("loads"):
            rows["loads"] = {
                "msgwire": lambda: msgwire.loads(w.msgwire_json, type=msgwire.Session),
                "floor_msgspec": lambda: BASELINE_DECODER.decode(w.baseline_json),
                "pydantic_ai": lambda: PYDANTIC_AI_ADAPTER.validate_json(w.pydantic_ai_json),
            }
        if want("dumps"):
            rows["dumps"] = {
                "msgwire": lambda: msgwire.dumps(w.session),
                "floor_msgspec": lambda: BASELINE_ENCODER.encode(w.baseline),
                "pydantic_ai": lambda: PYDANTIC_AI_ADAPTER.dump_json(w.pydantic_ai),
            }
    return rows


def _anthropic_row() -> Entries:
    import anthropic
    import httpx2

    data = anthropic_stream()
    chunks = pieces(data)
    lines = [line[6:] for line in data.split(b"\n") if line.startswith(b"data: ")]
    client = anthropic.Anthropic(
        api_key="x", base_url="http://bench", http_client=httpx2.Client(transport=mock_transport(data, httpx2))
    )

    def sdk() -> Any:
        with client.messages.stream(
            model="claude-sonnet-4-6", max_tokens=4096, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            return stream.get_final_message()

    def per_line() -> None:
        for line in lines:
            orjson.loads(line)

    return {"msgwire": lambda: msgwire.assemble(chunks, "anthropic"), "anthropic_sdk": sdk, "orjson_per_line": per_line}


def _partial_args_row() -> Entries:
    data, _ = long_tool_call()
    chunks = [event + b"\n\n" for event in data.split(b"\n\n") if event]  # one event per read: the live case

    def run(partial_args: bool) -> Any:
        last = None
        for event in msgwire.stream(chunks, "openai", partial_args=partial_args):
            if event.type == "tool_call_delta":
                last = event
        return last.parsed if last is not None else None

    return {"msgwire_partial_args": lambda: run(True), "without_parsing": lambda: run(False)}


class _Rebuild:
    """A callable that times itself: the build after one append, the cache just having built the
    history before it (the set-up, untimed)."""

    def __init__(self, cache: Any, before: Any, after: Any) -> None:
        self.cache, self.before, self.after = cache, before, after

    def timed(self) -> float:
        msgwire.formats.to_request_json(self.before, "openai", cache=self.cache)
        start = time.perf_counter()
        msgwire.formats.to_request_json(self.after, "openai", cache=self.cache)
        return time.perf_counter() - start


def _rebuild_row(session: msgwire.Session) -> Entries:
    before = msgspec.structs.replace(session, messages=session.messages[:-1])
    rebuild = _Rebuild(msgwire.formats.RequestCache(), before, session)
    return {
        "msgwire_full_build": lambda: msgwire.formats.to_request_json(session, "openai"),
        "rebuild_after_one_append": rebuild.timed,
    }


def _one_at_a_time_row() -> Entries:
    messages = _chat(900)
    full = msgwire.Session(messages=messages)

    def appends() -> float:
        """The median time of the last 100 appends' builds, one at a time after a warm cache."""
        cache = msgwire.formats.RequestCache()
        history = list(messages[:800])
        msgwire.formats.to_request_json(history, "openai", cache=cache)
        times = []
        for message in messages[800:]:
            history.append(message)
            start = time.perf_counter()
            msgwire.formats.to_request_json(history, "openai", cache=cache)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    return {
        "msgwire_full_build": lambda: msgwire.formats.to_request_json(full, "openai"),
        "rebuild_one_append": appends,
    }


def _batch(run: Callable[[], object], seconds: float) -> int:
    """How many calls make a timing of about ``seconds`` of CPU time, three at least (after
    a warm-up: a first call pays for lazy set-up and cold caches, and so does the first of a
    batch)."""
    once = []
    for _ in range(8):
        start = time.thread_time()
        run()
        once.append(time.thread_time() - start)
    return max(3, int(seconds / max(statistics.median(once[3:]), 1e-7)))


def _time(run: Callable[[], object], n: int) -> tuple[float, float]:
    """Seconds per call of a batch of ``n``: by the wall clock and by the thread's CPU time."""
    if n == 1:
        cpu, start = time.thread_time(), time.perf_counter()
        result = run()
        elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
        # an entry that times itself (the re-builds) returns its own figure
        return (result, result) if isinstance(result, float) else (elapsed, cpu)
    cpu, start = time.thread_time(), time.perf_counter()
    for _ in range(n):
        run()
    return (time.perf_counter() - start) / n, (time.thread_time() - cpu) / n


Medians = dict[str, dict[str, tuple[float, float]]]  # row -> entry -> (wall, cpu) median per call


def measure(rows: dict[str, Entries], rounds: int, batch_seconds: float = BATCH_SECONDS) -> Medians:
    times: dict[str, dict[str, list[tuple[float, float]]]] = {
        row: {name: [] for name in entries} for row, entries in rows.items()
    }
    batches = {
        (row, name): 1 if name.startswith("rebuild") else _batch(run, batch_seconds)
        for row, entries in rows.items()
        for name, run in entries.items()
    }
    # Each round takes the next order of a row's entries, in a shuffled cycle of all of them, so
    # that each entry comes first, and after each other one, about as often as the others (exactly
    # when the rounds are a multiple of the orders): an entry's batch costs more first in a round
    # and right after pydantic-ai's (the memory they left), which, when msgwire came first in
    # every round, cost it 10-25% of a `loads`.
    orders = {row: list(itertools.permutations(entries)) for row, entries in rows.items()}
    for row_orders in orders.values():
        random.Random(0).shuffle(row_orders)
    for round_ in range(rounds):
        for row, entries in rows.items():
            for name in orders[row][round_ % len(orders[row])]:
                times[row][name].append(_time(entries[name], batches[row, name]))
        gc.collect()
    return {
        row: {
            name: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
            for name, ts in entries.items()
        }
        for row, entries in times.items()
    }


FIRST_CALL = """
import sys, time
import msgwire
from benches.wire_interleaved import _small_body
from benches.formats_workload import large_reply
from msgwire.bench.workloads import go_escaped
size, clock = sys.argv[1], getattr(time, sys.argv[2])
if size == "1m":
    reply = large_reply("openai")
    body = go_escaped(msgwire.formats.to_response_json(reply, "openai", policy=msgwire.Policy(thinking="keep")))
else:
    body = _small_body(int(size))
from_response = msgwire.from_response  # imports msgwire.formats if nothing did yet: not the call's
times = []
for _ in range(51):
    start = clock()
    from_response(body, "openai")
    times.append(clock() - start)
print(times[0], sorted(times[1:])[25])
"""


def first_call(
    sizes: tuple[str, ...] = ("900", "1m"), processes: int = 7, clock: str = "perf_counter"
) -> dict[str, tuple[float, float]]:
    """Per body size, the median over fresh processes of the first ``from_response`` (the body
    made before it, so imports and the SDK-free set-up are not in it) and of the steady state.
    ``clock``: a ``time`` function (``thread_time``: the CPU time, which a loaded machine's
    preemptions leave out)."""
    out = {}
    for size in sizes:
        firsts, steadies = [], []
        for _ in range(processes):
            run = subprocess.run(
                [sys.executable, "-c", FIRST_CALL, size, clock],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            first, steady = map(float, run.stdout.split())
            firsts.append(first)
            steadies.append(steady)
        out[size] = (statistics.median(firsts), statistics.median(steadies))
    return out


def _show(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.2f} {unit}"
    return f"{seconds * 1e9:8.0f} ns"


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="*", help="rows to measure (all by default; first-call too)")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--batch-ms", type=float, default=BATCH_SECONDS * 1000, help="CPU time per timing")
    parser.add_argument(
        "--runs", type=int, default=1, help="measure this many times; then each ratio's median and worst"
    )
    parser.add_argument("--busy", type=int, default=0, help="other processes kept busy meanwhile")
    args = parser.parse_args()
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
    ]  # stopped below, by their own handles
    try:
        print(f"load: {_load()}, busy processes: {args.busy}")
        names = set(args.rows) - {"first-call"}
        if names or not args.rows:
            rows = _rows(names)
            ratios: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for run in range(args.runs):
                if args.runs > 1:
                    print(f"run {run + 1} of {args.runs}, load: {_load()}")
                for row, entries in measure(rows, args.rounds, args.batch_ms / 1000).items():
                    reference = next(name for name in entries if name.startswith("msgwire"))
                    (ref_wall, ref_cpu) = entries[reference]
                    print(f"{row}:                              wall        cpu")
                    for name, (wall, cpu) in entries.items():
                        ratio = ""
                        if name != reference:
                            ratios.setdefault((row, name), []).append((wall / ref_wall, cpu / ref_cpu))
                            ratio = f"   msgwire vs {name} = {wall / ref_wall:.2f}x wall, {cpu / ref_cpu:.2f}x cpu"
                        print(f"  {name:26} {_show(wall)} {_show(cpu)}{ratio}")
            if args.runs > 1:
                print(f"over {args.runs} runs (msgwire vs X: median, worst):")
                for (row, name), values in ratios.items():
                    walls, cpus = [v[0] for v in values], [v[1] for v in values]
                    # the worst run: the lowest ratio (msgwire slowest beside X)
                    print(
                        f"  {row} / {name}: wall {statistics.median(walls):.2f}x, worst {min(walls):.2f}x;"
                        f" cpu {statistics.median(cpus):.2f}x, worst {min(cpus):.2f}x"
                    )
        if not args.rows or "first-call" in args.rows:
            for clock in ("perf_counter", "thread_time"):
                for size, (first, steady) in first_call(clock=clock).items():
                    ratio = first / steady
                    print(f"first-call {size} ({clock}): first {_show(first)}, steady {_show(steady)}, {ratio:.2f}x")
        print(f"load: {_load()}")
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()
