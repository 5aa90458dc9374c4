"""The ``msgwire`` command: parse, convert, bench (demo: test_demo.py).

- ``parse --json`` of every bundled recording against a golden file (``tests/snapshots/cli/parse``;
  ``MSGWIRE_UPDATE_SNAPSHOTS=1`` rewrites them), with the random message id / timestamp (and the
  synthetic call ids made from the id) replaced by placeholders; ``--events``; the rendered and
  live output; dialect detection of every recording; a 64 MiB recording in bounded memory.
- ``convert``: canonical -> each dialect -> canonical -> the dialect again gives the same bytes;
  a lossless conversation comes back equal; a cross-provider conversion prints its loss report.
- ``bench``: ``--quick --plot`` writes a PNG that matplotlib reads back; ``--json`` is JSON and
  lists the peers that are not installed as skipped.
- Exit codes and messages: 0 / 1 (a malformed or truncated stream, a bad body) / 2 (a missing
  file, an unknown or undetectable dialect); the console script and ``python -m msgwire``.

Commands run in-process (``main``) except where the process itself is under test.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console

import msgwire
from msgwire import formats
from msgwire.cli import main
from msgwire.cli.detect import request_kind, sniff_stream
from msgwire.cli.inputs import UsageError
from msgwire.cli.live import TAIL, LiveView

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests"
EXAMPLES = ROOT / "python" / "msgwire" / "examples"
RECORDINGS = sorted(p for p in (EXAMPLES / "streams").iterdir() if p.suffix in (".sse", ".ndjson"))
WIRE = sorted(p for p in (HERE / "fixtures" / "wire").glob("*/*") if p.suffix in (".sse", ".ndjson"))
GOLDEN = HERE / "snapshots" / "cli" / "parse"
UPDATE_SNAPSHOTS = os.environ.get("MSGWIRE_UPDATE_SNAPSHOTS", "") not in ("", "0")
BUNDLED_DIALECT = {
    "openai-parallel-tool-calls.sse": "openai",
    "anthropic-thinking.sse": "anthropic",
    "openai-responses-function-call.sse": "openai-responses",
    "gemini-thoughts.sse": "gemini",
    "ollama-thinking.ndjson": "ollama",
    "groq-error-midstream.sse": "openai",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def normalized(message: dict[str, Any]) -> dict[str, Any]:
    """A message's JSON with its random id and timestamp (and the call ids built from the id's
    last 12 characters) replaced by placeholders, as tests/stream/test_stream.py does."""
    ident = message["id"]
    text = json.dumps(message, ensure_ascii=False).replace(ident, "<id>")
    data: dict[str, Any] = json.loads(text)
    data["timestamp"] = "<timestamp>"
    return data


# --- parse: goldens, events, rendering, detection ----------------------------------------------


def test_every_bundled_recording_has_a_dialect_here() -> None:
    assert sorted(p.name for p in RECORDINGS) == sorted(BUNDLED_DIALECT)


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_parse_json_golden(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, err = run(capsys, "parse", str(path), "--json")
    golden = {"exit_code": code, "message": normalized(json.loads(out))}
    # The bytes are msgwire's canonical JSON of what assemble() gives for the same recording.
    reference = msgwire.assemble(path.read_bytes(), BUNDLED_DIALECT[path.name]) if code == 0 else None
    if reference is not None:
        assert golden["message"] == normalized(json.loads(msgwire.dumps(reference)))
        assert err == ""
    file = GOLDEN / f"{path.stem}.json"
    text = json.dumps(golden, indent=1, ensure_ascii=False) + "\n"
    if UPDATE_SNAPSHOTS:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return
    assert file.exists(), f"no golden {file.relative_to(ROOT)}: run with MSGWIRE_UPDATE_SNAPSHOTS=1 and review it"
    assert json.loads(file.read_text(encoding="utf-8")) == golden


def test_no_stale_goldens() -> None:
    stale = [p for p in GOLDEN.glob("*.json") if p.stem not in {r.stem for r in RECORDINGS}]
    assert not stale


def test_parse_json_of_a_failed_stream_is_the_partial_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "parse", str(EXAMPLES / "streams" / "groq-error-midstream.sse"), "--json")
    assert code == 1
    message = json.loads(out)
    assert message["stop_reason"] == "error"
    assert message["content"][0]["type"] == "thinking"
    assert "ProviderError at byte 27760" in err
    assert "partial message is kept" in err


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_parse_events_is_one_json_event_per_line(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, _ = run(capsys, "parse", str(path), "--events")
    lines = out.splitlines()
    events = [msgspec.json.decode(line, type=msgwire.Event) for line in lines]
    expected: list[msgwire.Event] = []
    try:
        expected.extend(msgwire.stream(path.read_bytes(), BUNDLED_DIALECT[path.name]))  # kept up to a failure
    except msgwire.StreamError:
        assert code == 1
    else:
        assert code == 0
    assert [e.type for e in events] == [e.type for e in expected]
    text = "".join(e.text for e in events if isinstance(e, msgwire.TextDelta))
    assert text == "".join(e.text for e in expected if isinstance(e, msgwire.TextDelta))
    assert len(events) > 10


@pytest.mark.parametrize("live", [False, True], ids=["final-only", "live-forced"])
def test_parse_renders_the_assembled_message(capsys: pytest.CaptureFixture[str], live: bool) -> None:
    path = EXAMPLES / "streams" / "openai-parallel-tool-calls.sse"
    code, out, err = run(capsys, "parse", str(path), "--live" if live else "--no-live")
    assert code == 0, err
    assert "stop=tool_use" in out
    assert "get_weather" in out
    assert '"city": "Mexico City"' in out  # the arguments, indented
    assert "get_product_name" in out
    assert "openai, 4,241 bytes" in out


def test_parse_reads_standard_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (EXAMPLES / "streams" / "ollama-thinking.ndjson").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    code, out, _ = run(capsys, "parse", "-", "--json")
    assert code == 0
    assert json.loads(out)["provider"] == "ollama"


def test_live_view_shows_each_block_and_keeps_only_a_tail() -> None:
    view = LiveView("t")
    events = list(msgwire.stream((EXAMPLES / "streams" / "anthropic-thinking.sse").read_bytes(), "anthropic"))
    for event in events:
        view.add(event)
    for i in range(2000):  # a long answer: the view keeps its tail only
        view.add(msgwire.TextDelta(text=f" word{i}", index=1))
    console = Console(record=True, width=100, color_system=None)
    console.print(view)
    shown = console.export_text()
    assert "thinking:" in shown
    assert "claude-sonnet-4-20250514" in shown
    assert "word1999" in shown
    assert "characters above" in shown
    assert all(len(block.tail) <= 2 * TAIL for block in view.blocks.values())
    assert "stop=end_turn" in shown


def test_live_view_grows_tool_arguments() -> None:
    view = LiveView("t")
    data = (EXAMPLES / "streams" / "openai-responses-function-call.sse").read_bytes()
    events = list(msgwire.stream(data, "openai-responses"))
    begin = next(i for i, e in enumerate(events) if e.type == "tool_call_begin")
    for event in events[: begin + 2]:
        view.add(event)
    console = Console(record=True, width=100, color_system=None)
    console.print(view)
    shown = console.export_text()
    assert "get_capital" in shown
    assert "get_capital  id=call_LabG58Uhrq9kZvR52BYKjToD …" in shown  # not ended yet


@pytest.mark.parametrize("path", RECORDINGS + WIRE, ids=[f"{p.parent.name}/{p.name}" for p in RECORDINGS + WIRE])
def test_dialect_detection_of_every_recording(path: Path) -> None:
    folder = {"openai-compat": "openai", "streams": BUNDLED_DIALECT.get(path.name, "")}.get(path.parent.name)
    expected = folder or path.parent.name
    if expected == "openai" and path.name.startswith("responses-"):
        expected = "openai-responses"
    assert sniff_stream(path.read_bytes()[:65536]) == expected


def test_detection_from_the_first_kib_alone() -> None:
    """The detector classifies from the start of a stream, even cut mid-event."""
    for path in RECORDINGS:
        assert sniff_stream(path.read_bytes()[:1024]) == BUNDLED_DIALECT[path.name], path.name


def test_parse_without_dialect_equals_parse_with_it(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "streams" / "gemini-thoughts.sse"
    _, detected, _ = run(capsys, "parse", str(path), "--json")
    _, given, _ = run(capsys, "parse", str(path), "--json", "--dialect", "gemini")
    assert normalized(json.loads(detected)) == normalized(json.loads(given))


# --- parse: exit codes and messages --------------------------------------------------------------


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "parse", str(tmp_path / "nope.sse"))
    assert (code, out) == (2, "")
    assert f"msgwire parse: error: no such file: {tmp_path / 'nope.sse'}" in err


def test_unknown_dialect_exits_2_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["parse", str(RECORDINGS[0]), "--dialect", "cohere"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'cohere'" in err
    for dialect in ("openai", "openai-responses", "anthropic", "gemini", "ollama"):
        assert f"'{dialect}'" in err


def test_undetectable_dialect_exits_2_suggesting_dialect(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "other.sse"
    path.write_bytes(b'data: {"hello": "world"}\n\n')
    code, _, err = run(capsys, "parse", str(path))
    assert code == 2
    assert "cannot tell the dialect" in err
    assert "--dialect" in err


def test_malformed_stream_exits_1_with_offset_and_partial(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
    path = tmp_path / "bad.sse"
    path.write_bytes(good + b'data: {"choices": [oops\n\n')
    code, out, err = run(capsys, "parse", str(path), "--no-live")
    assert code == 1
    assert re.search(rf"MalformedStreamError at byte {len(good) + 6 + 13}\b", out), out
    assert "Hello" in out  # the partial message is shown
    assert "partial message is kept: 1 block(s), stop_reason=error" in out
    assert err == ""


def test_truncated_stream_exits_1_with_offset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = (EXAMPLES / "streams" / "anthropic-thinking.sse").read_bytes()[:3000]
    path = tmp_path / "cut.sse"
    path.write_bytes(data)
    code, out, err = run(capsys, "parse", str(path), "--json")
    assert code == 1
    assert json.loads(out)["stop_reason"] == "error"
    assert "TruncatedStreamError at byte 3000" in err
    assert "diagnostic undispatched_event at byte" in err


# --- parse: bounded memory -------------------------------------------------------------------------

_PEAK_RSS = """
import resource, sys
from msgwire.cli import main
code = main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, code, file=sys.stderr)
"""


def _framing_heavy_recording(path: Path, events: int) -> int:
    """An OpenAI stream of ``events`` ~1 KiB events, each carrying a one-character text delta
    and ~900 bytes of padding (as OpenAI's ``obfuscation`` field does): the file grows with the
    events, the assembled message barely."""
    pad = "x" * 900
    event = (
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
        f'"choices":[{{"index":0,"delta":{{"content":"a"}},"finish_reason":null}}],"obfuscation":"{pad}"}}\n\n'
    ).encode()
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    with path.open("wb") as file:
        for _ in range(events // 1000):
            file.write(event * 1000)
        file.write(end)
    return path.stat().st_size


def _peak_rss(*argv: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    peak, code = done.stderr.split()[-2:]
    assert code == "0", done.stderr
    return int(peak)


@pytest.mark.parametrize("mode", ["--json", "--events", "--no-live"])
def test_parse_streams_a_large_recording_in_bounded_memory(tmp_path: Path, mode: str) -> None:
    """Peak RSS of `parse` on a 64 MiB recording minus that on a 1,000-event one (same imports,
    same code) stays under 24 MiB: reading the file whole, or keeping every event, would cost
    at least the file's 64 MiB. What does grow is the assembled message, here 64 KB of text,
    by design (the recording is mostly framing, as real streams are)."""
    small = _framing_heavy_recording(tmp_path / "small.sse", 1_000)
    big = _framing_heavy_recording(tmp_path / "big.sse", 64_000)
    assert big > 60 * 2**20
    assert big > 50 * small
    growth = _peak_rss("parse", str(tmp_path / "big.sse"), mode) - _peak_rss("parse", str(tmp_path / "small.sse"), mode)
    assert growth < 24 * 2**20, f"peak RSS grew by {growth / 2**20:.1f} MiB for a {big / 2**20:.0f} MiB recording"


# --- convert -----------------------------------------------------------------------------------------


def _convert(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: bytes, *argv: str) -> tuple[bytes, str]:
    source = tmp_path / "in.json"
    target = tmp_path / "out.json"
    source.write_bytes(data)
    code, _, err = run(capsys, "convert", str(source), *argv, "-o", str(target))
    assert code == 0, err
    return target.read_bytes(), err


@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_convert_round_trip_through_canonical(capsys: pytest.CaptureFixture[str], tmp_path: Path, dialect: str) -> None:
    """canonical -> dialect -> canonical -> dialect: the same request body both times (the
    normal form of msgwire.formats), the input format detected on the way back."""
    body, _ = _convert(capsys, tmp_path, (EXAMPLES / "session.json").read_bytes(), "--to", dialect)
    canonical, _ = _convert(capsys, tmp_path, body, "--to", "canonical")  # --from detected
    assert isinstance(msgwire.loads(canonical), msgwire.Session)
    again, _ = _convert(capsys, tmp_path, canonical, "--to", dialect)
    assert json.loads(again) == json.loads(body)


def _lossless(provider: str) -> msgwire.Session:
    call = msgwire.ToolCallBlock(id="call_1", name="get_weather", arguments='{"city":"Paris"}')
    return msgwire.Session(
        system_prompt="Be brief.",
        messages=[
            msgwire.user("What is the weather in Paris?"),
            msgwire.assistant([msgwire.TextBlock(text="Checking."), call], provider=provider),
            msgwire.tool_result("call_1", "18°C, light rain", tool_name="get_weather"),
            msgwire.assistant("It is 18°C with light rain.", provider=provider),
        ],
    )


def _comparable(session: msgwire.Session) -> list[Any]:
    """Messages without their ids and times; tool-call ids by order of appearance (Ollama's
    requests carry none: the way back makes new ones, consistently)."""
    messages: list[Any] = msgspec.to_builtins(session.messages)
    calls: dict[str, str] = {}
    for m in messages:
        del m["id"], m["timestamp"]
        for block in m.get("content", []):
            if block["type"] == "tool_call":
                block["id"] = calls.setdefault(block["id"], f"call-{len(calls)}")
        if "tool_call_id" in m:
            m["tool_call_id"] = calls.setdefault(m["tool_call_id"], f"call-{len(calls)}")
    return messages


PROVIDER = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}


@pytest.mark.parametrize("dialect", formats.DIALECTS)
def test_convert_lossless_conversation_comes_back_equal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dialect: str
) -> None:
    session = _lossless(PROVIDER.get(dialect, dialect))
    body, err = _convert(capsys, tmp_path, msgwire.dumps(session), "--to", dialect)
    assert "loss report" not in err
    back, _ = _convert(capsys, tmp_path, body, "--from", dialect, "--to", "canonical")
    restored = msgwire.loads(back)
    assert isinstance(restored, msgwire.Session)
    assert restored.system_prompt == session.system_prompt
    assert _comparable(restored) == _comparable(session)


def test_convert_across_providers_prints_the_loss_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    anthropic, first = _convert(capsys, tmp_path, (EXAMPLES / "session.json").read_bytes(), "--to", "anthropic")
    assert "loss report, canonical → anthropic: 3 lossy step(s)" in first
    assert "file_reference" in first
    assert "read by OCR" in first  # the OCR-read screenshot goes as its text, not as an image
    openai, report = _convert(capsys, tmp_path, anthropic, "--to", "openai")
    assert "loss report, anthropic → openai: 2 lossy step(s)" in report
    assert re.search(r"1 \(assistant\)\s+0\s+thinking\s+drop", report), report
    assert "is_error" in report
    assert json.loads(openai) == formats.to_request(formats.from_request(anthropic, "anthropic"), "openai")


def test_convert_writes_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "convert", str(EXAMPLES / "session.json"), "--to", "gemini")
    assert code == 0
    assert set(json.loads(out)) == {"systemInstruction", "contents"}
    assert "mcp_resource" in err  # the loss report goes to standard error


@pytest.mark.parametrize(
    "path", sorted((HERE / "fixtures" / "requests").glob("*/*.json")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_request_dialect_detection(path: Path) -> None:
    """Every request fixture is detected as its dialect, except the bodies any chat dialect
    could have written (plain text messages), for which --from is required."""
    body = json.loads(path.read_bytes())
    if f"{path.parent.name}/{path.name}" in ("ollama/basic.json", "openai/chat_basic.json"):
        with pytest.raises(UsageError, match="pass --from"):
            request_kind(body)
    else:
        assert request_kind(body) == path.parent.name


def test_convert_ambiguous_body_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "convert", str(HERE / "fixtures" / "requests" / "openai" / "chat_basic.json"), "--to", "anthropic"
    )
    assert (code, out) == (2, "")
    assert "pass --from" in err


def test_convert_malformed_input_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"messages": [')
    code, _, err = run(capsys, "convert", str(path), "--to", "openai")
    assert code == 1
    assert "DecodeError: the input is not JSON" in err
    assert "(byte 14)" in err
    path.write_bytes(b'{"contents": [{"role": "user", "parts": 5}]}')
    code, _, err = run(capsys, "convert", str(path), "--to", "openai")
    assert code == 1
    assert "byte 40" in err


def test_convert_missing_file_and_unknown_format_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "convert", str(tmp_path / "nope.json"), "--to", "openai")
    assert code == 2
    assert "no such file" in err
    with pytest.raises(SystemExit) as exited:
        main(["convert", str(EXAMPLES / "session.json"), "--to", "cohere"])
    assert exited.value.code == 2
    assert "invalid choice: 'cohere'" in capsys.readouterr().err


# --- bench -------------------------------------------------------------------------------------------


def test_bench_quick_plot_writes_a_png(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from matplotlib import image

    png = tmp_path / "bench.png"
    code, out, err = run(capsys, "bench", "--quick", "--rounds", "1", "--plot", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = image.imread(png)
    assert pixels.shape[0] > 300
    assert pixels.shape[1] > 300
    assert "msgwire beside its peers (quick mode)" in out
    for entry in ("openai SDK", "anthropic SDK", "httpx-sse + json", "pydantic-ai", "msgspec Structs", "orjson"):
        assert entry in out
    assert "error:" not in out  # every peer's result matched msgwire's


def test_bench_json_lists_missing_peers_as_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules is how Python marks a module as unimportable: find_spec says None.
    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    code, out, _ = run(capsys, "bench", "--quick", "--rounds", "1", "--json")
    assert code == 0
    results = json.loads(out)
    assert results["mode"] == "quick"
    assert results["skipped"] == ["anthropic SDK", "pydantic-ai"]
    entries = {(g["name"], e["entry"]): e for g in results["groups"] for e in g["entries"]}
    assert entries["anthropic stream", "anthropic SDK"]["status"] == "skipped (not installed: anthropic)"
    assert entries["loads", "pydantic-ai"]["status"] == "skipped (not installed: pydantic_ai)"
    assert entries["loads", "pydantic-ai"]["median_s"] is None
    msgwire_row = entries["openai stream", "msgwire"]
    assert (msgwire_row["status"], msgwire_row["ratio"], msgwire_row["rounds"]) == ("ok", 1.0, 1)
    sdk = entries["openai stream", "openai SDK"]
    assert sdk["ratio"] == pytest.approx(sdk["median_s"] / msgwire_row["median_s"])
    assert all(g["bytes"] > 0 and g["workload"] for g in results["groups"])


def test_bench_table_shows_skipped_peers(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    code, out, _ = run(capsys, "bench", "--quick", "--rounds", "1")
    assert code == 0
    assert re.search(r"openai SDK\s+—\s+—\s+skipped \(not installed: openai\)", out), out


# --- the process: console script, python -m ----------------------------------------------------------


def _process(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def test_python_dash_m_and_the_console_script_run() -> None:
    path = str(EXAMPLES / "streams" / "anthropic-thinking.sse")
    module = _process(sys.executable, "-m", "msgwire", "parse", path, "--json")
    script = shutil.which("msgwire", path=str(Path(sys.executable).parent))
    assert script is not None, "the msgwire console script is not installed next to the interpreter"
    console = _process(script, "parse", path, "--json")
    assert module.returncode == console.returncode == 0
    assert normalized(json.loads(module.stdout)) == normalized(json.loads(console.stdout))
    usage = _process(script, "parse", "/nonexistent.sse")
    assert usage.returncode == 2
    assert "no such file" in usage.stderr
    assert "Traceback" not in usage.stderr


# --- transcode -------------------------------------------------------------------------------


def _transcoded(data: bytes, source: str, target: str) -> tuple[bytes, str | None]:
    """What ``msgwire.transcode`` writes, and the name of the error it raises (if it does)."""
    out: list[bytes] = []
    try:
        out.extend(msgwire.transcode(data, source, target))
    except msgwire.StreamError as failure:
        return b"".join(out), type(failure).__name__
    return b"".join(out), None


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
@pytest.mark.parametrize("target", ["openai", "anthropic", "openai-responses", "gemini", "ollama"])
def test_transcode_writes_the_target_stream(
    capsysbinary: pytest.CaptureFixture[bytes], path: Path, target: str
) -> None:
    code = main(["transcode", str(path), "--to", target])  # the source dialect is detected
    out, err = capsysbinary.readouterr()
    expected, failure = _transcoded(path.read_bytes(), BUNDLED_DIALECT[path.name], target)
    if failure is None:
        assert (code, err) == (0, b"")
        assert msgwire.assemble(out, target).text == msgwire.assemble(expected, target).text
    else:
        assert code == 1
        assert f"msgwire transcode: {failure}: ".encode() in err
        assert out.split()[-1] == expected.split()[-1]  # ends with the target's error frame
    # the same events, but for what each run makes fresh (the created time, ids from the message id)
    assert len(out.splitlines()) == len(expected.splitlines())


def test_transcode_unknown_target_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["transcode", str(RECORDINGS[0]), "--to", "cohere"])
    assert exited.value.code == 2
    assert "invalid choice: 'cohere'" in capsys.readouterr().err


def test_transcode_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "transcode", "nope.sse", "--to", "openai")
    assert code == 2
    assert "no such file: nope.sse" in err
