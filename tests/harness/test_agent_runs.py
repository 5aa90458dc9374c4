"""One run at a time, from any thread; close() during a run; wrong types say what was expected."""

from __future__ import annotations

import threading
import time
import warnings

import pytest

import msgwire
from msgwire.errors import UsageError
from msgwire.harness import Agent, Conversation, ToolRegistry, ToolRunner
from msgwire.testing import ScriptedServer, reply
from tests._support.agents import connect


def test_a_second_run_from_another_thread_is_refused_before_it_starts(scripted: ScriptedServer) -> None:
    scripted.add(reply("slow answer", delay=0.3, chunk_size=4), reply("second"))
    with connect("openai", scripted) as provider, Agent(provider) as agent:
        first = threading.Thread(target=agent.run, args=("a",))
        first.start()
        while not scripted.requests:
            time.sleep(0.01)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "coroutine was never awaited"
            with pytest.raises(UsageError, match="already running"):
                agent.run("b")
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
