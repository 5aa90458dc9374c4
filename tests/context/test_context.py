"""msgwire.context.build: one test per row of the documented truth table (read from the same
data the docs show), the window's edge around tool calls and results, what is never sent,
never modified or persisted, and properties over random valid sessions and windows."""

from __future__ import annotations

import copy
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import msgwire
from msgwire import (
    AssistantMessage,
    Message,
    Session,
    SystemControlMessage,
    ToolCallBlock,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
)
from msgwire import context as context_module
from msgwire.context import Context, EncouragementCounter, build
from tests._support.strategies import examples

ROOT = Path(__file__).resolve().parents[2]


# --- helpers ----------------------------------------------------------------------------------


def real(text: str = "do the thing", source: str = "direct") -> UserMessage:
    return msgwire.user(text, source=source)


def stored_synthetic(text: str = "Continue.") -> UserMessage:
    """A synthetic user message some other writer persisted: sent where it is, never real."""
    return msgwire.user(text, source="synthetic")


def calls(*ids: str, text: str = "") -> AssistantMessage:
    blocks: list[Any] = [msgwire.TextBlock(text=text)] if text else []
    return AssistantMessage(content=[*blocks, *(ToolCallBlock(id=i, name="f") for i in ids)], stop_reason="tool_use")


def result(call_id: str) -> ToolResultMessage:
    return msgwire.tool_result(call_id, f"result of {call_id}")


def session_of(*messages: Message, system_prompt: str | None = "Be brief.") -> Session:
    return Session(system_prompt=system_prompt, messages=list(messages))


def sent(session: Session, window: int | None, **options: Any) -> list[Message]:
    return build(session, window, **options).messages


# --- the truth table, as the docs show it ------------------------------------------------------

COLUMNS = [
    *("row", "real_in_window", "opens_with_user", "real_before", "prev"),  # inputs
    *("pinned", "synthetic", "trimmed", "new", "idle"),  # outputs
]
ROWS = [dict(zip(COLUMNS, cells, strict=True)) for cells in context_module._TABLE]


def flag(cell: str, value: bool) -> bool:
    return cell == "any" or (cell == "yes") == value


def prev_matches(cell: str, prev: int) -> bool:
    return cell == "any" or (prev >= 3 if cell == "n >= 3" else prev == int(cell))


def new_count(cell: str, prev: int) -> int:
    return prev + 1 if cell == "n + 1" else int(cell)


def row_for(real_in_window: bool, opens_with_user: bool, real_before: bool, prev: int) -> dict[str, str]:
    found = [
        row
        for row in ROWS
        if flag(row["real_in_window"], real_in_window)
        and flag(row["opens_with_user"], opens_with_user)
        and flag(row["real_before"], real_before)
        and prev_matches(row["prev"], prev)
    ]
    assert len(found) == 1, (real_in_window, opens_with_user, real_before, prev, found)
    return found[0]


def expand_flag(cell: str) -> list[bool]:
    return [True, False] if cell == "any" else [cell == "yes"]


def expand_prev(cell: str) -> list[int]:
    return {"any": [0, 1, 4], "n >= 3": [3, 7]}.get(cell, [int(cell)] if cell.isdigit() else [])


def test_the_docs_hold_the_table_verbatim() -> None:
    table = context_module._render_table()
    assert context_module.__doc__ is not None
    assert table in context_module.__doc__, "the msgwire.context docstring's truth table is stale"
    doc = (ROOT / "docs" / "context.md").read_text(encoding="utf-8")
    assert table in doc, "docs/context.md's truth table is stale: paste `python -m msgwire.context`"
    assert len(ROWS) == 8
    assert [row["row"] for row in ROWS] == [str(i) for i in range(1, 9)]


def test_the_rows_are_disjoint_and_cover_every_input() -> None:
    for real_in_window, opens, before, prev in itertools.product([True, False], [True, False], [True, False], range(9)):
        row_for(real_in_window, opens, before, prev)  # asserts exactly one row matches


def row_scenario(real_in_window: bool, opens_with_user: bool, real_before: bool) -> tuple[Session, list[Message], int]:
    """A session whose window (its last `window` messages, needing no widening) has the given
    inputs; returns it, the window's messages and `window`."""
    before: list[Message] = [real("the task"), msgwire.assistant("on it")] if real_before else [msgwire.assistant("hi")]
    inside: list[Message]
    if opens_with_user:
        first = real("now this") if real_in_window else stored_synthetic()
        inside = [first, msgwire.assistant("ok")]
    elif real_in_window:
        inside = [msgwire.assistant("an answer"), real("thanks, now this")]
    else:
        inside = [calls("x1"), result("x1"), msgwire.assistant("done")]
    noise: list[Message] = [
        msgwire.system_control("mode_change", new="act"),
        UnknownMessage(b'{"type":"hologram"}', "hologram"),
    ]
    return session_of(*before, *noise, *inside), inside, len(inside)


