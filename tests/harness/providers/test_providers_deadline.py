"""The deadline's watcher (``providers/_deadline.py``): one thread runs each sync call's action
when its deadline passes (ending a read blocked past it), never a cancelled one, outlives an
action that fails, and keeps no more than about twice the live watches however many calls end
early (the fault tests in test_providers_faults.py show it ending real reads)."""

from __future__ import annotations

import threading
import time

import pytest

from msgwire.harness.providers._deadline import Deadline, _watcher

WAIT = 10.0  # seconds a test waits for an event before it counts as a failure


def test_actions_run_when_due_in_deadline_order_and_cancelled_ones_never() -> None:
    ran: list[str] = []
    done = threading.Event()
    Deadline(0.3).watch(lambda: (ran.append("late"), done.set()))
    cancelled = Deadline(0.1).watch(lambda: ran.append("cancelled"))
    early = Deadline(0.05)
    early.watch(lambda: ran.append("early"))
    cancelled.cancel()
    assert done.wait(WAIT)
    assert ran == ["early", "late"]
    assert early.passed()


def test_an_action_that_fails_does_not_stop_the_watcher(caplog: pytest.LogCaptureFixture) -> None:
    after = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    Deadline(0.01).watch(fail)
    Deadline(0.05).watch(after.set)
    assert after.wait(WAIT)
    assert "a deadline's action failed" in caplog.text


def test_watches_cancelled_early_do_not_pile_up() -> None:
    live = [Deadline(600.0).watch(lambda: None) for _ in range(10)]
    for _ in range(10_000):  # calls that ended long before their deadline
        Deadline(600.0).watch(lambda: None).cancel()
    assert len(_watcher._heap) <= 2 * len(live) + 16
    for watch in live:
        watch.cancel()


def test_the_clock_of_a_call() -> None:
    deadline = Deadline(0.05)
    assert 0 < deadline.left() <= 0.05
    deadline.check()
    time.sleep(0.06)  # the clock itself is what is tested: no event to wait on
    assert deadline.passed()
    with pytest.raises(TimeoutError, match=r"deadline=0\.05 s"):
        deadline.check()
