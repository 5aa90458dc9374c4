"""``Swarm``: N autonomous agents on one store, steered by broadcasts and direct messages.

Every model context is built from the store, by one function (``Swarm.context``), following
the seed system's message-format guarantees:

1. the agent's new mail (broadcasts, direct messages) joins its conversation first: only here,
   between two model calls, never between a tool call and its result;
2. ``msgwire.context.build`` over the conversation, with a window of ``window`` (20) messages;
3. a real user message (direct or broadcast) in the window: sent as it is, counter reset to 0;
4. none: the most recent broadcast this agent received, from the database even far outside
   the window, else the most recent broadcast to anyone (an agent added after it inherits the
   mission), opens the context; counter reset to 0;
5. no broadcast at all: one synthetic user message (``synthetic_text``, ``source="synthetic"``,
   never stored) opens it and the agent's encouragement counter goes up by one;
6. the context that makes the counter 3 is still sent; after that model call the agent is
   idle and takes no step until a broadcast or a direct message resets its counter and starts
   it (PostgreSQL: LISTEN/NOTIFY wakes it at once; SQLite: a look every ``poll_interval``
   seconds, 0.2 by default; within one process, at once).

The truth table (``tests/harness/test_swarm.py`` runs it on both stores)::

    | state   | user message in DB | action          | counter    | next state |
    |---------|--------------------|-----------------|------------|------------|
    | running | broadcast          | use it          | 0          | running    |
    | running | direct             | use it          | 0          | running    |
    | running | none               | add synthetic   | +1 (1, 2)  | running    |
    | running | none               | add synthetic   | +1 (now 3) | idle       |
    | idle    | broadcast          | start           | 0          | running    |
    | idle    | direct             | start           | 0          | running    |
    | idle    | none               | -               | -          | idle       |

A direct message is a task, a broadcast the swarm's mission: once a direct message has slid
out of the window it no longer holds the agent (the seed system's rule); a broadcast does.

Tools: the swarm's ``ToolRegistry``; a tool whose policy is ``"ask"`` needs the ``approver``
given to the swarm, and without one its calls are denied (the model gets a denied result).

Each agent runs ``msgwire.harness.agent.Agent``'s loop (``run(None)``: no new input) with
``Swarm.context`` as its ``build_context``: every step is recorded in the agent's trail as any
agent's is. Close the swarm (``close()``, or ``with``) to stop the agents' event loops.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import msgspec

from msgwire import AssistantMessage, TextBlock, UserMessage, context
from msgwire.context import Context, EncouragementCounter

from .agent import Agent
from .conversation import Conversation
from .providers import Provider
from .store import AgentState, Mail, SQLStore
from .tools import Approver, ToolRegistry

__all__ = ["SYNTHETIC_TEXT", "Swarm", "SwarmAgent"]

SYNTHETIC_TEXT = "Continue your mission. Check notifications and coordinate with the swarm."
"""The seed system's encouragement, sent when an agent has no user message to go on."""


class SwarmAgent(msgspec.Struct, kw_only=True):
    """One agent of a swarm: its name, its stored conversation (bound), its loop (made at its
    first step), the last context built for it and how many model calls it made."""

    name: str
    conversation: Conversation
    loop: Agent | None = None
    last_context: Context | None = None
    calls: int = 0


