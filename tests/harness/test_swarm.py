"""The swarm on both stores with the scripted model server: the seed system's truth table
(running / idle x broadcast / direct / none), the mission kept from the database outside the
window, the global fallback for late agents, wake-ups, and tools that ask for approval."""

from __future__ import annotations

import contextlib
import datetime as dt
import multiprocessing
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import msgwire
from msgwire.errors import HeaderMismatchError
from msgwire.harness import Approve
from msgwire.harness.providers import OpenAI
from msgwire.harness.store import SQLStore, SwarmStore, open_store
from msgwire.harness.swarm import SYNTHETIC_TEXT, Swarm
from msgwire.harness.tools import ToolRegistry
from msgwire.testing import Received, Reply, ScriptedServer, reply, tool_call
from tests._support.stores import key, raw_sql, swarm_step_worker


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as s:
        yield s


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(respond=lambda received: reply("on it")) as s:
        yield s


_providers: list[OpenAI] = []
_swarms: list[Swarm] = []


@pytest.fixture(autouse=True)
def _close_providers() -> Iterator[None]:
    yield
    while _swarms:
        _swarms.pop().close()
    while _providers:
        _providers.pop().close()


def _swarm(store: SwarmStore, server: ScriptedServer, **options: Any) -> Swarm:
    provider = OpenAI(base_url=server.url, api_key="test", model="scripted")
    _providers.append(provider)
    swarm = Swarm(store, provider, **options)
    _swarms.append(swarm)
    return swarm


