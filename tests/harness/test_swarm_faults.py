"""The swarm at its edges on PostgreSQL, with a server of this module's own (``own_pgserver``)
and the scripted model server: every idle agent wakes at once on a post (from this process or
another, before and after a restart of the server), and a running swarm goes through restarts
and an outage longer than ``connect_timeout`` with nothing lost, nothing doubled and every
agent back to work. Sizes: ``tests._support.scale`` (`make test-deep` runs more agents and
restarts).

The wake test gives the poll 30 s, so only the notification can wake an agent in time; the
latency itself (milliseconds) is measured by ``benches/wake.py``.
"""

from __future__ import annotations

import collections
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from msgwire.errors import StoreError, StoreUnavailableError
from msgwire.harness.providers import OpenAI
from msgwire.harness.store import SQLStore, open_store
from msgwire.harness.swarm import Swarm
from msgwire.testing import Received, Reply, ScriptedServer, reply
from tests._support.postgres import PostgresServer
from tests._support.scale import scaled
from tests._support.stores import posts_worker

WAKE = 10.0  # seconds within which an agent must be woken: a third of its poll of 30 s


class _Calls:
    """The model server's side: each agent's requests (its name is its system prompt) and when
    the request carrying each text arrived."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.by_agent: dict[str, int] = {}
        self.texts: dict[str, float] = {}

    def respond(self, received: Received) -> Reply:
        messages = received.json()["messages"]
        with self.cond:
            agent = messages[0]["content"] if messages[0]["role"] == "system" else "?"
            self.by_agent[agent] = self.by_agent.get(agent, 0) + 1
            for m in messages:
                if m["role"] == "user" and isinstance(m["content"], str):
                    self.texts.setdefault(m["content"], time.monotonic())
            self.cond.notify_all()
        return reply("ok")

    def wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(condition, timeout)

    def count(self, agent: str) -> int:
        with self.cond:
            return self.by_agent.get(agent, 0)


@pytest.fixture
def calls() -> Iterator[tuple[_Calls, ScriptedServer]]:
    record = _Calls()
    with ScriptedServer(respond=record.respond) as server:
        yield record, server
    assert server.errors == []


def _swarm(store: SQLStore, server: ScriptedServer, names: list[str], **options: Any) -> tuple[Swarm, OpenAI]:
    provider = OpenAI(base_url=server.url, api_key="test", model="scripted")
    swarm = Swarm(store, provider, **options)
    for name in names:
        swarm.add(name, system_prompt=name)
    return swarm, provider


def _gone(errors: list[BaseException]) -> list[BaseException]:
    """The failures saying the server is not there (its socket gone): the outage itself."""
    return [e for e in errors if isinstance(e, StoreUnavailableError) and "No such file or directory" in str(e)]


def _until(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_every_idle_agent_wakes_at_once_from_here_from_another_process_and_after_a_restart(
    own_pgserver: PostgresServer, calls: tuple[_Calls, ScriptedServer]
) -> None:
    """N idle agents (``scaled``: 3, deep 8), a poll of 30 s; a direct message to each in turn,
    posted here, then from another process. Then the server restarts and the mail is posted
    while the store's listener is away: the store's role may not log in again until every
    message is committed, so no notification can reach it; once let in, the listener reads
    what came and every agent answers. Before: the one LISTEN connection was read by one
    waiting agent at a time and one NOTIFY woke one of them, so the second and third agents
    woke a poll or two late."""
    record, server = calls
    url, role = own_pgserver.role_url()
    names = [f"agent-{i}" for i in range(scaled(3, 8))]
    spawn = multiprocessing.get_context("spawn")

    def post_elsewhere(url: str, mail: list[tuple[str, str]]) -> None:
        poster = spawn.Process(target=posts_worker, args=(url, mail))
        poster.start()
        poster.join(60)
        assert poster.exitcode == 0

    with open_store(url) as store:
        swarm, provider = _swarm(store, server, names, window=1)  # one call on a message, then idle again
        with provider, swarm:
            swarm.start(poll_interval=30.0)
            for where in ("here", "another process"):
                for name in names:
                    text = f"wake up, {name} ({where})"
                    if where == "here":
                        swarm.send(name, text)
                    else:
                        post_elsewhere(url, [(name, text)])
                    posted = time.monotonic()
                    assert record.wait(lambda t=text: t in record.texts, WAKE), f"{name} slept ({where})"
                    assert record.texts[text] - posted < WAKE
            _until(lambda: all(a.state == "idle" for a in store.agents()))
            away = {name: f"wake up, {name} (posted while the listener was away)" for name in names}
            with own_pgserver.locked_out(role):
                own_pgserver.restart()  # every session ends; the agents sleep through it
                post_elsewhere(own_pgserver.url(options=f"-c search_path={role}"), list(away.items()))
                assert own_pgserver.sessions(role) == 0  # the store's listener was away for the whole post
            let_in = time.monotonic()
            assert record.wait(lambda: all(t in record.texts for t in away.values()), WAKE), "an agent slept"
            assert max(record.texts[t] for t in away.values()) - let_in < WAKE
            swarm.stop()
            assert swarm.errors == []


def test_a_running_swarm_goes_through_restarts_and_an_outage_and_keeps_everything(
    own_pgserver: PostgresServer, calls: tuple[_Calls, ScriptedServer]
) -> None:
    """Agents on a mission (``scaled``: 3 agents and 2 restarts, deep 8 and 5) run while the
    server restarts (a call waits for it: nobody sees these) and then stays down longer than
    ``connect_timeout`` (each agent keeps the failure once in ``errors``, stays running, and
    resumes when the server is back). Then a direct message to each: all of them answer it.
    What is kept: each trail verifies with gap-free seq and no message twice, the mission and
    each direct message delivered exactly once, and every agent made calls after each fault."""
    record, server = calls
    names = [f"agent-{i}" for i in range(scaled(3, 8))]
    with open_store(own_pgserver.schema_url(), connect_timeout=1) as store:
        swarm, provider = _swarm(store, server, names, window=4)
        with provider, swarm:
            swarm.broadcast("Survey the belt.")  # a mission: every agent runs until stopped
            swarm.start(poll_interval=0.2)

            def back_to_work() -> None:
                before = {n: record.count(n) for n in names}
                assert record.wait(lambda: all(record.count(n) >= before[n] + 3 for n in names), 120)

            back_to_work()
            for _ in range(scaled(2, 5)):
                own_pgserver.restart()
                back_to_work()
            earlier = len(swarm.errors)  # a restart slower than connect_timeout (a loaded machine) is seen too
            own_pgserver.stop()
            try:
                _until(lambda: len(_gone(swarm.errors[earlier:])) >= len(names))  # every agent found the store gone
                time.sleep(3)  # two more tries each (a try takes connect_timeout, then poll_interval)
                kept = swarm.errors[earlier:]
                serving = {t.name for t in threading.enumerate() if t.name.startswith("swarm-")}
            finally:
                own_pgserver.start()
            assert {a.name: a.state for a in store.agents()} == dict.fromkeys(names, "running")  # as stored through it
            assert serving == {f"swarm-{name}" for name in names}  # every agent's thread went on trying
            assert len(_gone(kept)) == len(names)  # the outage once per agent, not once per try
            texts = collections.Counter(f"{type(e).__name__}: {e}" for e in kept)
            assert max(texts.values()) <= len(names), texts  # any other failure (a lost commit) once per agent too
            back_to_work()
            for name in names:
                swarm.send(name, f"task for {name}")
            assert record.wait(lambda: all(f"task for {n}" in record.texts for n in names), 120)
            swarm.stop()
        assert all(isinstance(e, StoreError) for e in swarm.errors), swarm.errors
        for name in names:
            conversation_id = store.agent(name).conversation_id
            trail = store.load(conversation_id)
            assert trail.verify(head=store.info(conversation_id).head)
            assert [e.seq for e in trail.entries] == list(range(len(trail.entries)))
            ids = [e.message.id for e in trail.entries]  # type: ignore[union-attr]
            assert len(ids) == len(set(ids)), f"{name}: a message twice"
            mail = [m for m in store.messages(conversation_id) if m.type == "user"]
            assert [(m.source, m.text) for m in mail] == [  # type: ignore[union-attr]
                ("broadcast", "Survey the belt."),
                ("direct", f"task for {name}"),
            ]
            assert store.mail(name) == []
