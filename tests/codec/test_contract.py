"""The contract between the Rust core and the Python types: for every document of a corpus, the
Rust core (`msgwire._core.normalize_session`) reads what Python wrote and writes exactly the
same bytes back, and Python reads the Rust output as the same session.

The corpus: the hand-written golden documents (tests/golden/*.json) and hypothesis-generated
sessions. Beyond canonical input, both sides also normalize the same way: defaults spelled out,
unknown fields, any key order and any spelling of a number all come out as the same bytes.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import DecodeError, ImageBlock, Session, ToolResultMessage, UrlSource, UserMessage
from tests._support.strategies import examples, finite_floats, sessions

GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.json"))
STAMP = "2026-01-02T03:04:05Z"


def both(data: bytes) -> tuple[bytes, bytes]:
    """What Python and what Rust write after reading `data`."""
    return msgwire.dumps(msgwire.loads(data)), msgwire._core.normalize_session(data)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_rust_writes_golden_documents_back_unchanged(path: Path) -> None:
    doc = path.read_bytes().removesuffix(b"\n")
    written = msgwire._core.normalize_session(doc)
    assert written == doc
    assert msgwire.loads(written) == msgwire.loads(doc)


@examples(150)
@given(sessions)
def test_rust_writes_what_python_wrote(session: Session) -> None:
    data = msgwire.dumps(session)
    written = msgwire._core.normalize_session(data)
    assert written == data
    assert msgwire.loads(written) == session


@examples(300)
@given(finite_floats, finite_floats)
def test_floats_read_and_written_alike(duration: float, confidence: float) -> None:
    """msgspec writes Python's repr digits (`1e16`, `0.00015`); serde_json alone would write
    `1e+16` and parse some numbers one ulp off."""
    session = Session(
        messages=[
            ToolResultMessage(tool_call_id="c", duration_ms=duration),
            UserMessage(content=[ImageBlock(source=UrlSource(url="u"), confidence=confidence)]),
        ]
    )
    data = msgwire.dumps(session)
    assert msgwire._core.normalize_session(data) == data


_digits = st.text("0123456789", min_size=1, max_size=22)
_signs = st.sampled_from(["", "+", "-"])
_exponents = st.builds("".join, st.tuples(st.sampled_from("eE"), _signs, st.integers(0, 330).map(str)))
number_texts = st.builds(
    lambda sign, whole, frac, exp: sign + (whole.lstrip("0") or "0") + frac + exp,
    st.sampled_from(["", "-"]),
    _digits,
    st.just("") | _digits.map(lambda d: "." + d),
    st.just("") | _exponents,
)

T = '"timestamp":"' + STAMP + '"'


def _envelope(*messages: str) -> bytes:
    head = '{"version":1,"id":"s","system_prompt":null,"created_at":"' + STAMP + '","updated_at":"' + STAMP + '"'
    return (head + ',"metadata":{},"messages":[' + ",".join(messages) + "]}").encode()


def _with_duration(text: str) -> bytes:
    return _envelope('{"type":"tool_result","id":"r",' + T + ',"tool_call_id":"c","duration_ms":' + text + "}")


@examples(300)
@given(number_texts)
def test_any_spelling_of_a_number_reads_and_writes_alike(text: str) -> None:
    """Integers, exponents, `-0`, trailing zeros, out of range: the same value or the same refusal."""
    data = _with_duration(text)
    try:
        python = msgwire.dumps(msgwire.loads(data))
    except DecodeError:
        with pytest.raises(DecodeError, match="out of range"):
            msgwire._core.normalize_session(data)
    else:
        assert msgwire._core.normalize_session(data) == python


@pytest.mark.parametrize(
    ("text", "written"),
    [("12", "12.0"), ("-0", "0.0"), ("-0.0", "-0.0"), ("1E5", "100000.0"), ("1.50", "1.5"), ("1e-7", "1e-7"),
     ("0.1e1", "1.0"), ("10000000000000000", "1e16"), ("18446744073709551616", "1.8446744073709552e19"),
     ("1e-400", "0.0")],
)  # fmt: skip
def test_number_spellings(text: str, written: str) -> None:
    python, rust = both(_with_duration(text))
    assert python == rust
    assert f'"duration_ms":{written}}}'.encode() in python


def _with_integer(text: str) -> list[tuple[bytes, bool]]:
    """`text` in each integer field of the schema: a token count (u64), a citation index (u64), a
    line number (i64), the attempts of an image (u32); and whether the field is a u64."""
    image = '{"type":"image","source":{"type":"url","url":"u"},"attempts":' + text + "}"
    lines = '{"type":"file_reference","path":"a","start_line":' + text + "}"
    cited = '{"type":"text","text":"t","citations":[{"kind":"k","start_index":' + text + "}]}"
    return [
        (_envelope('{"type":"assistant","id":"a",' + T + ',"usage":{"input_tokens":' + text + "}}"), True),
        (_envelope('{"type":"assistant","id":"a",' + T + ',"content":[' + cited + "]}"), True),
        (_envelope('{"type":"user","id":"u",' + T + ',"content":[' + lines + "," + image + "]}"), False),
    ]


_INTEGER_EDGES = [
    "-0", "0", "-1", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "123456789012345678901234567890", "1e400", "-1e400", "1e-400", "0e0", "1.0",
]  # fmt: skip


def _integers_read_alike(text: str) -> None:
    """An integer field takes the same numbers on both sides: a JSON integer in the range of the
    Rust type (`-0` is 0), never a fraction, an exponent or an integer beyond it; but for a u64
    beyond 2**64 - 1, which the core refuses and Python reads (msgspec bounds an int to 64 signed
    bits at most: `types.py`, `_U64`)."""
    beyond_u64 = text.lstrip("-").isdigit() and int(text) > 2**64 - 1
    for data, u64 in _with_integer(text):
        if u64 and beyond_u64:
            with pytest.raises(DecodeError, match="integer out of range"):
                msgwire._core.normalize_session(data)
            assert msgwire.loads(data)
            continue
        try:
            python = msgwire.dumps(msgwire.loads(data))
        except DecodeError:
            with pytest.raises(DecodeError):
                msgwire._core.normalize_session(data)
        else:
            assert msgwire._core.normalize_session(data) == python


@examples(300)
@given(number_texts | st.integers(-(2**70), 2**70).map(str))
def test_any_spelling_of_an_integer_reads_alike(text: str) -> None:
    _integers_read_alike(text)


@pytest.mark.parametrize("text", _INTEGER_EDGES)
def test_integer_edges_read_alike(text: str) -> None:
    _integers_read_alike(text)


def test_defaults_spelled_out_and_unknown_fields_are_dropped_alike() -> None:
    spelled = _envelope(
        '{"type":"user","id":"u",' + T + ',"content":[],"source":"direct","extra":[1]}',
        '{"type":"assistant","id":"a",' + T + ',"content":[{"type":"thinking","thinking":"","signature":null},'
        '{"type":"tool_call","id":"c","name":"f","arguments":"{}","approval":"pending","malformed":false}],'
        '"stop_reason":null,"usage":{"input_tokens":0,"reasoning_tokens":0},"model":null}',
        '{"type":"tool_result","id":"t",' + T + ',"tool_call_id":"c","tool_name":null,"content":[],'
        '"is_error":false,"status":"success","error":{"message":"m","traceback":null,"recoverable":true},'
        '"started_at":null,"duration_ms":null}',
        '{"type":"system_control","id":"s",' + T + ',"control":"x","params":{ }}',
        '{"type":"user","id":"u2",' + T + ',"content":[{"type":"image","source":{"type":"path","path":"p",'
        '"media_type":null},"recognition_mode":"auto","confidence":null},{"type":"file_reference","path":"a",'
        '"start_line":null,"status":"pending"}]}',
    )
    python, rust = both(spelled)
    assert python == rust
    assert python == _envelope(
        '{"type":"user","id":"u",' + T + "}",
        '{"type":"assistant","id":"a",' + T + ',"content":[{"type":"thinking"},'
        '{"type":"tool_call","id":"c","name":"f"}],"usage":{}}',
        '{"type":"tool_result","id":"t",' + T + ',"tool_call_id":"c","error":{"message":"m"}}',
        '{"type":"system_control","id":"s",' + T + ',"control":"x"}',
        '{"type":"user","id":"u2",' + T + ',"content":[{"type":"image","source":{"type":"path","path":"p"}},'
        '{"type":"file_reference","path":"a"}]}',
    )


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@examples(50)
@given(sessions, st.randoms(use_true_random=False))
def test_any_key_order_is_written_in_schema_order_alike(session: Session, rng: random.Random) -> None:
    data = msgwire.dumps(session)
    doc = _shuffled(msgspec.json.decode(data), rng)
    doc["metadata"] = msgspec.json.decode(data)["metadata"]  # free-form: kept as written, by both
    scrambled = msgspec.json.encode(doc)
    python, rust = both(scrambled)
    assert python == rust