class Swarm:
    """``Swarm(store, provider, tools)``: agents added with ``add(name)``, steered with
    ``broadcast(text)`` and ``send(name, text)``, run with ``step(name)`` / ``run_until_idle()``
    (deterministic, in this thread) or ``start()`` / ``stop()`` (one thread per agent).

    ``model``: the model (else the provider's); ``approver``: decides ``"ask"`` tools (none:
    denied); ``window``: messages of history per context; ``system_prompt``: each new agent's;
    ``max_steps``: model calls per run; ``sender``: the name broadcasts are sent under.
    """

    def __init__(
        self,
        store: SQLStore,
        provider: Provider,
        tools: ToolRegistry | None = None,
        *,
        model: str | None = None,
        approver: Approver | None = None,
        window: int = 20,
        system_prompt: str | None = None,
        synthetic_text: str = SYNTHETIC_TEXT,
        max_steps: int = 8,
        sender: str = "commander",
    ) -> None:
        self.store = store
        self.provider = provider
        self.tools = tools if tools is not None else ToolRegistry()
        self.model = model
        self.approver = approver
        self.window = window
        self.system_prompt = system_prompt
        self.synthetic_text = synthetic_text
        self.max_steps = max_steps
        self.sender = sender
        self.agents: dict[str, SwarmAgent] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    # --- agents and mail ----------------------------------------------------------------------

    def add(self, name: str, *, system_prompt: str | None = None) -> SwarmAgent:
        """An agent of this swarm: its conversation is created (or reopened when the store
        already knows the agent) and it starts idle, waiting for mail."""
        try:
            conversation = self.store.open(self.store.agent(name).conversation_id)
        except KeyError:
            conversation = self.store.create(agent=name, system_prompt=system_prompt or self.system_prompt)
            self.store.register_agent(name, conversation.id)
        agent = self.agents[name] = SwarmAgent(name=name, conversation=conversation)
        return agent

    def broadcast(self, text: str | UserMessage, *, to: Sequence[str] | None = None) -> Mail:
        """To every agent (the mission, inherited by agents added later) or to a group
        (``to``): resets their counters and starts the idle ones."""
        return self.store.broadcast(text, to=to, sender=self.sender)

    def start_agent(self, name: str) -> None:
        """Start an idle agent without a message (it runs on its mission, or on encouragement)."""
        self.store.set_agent(name, state="running")

    def send(self, name: str, text: str | UserMessage) -> Mail:
        """A direct message to one agent: resets its counter and starts it if idle."""
        return self.store.post(text, to=name, sender=self.sender)

    def state(self, name: str) -> AgentState:
        return self.store.agent(name)

    # --- context: the one place a synthetic message is made -----------------------------------

    def context(self, name: str, conversation: Conversation) -> Context:
        """The context of agent ``name``'s next model call, built from the store (see the module
        documentation); stores the new counter."""
        self.store.deliver(name)
        conversation.sync()
        before = self.store.agent(name).encouragement
        session = conversation.session()
        built = context.build(
            session, self.window, synthetic_text=self.synthetic_text, counter=EncouragementCounter(count=before)
        )
        history = session.messages_for_model()
        if any(_is_real_user(m) for m in history[built.window_start :]):
            result = built
        else:
            sent = [m for m in built.messages if m is not built.pinned and m is not built.synthetic]
            mission = self.store.latest_broadcast(name)
            if mission is not None:
                counter = EncouragementCounter()
                result = Context(
                    system_prompt=built.system_prompt,
                    messages=[mission, *sent],
                    pinned=mission,
                    synthetic=None,
                    counter=counter,
                    window_start=built.window_start,
                )
            else:
                nudge = UserMessage(content=[TextBlock(text=self.synthetic_text)], source="synthetic")
                result = Context(
                    system_prompt=built.system_prompt,
                    messages=[nudge, *sent],
                    pinned=None,
                    synthetic=nudge,
                    counter=EncouragementCounter(count=before + 1),
                    window_start=built.window_start,
                )
        if result.counter.count != before:
            self.store.set_agent(name, encouragement=result.counter.count)
        self.agents[name].last_context = result
        return result

    # --- running ------------------------------------------------------------------------------

    def step(self, name: str) -> AssistantMessage | None:
        """One run of agent ``name`` when it is running: model calls (each with a context from
        ``context``) and tools, until the model stops calling tools, ``max_steps`` calls, or
        the agent goes idle; ``None`` (and no call) when it is idle."""
        agent = self.agents[name]
        if self.store.agent(name).state == "idle":
            return None
        loop = self._loop(agent)
        before = loop.steps
        try:
            reply = loop.run(None)
        finally:
            agent.calls += loop.steps - before
        if agent.last_context is not None and agent.last_context.idle:
            self.store.rest(name)
        return reply

    def _loop(self, agent: SwarmAgent) -> Agent:
        if agent.loop is None:
            name = agent.name
            agent.loop = Agent(
                self.provider,
                model=self.model,
                tools=self.tools,
                approver=self.approver,
                conversation=agent.conversation,
                max_steps=self.max_steps,
                build_context=lambda conversation: self.context(name, conversation),
            )
        return agent.loop

    def run_until_idle(self, *, max_runs: int = 100) -> int:
        """Step every running agent in turn until all are idle (or ``max_runs`` runs); the number
        of runs made."""
        runs = 0
        while runs < max_runs:
            running = [a.name for a in self.store.agents() if a.state == "running" and a.name in self.agents]
            if not running:
                break
            for name in running:
                self.step(name)
                runs += 1
        return runs

    def start(self, *, poll_interval: float = 0.2) -> None:
        """Run every agent in a thread of its own until ``stop()``: a running agent steps, an idle
        one waits for mail (woken by a post; ``poll_interval`` bounds each wait)."""
        self._stop.clear()
        for name in self.agents:
            thread = threading.Thread(target=self._serve, args=(name, poll_interval), name=f"swarm-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    def close(self) -> None:
        """Stop the threads (``stop()``) and the agents' loops (the store and the provider are
        yours to close)."""
        self.stop()
        for agent in self.agents.values():
            if agent.loop is not None:
                agent.loop.close()
                agent.loop = None

    def __enter__(self) -> Swarm:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _serve(self, name: str, poll_interval: float) -> None:
        while not self._stop.is_set():
            try:
                seen = self.store.mail_seq()
                if self.store.agent(name).state == "idle":
                    self.store.wait_mail(seen, poll_interval)
                    continue
                self.step(name)
            except Exception as exc:  # kept for the caller; the agent waits for the next mail
                self.errors.append(exc)
                self.store.rest(name)


def _is_real_user(message: Any) -> bool:
    return isinstance(message, UserMessage) and message.source in ("direct", "broadcast")
