"""The wire layer's rows of issue 22, measured interleaved: each round times every entry of a row
in turn (each entry a batch of calls of about two milliseconds), so a burst of load on this shared
machine falls on all of them alike, and a row's ratios come from one run. Prints each entry's
median per call and ``msgwire vs X = median(X) / median(msgwire)`` (above 1: msgwire is faster).

Rows (``ROWS``):

- ``from-response-<size>``: ``msgwire.from_response`` of a Chat Completions body
  (``msgwire.cli.workloads.chat_completion``: hostile text, with escapes of every kind, non-ASCII
  and code, and one tool call, every field of the recorded body; ``20k`` with 11 KB of code as
  the call's arguments) beside the openai SDK's ``ChatCompletion.model_validate_json``, the floor
  inside the boundary of docs/design.md section 2 (msgspec's decode of the result's canonical
  JSON into ``AssistantMessage``) and ``orjson.loads`` of the body; ``1m`` is the ~1 MB reply of
  ``test_formats.py`` (thinking, text, 200 calls of 2-20 KB of code). Every body is written as
  Go writes JSON (``workloads.go_escaped``: ``<``, ``>``, ``&`` as ``\\u`` escapes).
- ``from-response-anthropic`` / ``-openai-responses``: the same ~1 MB reply, beside their SDKs.
- ``to-request``: ``to_request_json`` of the 900-message session beside the hand-written
  conversion of ``test_formats.py``.
- ``rebuild``: a full build, and the re-build after one append with a ``RequestCache`` that has
  just built the 899 before it (``test_formats.py``'s entry).
- ``rebuild-one-at-a-time``: a chat of 900 text messages of 400-600 characters; its last 100
  messages are appended one at a time, as an agent does, each build with the conversation's
  cache; the median of those builds beside a full build of the 900.
- ``openai-stream``: ``msgwire.assemble`` of the OpenAI workload in 16 KiB chunks beside the
  httpx-sse + ``json.loads`` loop, ``orjson.loads`` of every pre-split data line, and the lines
  split in Python (``test_stream.py``'s entries).
- ``loads``: ``msgwire.loads`` of the 900-message session beside msgspec's decode of the same
  bytes into hand-written Structs (the floor) and pydantic-ai's ``ModelMessagesTypeAdapter``.
- ``first-call``: not a row of entries: ``from_response`` timed in fresh processes, the first
  call beside the median of the next ones (``first_call``).

Run: ``.venv/bin/python -m benches.wire_interleaved [--rounds N] [--busy N] [ROW ...]``;
``--busy N`` keeps N other processes spinning on the machine while it measures.
"""

from __future__ import annotations

import argparse
import gc
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
from msgwire import _core
from msgwire._corestream import decode_message
from msgwire.cli.workloads import chat_completion, go_escaped, openai_stream

SIZES = {"0.6k": 600, "0.9k": 900, "2.4k": 2400, "20k": 20_000}
LONG_ARGUMENTS = {"20k": 11_000}  # bytes of code in the call's arguments; a short call elsewhere
BATCH_SECONDS = 0.002  # each timing is a batch of calls of about this long

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
            from benches.test_formats import _large_reply, _sdk_type

            body = msgwire.formats.to_response_json(
                _large_reply(dialect), dialect, policy=msgwire.Policy(thinking="keep")
            )
            sdk = _sdk_type(dialect)
            if dialect == "openai":
                rows[name] = _from_response_row(go_escaped(body), sdk)
            else:
                rows[name] = {
                    "msgwire": lambda b=body, d=dialect: msgwire.from_response(b, d),
                    "sdk": lambda b=body, s=sdk: s.model_validate_json(b),
                }
    if want("to-request") or want("rebuild"):
        from benches.test_formats import _by_hand
        from benches.workload import build

        session = build().session
        if want("to-request"):
            rows["to-request"] = {
                "msgwire": lambda: msgwire.formats.to_request_json(session, "openai"),
                "by_hand": lambda: _by_hand(session),
            }
        if want("rebuild"):
            rows["rebuild"] = _rebuild_row(session)
    if want("rebuild-one-at-a-time"):
        rows["rebuild-one-at-a-time"] = _one_at_a_time_row()
    if want("openai-stream"):
        from benches.test_stream import _httpx_sse_loop, _pieces, _split_and_parse, _transport

        data = openai_stream()
        chunks = _pieces(data)
        client = httpx.Client(transport=_transport(data))
        lines = [line[6:] for line in data.split(b"\n") if line.startswith(b"data: {")]

        def per_line() -> None:
            for line in lines:
                orjson.loads(line)

        rows["openai-stream"] = {
            "msgwire": lambda: msgwire.assemble(chunks, "openai"),
            "httpx_sse_loop": lambda: _httpx_sse_loop(client),
            "orjson_per_line": per_line,
            "orjson_split_in_python": lambda: _split_and_parse(data),
        }
    if want("loads"):
        from benches.workload import PYDANTIC_AI_ADAPTER, build
        from msgwire.cli.forms import BASELINE_DECODER

        w = build()
        rows["loads"] = {
            "msgwire": lambda: msgwire.loads(w.msgwire_json, type=msgwire.Session),
            "floor_msgspec": lambda: BASELINE_DECODER.decode(w.baseline_json),
            "pydantic_ai": lambda: PYDANTIC_AI_ADAPTER.validate_json(w.pydantic_ai_json),
        }
    return rows


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