@pytest.mark.parametrize("row", ROWS, ids=[f"row{row['row']}" for row in ROWS])
def test_truth_table_row(row: dict[str, str]) -> None:
    cases = list(
        itertools.product(
            expand_flag(row["real_in_window"]),
            expand_flag(row["opens_with_user"]),
            expand_flag(row["real_before"]),
            expand_prev(row["prev"]),
        )
    )
    assert cases
    for real_in_window, opens, before, prev in cases:
        assert row_for(real_in_window, opens, before, prev) is row
        session, inside, window = row_scenario(real_in_window, opens, before)
        ctx = build(session, window, synthetic_text="Keep going.", counter=EncouragementCounter(count=prev))

        assert (ctx.pinned is not None) == (row["pinned"] == "yes")
        assert (ctx.synthetic is not None) == (row["synthetic"] == "yes")
        history = session.messages_for_model()
        assert (ctx.window_start != len(history) - window) == (row["trimmed"] == "yes")
        assert ctx.counter.count == new_count(row["new"], prev)
        assert ctx.idle == ctx.counter.idle == (row["idle"] == "yes")

        assert ctx.system_prompt == "Be brief."
        if ctx.pinned is not None:
            assert ctx.pinned is history[0]  # the real user message before the window
            assert ctx.messages == [ctx.pinned, *inside]
        elif ctx.synthetic is not None:
            assert ctx.synthetic.source == "synthetic"
            assert ctx.synthetic.text == "Keep going."
            assert ctx.messages == [ctx.synthetic, *inside]
        elif row["trimmed"] == "yes":
            assert ctx.messages == inside[1:]  # from the window's first user message
        else:
            assert ctx.messages == inside
        assert type(ctx.messages[0]) is UserMessage
        msgwire.validate(ctx.messages)


# --- the window's edge ---------------------------------------------------------------------------


def test_a_result_at_the_edge_pulls_its_call_in() -> None:
    ask, call, answer = real(), calls("c1"), result("c1")
    ctx = build(session_of(ask, call, answer), 1)
    assert ctx.window_start == 1
    assert ctx.messages == [ask, call, answer]  # widened to the call, the ask pinned in front
    assert ctx.pinned is ask


def test_parallel_results_split_across_the_edge_come_in_with_their_call() -> None:
    ask, hello = real(), msgwire.assistant("hello")
    call = calls("a", "b", "c", text="three at once")
    rb, ra, rc, done = result("b"), result("a"), result("c"), msgwire.assistant("done")
    session = session_of(ask, hello, call, rb, ra, rc, done)
    for window in (1, 2, 3, 4, 5):
        ctx = build(session, window)
        expected = [done] if window == 1 else [call, rb, ra, rc, done]
        assert ctx.messages == [ask, *expected], window
    assert sent(session, 6) == [ask, hello, call, rb, ra, rc, done]


def test_only_the_calls_needed_are_pulled_in() -> None:
    ask, cx, rx, cy, ry = real(), calls("x"), result("x"), calls("y"), result("y")
    assert sent(session_of(ask, cx, rx, cy, ry), 1) == [ask, cy, ry]


def test_widening_follows_calls_that_interleave() -> None:
    """A result pulled in by widening can itself answer an earlier call: the window keeps going."""
    ask, cx, cy, rx, cz, ry, rz = real(), calls("x"), calls("y"), result("x"), calls("z"), result("y"), result("z")
    ctx = build(session_of(ask, cx, cy, rx, cz, ry, rz), 1)
    assert ctx.window_start == 1
    assert ctx.messages == [ask, cx, cy, rx, cz, ry, rz]


def test_a_call_without_its_results_yet_is_sent_as_it_is() -> None:
    """The turn in progress: one of two parallel results is in, the other is not."""
    ask, call, first = real(), calls("a", "b"), result("a")
    assert sent(session_of(ask, call, first), 1) == [ask, call, first]
    assert sent(session_of(ask, call), 1) == [ask, call]


def test_reused_call_ids_pair_with_the_most_recent_call() -> None:
    ask, first, r1, again, r2 = real(), calls("c"), result("c"), calls("c"), result("c")
    assert sent(session_of(ask, first, r1, again, r2), 1) == [ask, again, r2]