def _opening(received: Received) -> str:
    """The text of the first user message a request sent."""
    first = next(m for m in received.json()["messages"] if m["role"] == "user")
    content = first["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def _latest_user(received: Received) -> str:
    """The text of the last user message a request sent."""
    last = [m for m in received.json()["messages"] if m["role"] == "user"][-1]
    content = last["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def _row(swarm: Swarm, name: str) -> tuple[str, int]:
    state = swarm.state(name)
    return state.state, state.encouragement


def test_truth_table_running_none_goes_idle_at_the_third_synthetic(store: SQLStore, server: ScriptedServer) -> None:
    swarm = _swarm(store, server)
    swarm.add("scout")
    assert _row(swarm, "scout") == ("idle", 0)  # created idle
    assert swarm.step("scout") is None  # idle x none: nothing happens
    assert server.requests == []
    swarm.start_agent("scout")  # started without any message in the database
    rows = []
    for _ in range(3):
        swarm.step("scout")
        rows.append(_row(swarm, "scout"))
    assert rows == [("running", 1), ("running", 2), ("idle", 3)]  # running x none, three times
    assert [_opening(r) for r in server.requests] == [SYNTHETIC_TEXT] * 3  # the third one is sent too
    assert swarm.step("scout") is None  # idle x none
    assert len(server.requests) == 3
    stored = store.messages(swarm.agents["scout"].conversation.id)
    assert [m.type for m in stored] == ["assistant"] * 3  # the synthetic message is never stored


def test_truth_table_idle_and_direct_then_running_and_direct(store: SQLStore, server: ScriptedServer) -> None:
    swarm = _swarm(store, server, window=4)
    swarm.add("miner")
    swarm.send("miner", "Mine iron ore")  # idle x direct: started, counter 0
    assert _row(swarm, "miner") == ("running", 0)
    swarm.step("miner")  # running x direct: the real message is used
    assert _opening(server.requests[0]) == "Mine iron ore"
    assert _row(swarm, "miner") == ("running", 0)
    for _ in range(3):  # still in the window of 4 (with the three replies)
        swarm.step("miner")
    assert [_opening(r) for r in server.requests] == ["Mine iron ore"] * 4
    assert _row(swarm, "miner") == ("running", 0)
    for _ in range(3):  # the direct message slid out of the window: a task, not a mission
        swarm.step("miner")
    assert [_opening(r) for r in server.requests[4:]] == [SYNTHETIC_TEXT] * 3
    assert _row(swarm, "miner") == ("idle", 3)
    swarm.send("miner", "Now haul it")  # idle x direct
    assert _row(swarm, "miner") == ("running", 0)
    swarm.step("miner")
    assert _latest_user(server.requests[7]) == "Now haul it"


def test_truth_table_broadcasts_start_and_keep_agents_running(store: SQLStore, server: ScriptedServer) -> None:
    swarm = _swarm(store, server, window=4)
    swarm.add("a")
    swarm.add("b")
    swarm.start_agent("b")
    swarm.step("b")
    swarm.step("b")
    assert _row(swarm, "b") == ("running", 2)
    swarm.broadcast("Explore the universe!")  # idle x broadcast (a), running x broadcast (b)
    assert _row(swarm, "a") == ("running", 0)
    assert _row(swarm, "b") == ("running", 0)
    for _ in range(8):  # far past the window of 4: the mission comes from the database
        swarm.step("a")
        assert _row(swarm, "a") == ("running", 0)
    a_requests = server.requests[2:]
    assert [_opening(r) for r in a_requests] == ["Explore the universe!"] * 8
    last = a_requests[-1].json()["messages"]
    assert len(last) == 1 + 4  # the mission, then the window of 4 (no system prompt)
    conversation = swarm.agents["a"].conversation
    assert conversation.messages()[0].source == "broadcast"  # type: ignore[union-attr]  # stored once, delivered
    assert len(store.messages(conversation.id)) == 9


def test_a_late_agent_inherits_the_mission_and_group_broadcasts_stay_in_the_group(
    store: SQLStore, server: ScriptedServer
) -> None:
    swarm = _swarm(store, server)
    swarm.add("first")
    swarm.broadcast("Survey the belt")
    swarm.add("late")  # added after the broadcast: it never received it
    swarm.start_agent("late")
    swarm.step("late")
    assert _opening(server.requests[0]) == "Survey the belt"  # the most recent broadcast to anyone
    assert _row(swarm, "late") == ("running", 0)
    swarm.broadcast("Miners only: dig", to=["first"])
    swarm.step("first")
    assert _latest_user(server.requests[1]) == "Miners only: dig"
    swarm.step("late")
    assert _opening(server.requests[2]) == "Survey the belt"  # not a member of that group


def test_ask_tools_are_denied_without_an_approver_and_run_with_one(store: SQLStore) -> None:
    tools = ToolRegistry()
    ran: list[str] = []

    @tools.tool(policy="ask")
    def deploy(target: str) -> str:
        """Deploy somewhere."""
        ran.append(target)
        return f"deployed to {target}"

    def respond(received: Received) -> Reply:
        last = received.json()["messages"][-1]
        if last["role"] == "tool":
            return reply("done")
        return reply([tool_call("deploy", {"target": "prod"})])

    with ScriptedServer(respond=respond) as server:
        swarm = _swarm(store, server, tools=tools)
        swarm.add("ops")
        swarm.send("ops", "Deploy it")
        swarm.step("ops")
        results = [m for m in swarm.agents["ops"].conversation.messages() if m.type == "tool_result"]
        assert [r.status for r in results] == ["denied"]  # type: ignore[union-attr]
        assert ran == []

        approving = _swarm(
            store, server, tools=tools, approver=lambda requests: {r.call.id: Approve() for r in requests}
        )
        approving.add("ops")
        approving.send("ops", "Deploy it again")
        approving.step("ops")
        results = [m for m in approving.agents["ops"].conversation.messages() if m.type == "tool_result"]
        assert [r.status for r in results] == ["denied", "success"]  # type: ignore[union-attr]
        assert ran == ["prod"]


def test_agents_in_threads_wake_on_a_post(store: SQLStore, server: ScriptedServer) -> None:
    swarm = _swarm(store, server, window=2)
    swarm.add("x")
    swarm.start(poll_interval=30.0)  # long: the post itself must wake the agent, not the poll
    try:
        swarm.send("x", "wake up")
        server.wait(5, timeout=60)  # two calls on the message, then three encouragements
    finally:
        swarm.stop()
    assert swarm.errors == []
    assert _row(swarm, "x") == ("idle", 3)
    assert [_opening(r) for r in server.requests] == ["wake up"] * 2 + [SYNTHETIC_TEXT] * 3


def test_stop_ends_the_waits_of_idle_agents_at_once(store: SQLStore, server: ScriptedServer) -> None:
    """Idle agents waiting a poll of ten minutes: ``stop()`` wakes them (``wake_waiters``)
    instead of joining threads that sleep it out."""
    waiting = threading.Semaphore(0)

    class Spied:  # the store, telling when an agent starts to wait
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def wait_mail(self, after: int, timeout: float) -> int:
            waiting.release()
            return store.wait_mail(after, timeout)

    swarm = _swarm(Spied(), server)  # type: ignore[arg-type]
    for name in ("a", "b", "c"):
        swarm.add(name)
    swarm.start(poll_interval=600.0)
    for _ in range(3):
        assert waiting.acquire(timeout=60)
    started = time.monotonic()
    swarm.stop()
    assert time.monotonic() - started < 60
    assert swarm.errors == []


def test_context_messages_are_not_real_users_and_do_not_reset_the_counter(
    store: SQLStore, server: ScriptedServer
) -> None:
    """An MCP resource or an attached file enters a conversation as a user message of source
    ``context``: the model sees it, but nobody asked anything, so it neither holds the agent
    nor resets its counter (real users are direct or broadcast: msgwire.types.REAL_SOURCES)."""
    swarm = _swarm(store, server)
    agent = swarm.add("reader")
    agent.conversation.add(msgwire.user("README of the project: ...", source="context"))
    swarm.start_agent("reader")
    rows = []
    for _ in range(3):
        swarm.step("reader")
        rows.append(_row(swarm, "reader"))
    assert rows == [("running", 1), ("running", 2), ("idle", 3)]
    assert [_opening(r) for r in server.requests] == [SYNTHETIC_TEXT] * 3
    assert all("README of the project" in r.body.decode() for r in server.requests)  # still sent


def test_unknown_agents_raise_the_same_key_error(store: SQLStore, server: ScriptedServer) -> None:
    swarm = _swarm(store, server)
    swarm.add("known")
    calls = [
        lambda: swarm.start_agent("ghost"),
        lambda: swarm.send("ghost", "hi"),
        lambda: swarm.broadcast("hi", to=["ghost"]),
        lambda: swarm.state("ghost"),
        lambda: swarm.step("ghost"),
    ]
    for call in calls:
        with pytest.raises(KeyError, match="no agent 'ghost' in") as raised:
            call()
        assert store.url in str(raised.value)  # the agent and the store it is not in
    with pytest.raises(TypeError, match="text or a UserMessage"):
        swarm.broadcast(123)  # type: ignore[arg-type]


# --- the bound on model calls: stale, expired, cleared and inherited mail -------------------------


def _calls_until_idle(swarm: Swarm, server: ScriptedServer, name: str, *, limit: int = 30) -> int:
    """Step agent ``name`` until it is idle (or ``limit`` steps); the model calls made."""
    before = len(server.requests)
    for _ in range(limit):
        if swarm.state(name).state == "idle":
            break
        swarm.step(name)
    return len(server.requests) - before


def test_a_new_agent_on_a_store_whose_conversations_were_deleted_idles_after_the_encouragement_rule(
    store: SQLStore, server: ScriptedServer
) -> None:
    """Finding 5 of newcomer-turn4, in threads as it was found, the model calls counted at the
    model server: yesterday's swarm broadcast a mission, then every conversation was deleted;
    today's new agent, woken by one direct message, makes 2 calls with it in its window of 2
    and 3 encouraged ones, then idles. Before: the deleted swarm's broadcast stayed in the mail
    table as the latest broadcast to everyone; the new agent inherited it as its mission,
    pinned at every step with the counter reset (never delivered, never seen in its trail),
    and called the model without end (878 calls in 5 s)."""
    old = _swarm(store, server, window=2)
    old.add("scout")
    old.broadcast("Mission: survey the belt.")
    old.run_until_idle(max_runs=3)
    old.close()
    for info in store.conversations():
        store.delete(info.id)
    calls_before = len(server.requests)

    swarm = _swarm(store, server, window=2)
    swarm.add("solo")
    swarm.start(poll_interval=0.2)
    try:
        swarm.send("solo", "One small task.")
        deadline = time.monotonic() + 60
        while swarm.state("solo").state != "idle" and len(server.requests) - calls_before <= 50:
            assert time.monotonic() < deadline, "still running after 60 s"
            time.sleep(0.02)
        time.sleep(0.5)  # and no call after it idled
    finally:
        swarm.stop()
    assert swarm.errors == []
    sent = server.requests[calls_before:]
    assert [_opening(r) for r in sent] == ["One small task."] * 2 + [SYNTHETIC_TEXT] * 3
    assert _row(swarm, "solo") == ("idle", 3)


@pytest.mark.parametrize("ending", ["expires", "clear_mail", "clear_mail older_than"])
def test_a_mission_that_ended_bounds_the_calls_by_the_encouragement_rule(
    store: SQLStore, server: ScriptedServer, ending: str
) -> None:
    """A mission keeps an agent running (the seed's rule) only while it lives: expired, or
    cleared, the agent makes 3 encouraged calls once the delivered broadcast has left its
    window, then idles (counted at the model server)."""
    swarm = _swarm(store, server, window=2)
    swarm.add("a")
    mission = swarm.broadcast("Survey the belt.", expires=3600 if ending == "expires" else None)
    for _ in range(4):  # the mission out of the window of 2 after two: pinned from the database
        swarm.step("a")
    assert _row(swarm, "a") == ("running", 0)
    assert [_opening(r) for r in server.requests] == ["Survey the belt."] * 4
    if ending == "expires":
        at = msgwire.types.now() - dt.timedelta(seconds=1)
        raw_sql(store, "UPDATE msgwire_mail SET expires_at = ?", (at.isoformat() if _sqlite(store) else at,))
    elif ending == "clear_mail":
        assert swarm.clear_mail() == 1
    else:
        at = msgwire.types.now() - dt.timedelta(hours=2)
        raw_sql(store, "UPDATE msgwire_mail SET created_at = ?", (at.isoformat() if _sqlite(store) else at,))
        assert swarm.clear_mail(older_than=dt.timedelta(hours=1)) == 1
    assert mission.seq > 0
    assert _calls_until_idle(swarm, server, "a") == 3
    assert [_opening(r) for r in server.requests[4:]] == [SYNTHETIC_TEXT] * 3
    assert _row(swarm, "a") == ("idle", 3)


def test_an_agent_added_again_under_a_deleted_ones_name_inherits_none_of_its_mail(
    store: SQLStore, server: ScriptedServer
) -> None:
    """Deleting an agent's conversation deletes the mail addressed to it: a new agent of the
    same name, started without a message, is encouraged 3 times and idles. Before: the old
    agent's group broadcast was still "addressed to it" and became its mission at every step."""
    swarm = _swarm(store, server)
    swarm.add("miner")
    swarm.add("scout")
    swarm.broadcast("Miners only: dig.", to=["miner"])
    swarm.send("miner", "Mine iron.")
    store.delete(swarm.agents["miner"].conversation.id)
    swarm.agents.pop("miner")

    swarm.add("miner")  # a new conversation, a new registration
    swarm.start_agent("miner")
    assert _calls_until_idle(swarm, server, "miner") == 3
    assert [_opening(r) for r in server.requests] == [SYNTHETIC_TEXT] * 3
    assert _row(swarm, "miner") == ("idle", 3)


def _sqlite(store: SQLStore) -> bool:
    return store.url.startswith("sqlite")


def test_an_agent_whose_stored_header_was_rewritten_is_refused(store: SQLStore, server: ScriptedServer) -> None:
    """What resumes is what was audited: a swarm on the same store reopens the agent's
    conversation and refuses it when its system prompt column was rewritten by SQL (no model
    call is made), unless the column is accepted by name."""
    swarm = _swarm(store, server, system_prompt="Explore the repository.")
    scout = swarm.add("scout")
    swarm.send("scout", "look around")
    swarm.step("scout")
    calls = len(server.requests)
    raw_sql(
        store,
        "UPDATE msgwire_conversations SET system_prompt = ? WHERE id = ?",
        ("Delete the repository.", key(store, scout.conversation.id)),
    )
    later = _swarm(store, server)
    with pytest.raises(HeaderMismatchError, match=r"system_prompt: stored 'Delete the repository\.'"):
        later.add("scout")
    assert "scout" not in later.agents
    assert len(server.requests) == calls
    accepted = later.add("scout", accept_header=["system_prompt"])
    assert accepted.conversation.system_prompt == "Delete the repository."
    assert accepted.conversation.verify().problem == "header"


# --- what a step commits (issue 30) -----------------------------------------------------------------


class _Transactions:
    """A spy on a store's transactions (each still run by the database): those committed that
    could write (``writes``) and those that read only (``reads``)."""

    def __init__(self, store: SQLStore) -> None:
        self.reads = 0
        self.writes = 0
        real = store._transaction

        @contextlib.contextmanager
        def counted(**options: Any) -> Iterator[Any]:
            with real(**options) as cur:
                yield cur
            if options.get("read_only"):
                self.reads += 1
            else:
                self.writes += 1

        store._transaction = counted  # type: ignore[method-assign]


def test_a_model_call_commits_its_mail_its_message_and_its_counter_in_one_transaction(
    store: SQLStore, server: ScriptedServer
) -> None:
    """Issue 30: an agent's every step committed its delivery, its message and its counter apart,
    and read its state, mail and mission in five more transactions: about 8 per model call. Now
    a step is one read of its view and one transaction for all the rest, which reads the next
    step's view too; the truth table is the same (2 calls on the message in a window of 2, 3
    encouraged, idle)."""
    swarm = _swarm(store, server, window=2)
    agent = swarm.add("a")
    swarm.send("a", "Mine iron")
    spy = _Transactions(store)
    for _ in range(5):
        swarm.step("a")
    assert swarm.step("a") is None  # idle: read, nothing written
    assert (spy.writes, spy.reads) == (5, 6)
    assert [_opening(r) for r in server.requests] == ["Mine iron"] * 2 + [SYNTHETIC_TEXT] * 3
    assert _row(swarm, "a") == ("idle", 3)
    trail = store.load(agent.conversation.id)
    assert [e.decision for e in trail.entries] == ["user_input"] + ["planning"] * 5
    assert trail.verify()
    assert [e.hash for e in trail.entries] == [e.hash for e in agent.conversation.entries]
    assert store.mail("a") == []


def test_a_running_agents_thread_commits_once_per_model_call(store: SQLStore, server: ScriptedServer) -> None:
    """In its thread (``start()``), a running agent takes each step's view from its last commit:
    the post, then one write per model call and no other (before: its delivery, each counter
    change and its five reads a call, each a transaction that could write)."""
    swarm = _swarm(store, server, window=2)
    swarm.add("x")
    swarm.start(poll_interval=30.0)
    try:
        spy = _Transactions(store)
        swarm.send("x", "wake up")
        server.wait(5, timeout=60)
        deadline = time.monotonic() + 60
        while store.agent("x").state != "idle":
            assert time.monotonic() < deadline, "not idle within 60 s"
            time.sleep(0.02)
        writes = spy.writes
    finally:
        swarm.stop()
    assert swarm.errors == []
    assert writes == 1 + 5  # the post; each of the 5 model calls
    assert [_opening(r) for r in server.requests] == ["wake up"] * 2 + [SYNTHETIC_TEXT] * 3


def test_a_crash_during_the_model_call_loses_no_mail_and_takes_it_once(store_url: str, tmp_path: Any) -> None:
    """When a step's mail becomes part of its trail (issue 30): with the step's first append,
    after its model call, no longer before it. An agent killed (SIGKILL) while its model call is
    under way leaves its mail as it was: posted (what was acknowledged), not taken, not in its
    trail; its next step takes it, once, and the trail verifies."""
    arrived, gate = threading.Event(), threading.Event()

    def respond(received: Received) -> Reply:
        arrived.set()
        gate.wait(300)  # the first call never gets its answer: its process is killed first
        return reply("on it")

    with ScriptedServer(respond=respond) as server, open_store(store_url) as store:
        swarm = _swarm(store, server)
        agent = swarm.add("a")
        mail = swarm.send("a", "Survey the belt")
        context = multiprocessing.get_context("spawn")
        child = context.Process(target=swarm_step_worker, args=(store_url, server.url, "a"))
        child.start()
        try:
            assert arrived.wait(300), "the agent's process never called the model"  # its step is in its call
        finally:
            child.kill()
            child.join(30)
        assert [m.seq for m in store.mail("a")] == [mail.seq]  # still waiting
        assert store.messages(agent.conversation.id) == []
        gate.set()
        swarm.step("a")
        assert [_opening(r) for r in server.requests] == ["Survey the belt"] * 2
        trail = store.load(agent.conversation.id)
        assert [(e.decision, e.message.type) for e in trail.entries] == [
            ("user_input", "user"),
            ("planning", "assistant"),
        ]
        assert trail.entries[0].message.id == mail.message.id
        assert trail.verify()
        assert store.mail("a") == []