def _batch(run: Callable[[], object]) -> int:
    """How many calls make a timing of about ``BATCH_SECONDS``, three at least (after a warm-up:
    a first call pays for lazy set-up and cold caches, and so does the first of a batch)."""
    once = []
    for _ in range(8):
        start = time.perf_counter()
        run()
        once.append(time.perf_counter() - start)
    return max(3, int(BATCH_SECONDS / max(statistics.median(once[3:]), 1e-7)))


def _time(run: Callable[[], object], n: int) -> float:
    if n == 1:
        start = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - start
        # an entry that times itself (the re-builds) returns its own figure
        return result if isinstance(result, float) else elapsed
    start = time.perf_counter()
    for _ in range(n):
        run()
    return (time.perf_counter() - start) / n


def measure(rows: dict[str, Entries], rounds: int) -> dict[str, dict[str, float]]:
    times: dict[str, dict[str, list[float]]] = {row: {name: [] for name in entries} for row, entries in rows.items()}
    batches = {
        (row, name): 1 if name.startswith("rebuild") else _batch(run)
        for row, entries in rows.items()
        for name, run in entries.items()
    }
    for _ in range(rounds):
        for row, entries in rows.items():
            for name, run in entries.items():
                times[row][name].append(_time(run, batches[row, name]))
        gc.collect()
    return {row: {name: statistics.median(ts) for name, ts in entries.items()} for row, entries in times.items()}


FIRST_CALL = """
import sys, time
import msgwire
from benches.wire_interleaved import _small_body
from benches.test_formats import _large_reply
from msgwire.cli.workloads import go_escaped
size = sys.argv[1]
if size == "1m":
    reply = _large_reply("openai")
    body = go_escaped(msgwire.formats.to_response_json(reply, "openai", policy=msgwire.Policy(thinking="keep")))
else:
    body = _small_body(int(size))
times = []
for _ in range(51):
    start = time.perf_counter()
    msgwire.from_response(body, "openai")
    times.append(time.perf_counter() - start)
print(times[0], sorted(times[1:])[25])
"""


def first_call(sizes: tuple[str, ...] = ("900", "1m"), processes: int = 7) -> dict[str, tuple[float, float]]:
    """Per body size, the median over fresh processes of the first ``from_response`` (the body
    made before it, so imports and the SDK-free set-up are not in it) and of the steady state."""
    out = {}
    for size in sizes:
        firsts, steadies = [], []
        for _ in range(processes):
            run = subprocess.run(
                [sys.executable, "-c", FIRST_CALL, size], capture_output=True, text=True, check=True, timeout=600
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
    parser.add_argument("--busy", type=int, default=0, help="other processes kept busy meanwhile")
    args = parser.parse_args()
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
    ]  # stopped below, by their own handles
    try:
        print(f"load: {_load()}, busy processes: {args.busy}")
        names = set(args.rows) - {"first-call"}
        if names or not args.rows:
            medians = measure(_rows(names), args.rounds)
            for row, entries in medians.items():
                reference = next(name for name in entries if name.startswith("msgwire"))
                print(f"{row}:")
                for name, median in entries.items():
                    ratio = "" if name == reference else f"   msgwire vs {name} = {median / entries[reference]:.2f}x"
                    print(f"  {name:26} {_show(median)}{ratio}")
        if not args.rows or "first-call" in args.rows:
            for size, (first, steady) in first_call().items():
                print(f"first-call {size}: first {_show(first)}, steady {_show(steady)}, {first / steady:.2f}x")
        print(f"load: {_load()}")
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()