def test_a_result_answering_no_call_is_sent_where_it_is() -> None:
    """An invalid history is not repaired (validate the session to find it)."""
    ask, ghost, reply = real(), result("ghost"), msgwire.assistant("ok")
    assert sent(session_of(ask, ghost, reply), 2) == [ask, ghost, reply]


def test_a_user_message_between_a_call_and_its_result_stays_there() -> None:
    ask, call, interjection, answer = real(), calls("x"), real("also this"), result("x")
    ctx = build(session_of(ask, call, interjection, answer), 2)
    assert ctx.messages == [ask, call, interjection, answer]  # widened to the call; ask pinned
    msgwire.validate(ctx.messages)


def test_trimming_the_opening_drops_the_results_of_the_calls_it_drops() -> None:
    greeting, call, interjection, answer, done = (
        msgwire.assistant("hi"),
        calls("x"),
        real(),
        result("x"),
        msgwire.assistant("ok"),
    )
    ctx = build(session_of(greeting, call, interjection, answer, done), None)
    assert ctx.window_start == 2
    assert ctx.messages == [interjection, done]
    assert ctx.pinned is None
    assert ctx.synthetic is None
    msgwire.validate(ctx.messages)


def test_window_one() -> None:
    ask, reply, follow_up = real("a"), msgwire.assistant("b"), real("c")
    assert sent(session_of(ask, reply, follow_up), 1) == [follow_up]
    assert sent(session_of(ask, reply), 1) == [ask, reply]
    assert sent(session_of(ask), 1) == [ask]


def test_a_window_larger_than_the_history_or_none_sends_it_all() -> None:
    messages: list[Message] = [real(), calls("x"), result("x"), msgwire.assistant("done")]
    session = session_of(*messages)
    assert sent(session, 100) == sent(session, None) == sent(session, 4) == messages
    assert build(session, None).window_start == 0


def test_the_window_counts_only_messages_for_the_model() -> None:
    ask, reply, later = real(), msgwire.assistant("a"), msgwire.assistant("b")
    control = msgwire.system_control("mode_change", old="plan", new="act")
    unknown = UnknownMessage(b'{"type":"hologram","x":1}', "hologram")
    session = session_of(ask, control, reply, unknown, control, later, unknown)
    assert sent(session, 2) == [ask, reply, later]


@pytest.mark.parametrize("window", [0, -1, -20])
def test_a_window_below_one_is_refused(window: int) -> None:
    with pytest.raises(ValueError, match="window must be at least 1"):
        build(session_of(real()), window)


@pytest.mark.parametrize("window", [True, 1.5, "3"])
def test_a_window_that_is_not_an_integer_is_refused(window: Any) -> None:
    with pytest.raises(TypeError, match="window must be an int or None"):
        build(session_of(real()), window)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_a_blank_synthetic_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="synthetic_text"):
        build(session_of(), synthetic_text=text)


def test_a_counter_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TypeError, match="counter"):
        build(session_of(), counter=3)  # type: ignore[arg-type]


# --- pinned and synthetic -------------------------------------------------------------------------


def test_the_pinned_message_is_the_most_recent_real_one() -> None:
    """Broadcast counts as real; a stored synthetic message does not."""
    first, broadcast, nudge = real("first"), real("to everyone", source="broadcast"), stored_synthetic()
    work: list[Message] = [calls("x"), result("x"), msgwire.assistant("done")]
    ctx = build(session_of(first, msgwire.assistant("a"), broadcast, msgwire.assistant("b"), nudge, *work), 3)
    assert ctx.pinned is broadcast
    assert ctx.messages == [broadcast, *work]


def test_an_empty_session_gets_only_the_synthetic_message() -> None:
    ctx = build(Session(), 20, synthetic_text="Start.")
    assert ctx.system_prompt is None
    assert ctx.messages == [ctx.synthetic]
    assert ctx.synthetic is not None
    assert (ctx.synthetic.text, ctx.synthetic.source) == ("Start.", "synthetic")
    assert ctx.window_start == 0
    msgwire.validate(ctx.messages)


def test_control_and_unknown_messages_alone_are_no_history() -> None:
    control = msgwire.system_control("branch_switch", to="b2")
    unknown = UnknownMessage(b'{"type":"hologram"}', "hologram")
    ctx = build(session_of(control, unknown))
    assert ctx.synthetic is not None
    assert ctx.messages == [ctx.synthetic]


def test_the_synthetic_message_goes_first_and_is_new_each_build() -> None:
    session = session_of(msgwire.assistant("I will start."), calls("x"), result("x"))
    first, second = build(session), build(session)
    assert first.synthetic is not None
    assert second.synthetic is not None
    assert first.messages[0] is first.synthetic
    assert first.messages[1:] == session.messages
    assert first.synthetic.id != second.synthetic.id


