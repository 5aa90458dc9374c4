"""One run at a time, from any thread; close() during a run; wrong types say what was expected."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from typing import Any

import pytest

import msgwire
from msgwire.errors import UsageError
from msgwire.harness import Agent, Conversation, ToolRegistry, ToolRunner
from msgwire.testing import ScriptedServer, reply, stream_bytes
from msgwire.types import AssistantMessage, TextBlock
from tests._support.agents import connect


def test_a_second_run_from_another_thread_is_refused_before_it_starts(scripted: ScriptedServer) -> None:
    gate = threading.Event()  # the first reply's body waits for it: the first run goes on meanwhile
    scripted.add(reply("slow answer", gate=gate), reply("second"))
    with connect("openai", scripted) as provider, Agent(provider) as agent:
        first = threading.Thread(target=agent.run, args=("a",))
        first.start()
        while not scripted.requests:
            time.sleep(0.01)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "coroutine was never awaited"
            with pytest.raises(UsageError, match="already running"):
                agent.run("b")
        gate.set()
        first.join()
        assert agent.run("c").text == "second"  # free again once the first run ended


def test_close_during_a_run_cancels_it_and_waits(scripted: ScriptedServer) -> None:
    scripted.add(reply("a long answer", hold_after=5))
    with connect("openai", scripted) as provider:
        agent = Agent(provider)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                agent.run("go")
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        while not scripted.requests or scripted.requests[0].bytes_sent == 0:
            time.sleep(0.01)
        agent.close()
        thread.join(5)
        assert not thread.is_alive()
        assert len(errors) == 1
        assert [e.decision for e in agent.conversation.entries][-1] == "error"  # the partial kept
        with pytest.raises(UsageError, match="closed"):
            agent.run("again")


# --- close() from another thread during a sync run ------------------------------------------------


def _held_reply(text: str) -> Any:
    """A reply whose server sends the first text event, then holds the rest until the client leaves."""
    message = AssistantMessage(content=[TextBlock(text=text)], stop_reason="end_turn", model="scripted-model")
    data = stream_bytes(message, "openai")
    return reply(message, hold_after=data.index(b"\n\n", data.index(text[:5].encode())) + 2)


@pytest.mark.parametrize("call", ["run", "step", "stream"])
def test_close_from_another_thread_stops_a_sync_run_at_once(call: str) -> None:
    # The server would hold the stream for 60 s: before, close() waited for the stream to end.
    with (
        ScriptedServer([_held_reply("Hello there, a long answer.")], hold_timeout=60) as server,
        connect("openai", server) as provider,
    ):
        agent = Agent(provider)
        outcome: list[BaseException | str] = []

        def sync_call() -> None:
            try:
                if call == "stream":
                    for _ in agent.stream("Talk."):
                        pass
                else:
                    getattr(agent, call)("Talk.")
                outcome.append("ended")
            except BaseException as exc:
                outcome.append(exc)

        runner = threading.Thread(target=sync_call, daemon=True)
        runner.start()
        while not server.requests or server.requests[0].bytes_sent == 0:
            time.sleep(0.01)
        time.sleep(0.2)  # the run is now blocked in a read of the held stream
        closer = threading.Thread(target=agent.close, daemon=True)
        started = time.monotonic()
        closer.start()
        closer.join(5)
        took = time.monotonic() - started
        assert not closer.is_alive(), "close() still waits for the held stream"
        assert took < 3, f"close() took {took:.2f} s"  # generous: under a second when idle
        runner.join(1)
        assert not runner.is_alive()
        assert len(outcome) == 1
        assert isinstance(outcome[0], asyncio.CancelledError), outcome
        (received,) = server.wait(1, timeout=5)
        assert received.client_closed  # the server saw the client leave
        assert not received.completed
        entry = agent.conversation.entries[-1]
        assert (entry.decision, entry.audit["kind"], entry.audit["error"]) == (
            "error",
            "cancelled",
            "the run was interrupted (CancelledError)",
        )  # the entry an async cancel or Ctrl-C leaves
        assert (entry.message.text, entry.message.stop_reason) == ("Hello there, a long answer.", "aborted")
        assert agent.conversation.verify()
        with pytest.raises(UsageError, match="closed"):
            agent.run("again")  # closed is closed: a new agent carries on
        server.add(reply("Short."))
        with Agent(provider, conversation=agent.conversation) as again:
            assert again.run("Briefly?").text == "Short."  # the provider and its client still work
        assert server.requests[-1].json()["messages"][-1]["content"] == "Briefly?"


def test_wrong_types_are_type_errors_that_say_what_was_expected() -> None:
    conversation = Conversation()
    with pytest.raises(TypeError, match="msgwire messages"):
        conversation.add("just a string")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="msgwire messages"):
        conversation.add({"role": "user", "content": "hi"})  # type: ignore[arg-type]
    runner = ToolRunner(ToolRegistry())
    with pytest.raises(TypeError, match="AssistantMessage"):
        runner.run_sync("hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AssistantMessage"):
        runner.run_sync(msgwire.user("hi"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="provider"):
        Agent("openai")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"max_steps": "5"}, "max_steps is an int, got str"),
        ({"max_steps": 2.0}, "max_steps is an int, got float"),
        ({"retries": "1"}, "retries is an int, got str"),
    ],
)
def test_a_count_that_is_no_int_is_a_type_error_naming_it(
    scripted: ScriptedServer, options: dict[str, Any], words: str
) -> None:
    with connect("openai", scripted) as provider, pytest.raises(TypeError, match=words):
        Agent(provider, **options)