def test_no_message_is_ever_made_synthetic_elsewhere() -> None:
    """The issue: a synthetic message is added in this one place only (msgwire.context)."""
    pattern = re.compile(r"""source\s*=\s*["']synthetic["']""")
    found = sorted(p.name for p in (ROOT / "python" / "msgwire").glob("*.py") if pattern.search(p.read_text("utf-8")))
    assert found == ["context.py"]


# --- the encouragement counter ----------------------------------------------------------------------


def test_a_harness_loop_counts_nudges_goes_idle_and_resets_when_a_user_speaks() -> None:
    session = session_of()
    counter = EncouragementCounter()
    seen = []
    for turn in range(5):
        ctx = build(session, 20, counter=counter)
        counter = ctx.counter
        seen.append((ctx.counter.count, ctx.idle))
        session.append(msgwire.assistant(f"turn {turn}"))
    assert seen == [(1, False), (2, False), (3, True), (4, True), (5, True)]
    session.append(real("hello?"))
    ctx = build(session, 3, counter=counter)
    assert (ctx.counter.count, ctx.idle, ctx.synthetic) == (0, False, None)
    session.append(*(msgwire.assistant(f"more {i}") for i in range(10)))
    ctx = build(session, 3, counter=ctx.counter)
    assert ctx.pinned is not None  # the real message is old: still real
    assert ctx.counter.count == 0


def test_building_twice_never_counts_twice() -> None:
    counter = EncouragementCounter(count=2)
    session = session_of(msgwire.assistant("x"))
    assert build(session, counter=counter).counter == build(session, counter=counter).counter
    assert counter.count == 2
    with pytest.raises(AttributeError):
        counter.count = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("synthetic", "real_user", "expected"),
    [(False, False, 4), (True, False, 5), (False, True, 0), (True, True, 0)],
)
def test_the_counter_on_its_own(synthetic: bool, real_user: bool, expected: int) -> None:
    assert EncouragementCounter(count=4).after(synthetic=synthetic, real_user=real_user).count == expected


def test_the_counter_is_idle_from_three() -> None:
    assert [EncouragementCounter(count=n).idle for n in range(6)] == [False, False, False, True, True, True]
    assert EncouragementCounter.IDLE_AFTER == 3
    with pytest.raises(ValueError, match="negative"):
        EncouragementCounter(count=-1)


# --- never modified, never persisted ----------------------------------------------------------------


def test_build_never_modifies_the_session() -> None:
    messages: list[Message] = [
        msgwire.assistant("hi"),
        calls("x"),
        result("x"),
        msgwire.system_control("m"),
        msgwire.assistant("ok"),
    ]
    for session in (session_of(*messages), session_of(real(), *messages), session_of()):
        before = copy.deepcopy(session)
        held, ids = session.messages, [id(m) for m in session.messages]
        for window in (1, 2, 3, None):
            ctx = build(session, window)
            ctx.messages.append(real("not in the session"))
            assert session == before
            assert session.messages is held
            assert [id(m) for m in session.messages] == ids
            assert all(m is not ctx.synthetic for m in session.messages)


def test_context_is_reexported_and_frozen() -> None:
    import msgwire.context

    assert msgwire.context is context_module
    assert Context is msgwire.types.Context
    assert EncouragementCounter is msgwire.types.EncouragementCounter
    ctx = build(session_of(real()))
    with pytest.raises(AttributeError):
        ctx.messages = []  # type: ignore[misc]


# --- properties over random valid sessions ------------------------------------------------------------

WINDOWS = st.one_of(st.integers(1, 6), st.integers(1, 45), st.none())
STEPS = ["real", "real", "stored_synthetic", "text", "calls", "calls", "calls", *["result"] * 5, "control", "unknown"]
CALL_IDS = [f"c{i}" for i in range(6)]


@st.composite
def valid_sessions(draw: st.DrawFn) -> Session:
    """Valid sessions with parallel calls, results in any order, calls left without results, ids
    reused once answered, interjections, stored synthetic messages, control and unknown messages."""
    messages: list[Message] = []
    pending: list[str] = []
    for k, step in enumerate(draw(st.lists(st.sampled_from(STEPS), max_size=40))):
        if step == "real":
            messages.append(real(f"u{k}", source=draw(st.sampled_from(["direct", "broadcast"]))))
        elif step == "stored_synthetic":
            messages.append(stored_synthetic())
        elif step == "text":
            messages.append(msgwire.assistant(f"a{k}"))
        elif step == "calls":
            free = [i for i in CALL_IDS if i not in pending]
            if free:
                ids = draw(st.lists(st.sampled_from(free), min_size=1, max_size=3, unique=True))
                pending.extend(ids)
                messages.append(calls(*ids, text=draw(st.sampled_from(["", f"a{k}"]))))
        elif step == "result" and pending:
            messages.append(result(pending.pop(draw(st.integers(0, len(pending) - 1)))))
        elif step == "control":
            messages.append(msgwire.system_control("mode_change", step=k))
        elif step == "unknown":
            messages.append(UnknownMessage(b'{"type":"hologram"}', "hologram"))
    return Session(system_prompt=draw(st.none() | st.just("Be brief.")), messages=messages)


def answered_call(history: list[Message], j: int) -> int | None:
    """Reference: the index of the most recent earlier assistant message calling what history[j]
    answers (a plain backward search, independent of msgwire.context's single pass)."""
    message = history[j]
    if not isinstance(message, ToolResultMessage):
        return None
    for i in range(j - 1, -1, -1):
        earlier = history[i]
        if isinstance(earlier, AssistantMessage) and any(c.id == message.tool_call_id for c in earlier.tool_calls):
            return i
    return None


def reference_start(history: list[Message], window: int | None) -> int:
    """Reference: widen until nothing inside answers a call outside, to a fixpoint."""
    start = 0 if window is None else max(0, len(history) - window)
    while True:
        outside = [i for j in range(start, len(history)) if (i := answered_call(history, j)) is not None and i < start]
        if not outside:
            return start
        start = min(outside)


def is_real(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.source != "synthetic"


@examples(400)
@given(valid_sessions(), WINDOWS, st.integers(0, 6))
def test_random_valid_sessions_keep_every_guarantee(session: Session, window: int | None, prev: int) -> None:
    msgwire.validate(session)
    before = copy.deepcopy(session)
    ctx = build(session, window, counter=EncouragementCounter(count=prev))
    history = session.messages_for_model()
    position = {id(m): i for i, m in enumerate(history)}
    messages = ctx.messages

    # (1) at least one user message, and a user message first
    assert messages
    assert type(messages[0]) is UserMessage
    # (5) a synthetic message only when the history has no real user message at all; every other
    # message comes from the history
    assert (ctx.synthetic is not None) == (not any(map(is_real, history)))
    assert [m for m in messages if id(m) not in position] == ([ctx.synthetic] if ctx.synthetic else [])
    assert any(map(is_real, messages)) == any(map(is_real, history))
    # (3) chronological: history messages keep their order, the pinned one predates the window
    indices = [position[id(m)] for m in messages if id(m) in position]
    assert indices == sorted(set(indices))
    if ctx.pinned is not None:
        assert messages[0] is ctx.pinned
        assert position[id(ctx.pinned)] < ctx.window_start
    # (2) no orphan tool results; every result of a call that is sent is sent, after it
    sent_ids = set(indices)
    for j in range(len(history)):
        call = answered_call(history, j)
        if call is not None and (j in sent_ids or call in sent_ids):
            assert (j in sent_ids, call in sent_ids) == (True, True), (call, j)
    # (4) valid in, valid out
    msgwire.validate(messages)
    # never sent: control and unknown messages; never modified: the session
    assert not any(isinstance(m, SystemControlMessage | UnknownMessage) for m in messages)
    assert session == before
    assert msgwire.dumps(session) == msgwire.dumps(before)

    # the truth table, against a reference window
    start = reference_start(history, window)
    inside = history[start:]
    row = row_for(
        any(map(is_real, inside)),
        bool(inside) and isinstance(inside[0], UserMessage),
        any(map(is_real, history[:start])),
        prev,
    )
    event(f"truth table row {row['row']}")
    event("widened" if window is not None and start < len(history) - window else "not widened")
    assert (ctx.pinned is not None) == (row["pinned"] == "yes")
    assert (ctx.synthetic is not None) == (row["synthetic"] == "yes")
    assert (ctx.window_start != start) == (row["trimmed"] == "yes")
    assert ctx.counter.count == new_count(row["new"], prev)
    assert ctx.idle == (row["idle"] == "yes")
    # the window: everything from window_start on but results of calls before it (row 3 only)
    kept = [
        m
        for j, m in enumerate(history)
        if j >= ctx.window_start and not ((a := answered_call(history, j)) is not None and a < ctx.window_start)
    ]
    assert messages == ([ctx.pinned] if ctx.pinned else []) + ([ctx.synthetic] if ctx.synthetic else []) + kept
    if row["trimmed"] == "no":
        assert ctx.window_start == start
        assert start <= max(0, len(history) - (len(history) if window is None else window))
