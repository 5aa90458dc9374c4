"""``Swarm``: N autonomous agents on one store, steered by broadcasts and direct messages.

Each agent runs ``msgwire.harness.agent.Agent``'s loop with three hooks of the swarm's, which
follow the seed system's message-format guarantees:

1. *before each step* (``before_step``): the agent's view (``store.view``: its new mail,
   broadcasts and direct messages, its stored counter and mission) is read; its new mail joins
   its conversation with the step's first append (below): only at a step's start, between two
   model calls, never between a tool call and its result;
2. *the context* (the pipeline's ``build``, which only builds): ``msgwire.context.build`` over the
   conversation and its new mail, with a window of ``window`` (20) messages, the stored counter
   and the mission as its ``pin``:
3. a real user message (direct or broadcast: ``msgwire.types.REAL_SOURCES``) in the window: sent
   as it is, counter reset to 0;
4. none: the mission, the most recent live broadcast this agent received (from the database,
   even far outside the window), else the most recent live broadcast to anyone (an agent added
   after it inherits the mission), opens the context; counter reset to 0. *Live*: not expired
   (``broadcast(..., expires=...)``), not cleared (``clear_mail``), not deleted with its swarm
   (deleting an agent's conversation deletes the mail addressed to it, and with the last agent
   every mail: ``store.delete``);
5. no broadcast at all: one synthetic user message (``synthetic_text``, ``source="synthetic"``,
   never stored) opens it and the agent's encouragement counter goes up by one;
6. *the step's first append* (its model message, or the error entry of a failed call): one
   transaction (``store.commit_step``) stores it with the new mail before it (the mail's entries
   and the agent's mark: each mail taken exactly once), the counter, and after the context that
   made it 3 (still sent) the agent idle, unless mail came during the step (a post resets the
   counter and starts the agent: that wins); and reads the next step's view. An idle agent
   takes no step until a broadcast or a direct message starts it (PostgreSQL: LISTEN/NOTIFY wakes
   it at once; SQLite: a look every ``poll_interval`` seconds, 0.2 by default; within one
   process, at once).

Commits: a model call costs one transaction (with nothing to take, decide or read apart: a
step that changes nothing else commits nothing else), where it cost about eight (the delivery,
the counter, the model message, and five reads, each a transaction of its own). What a crash
loses is unchanged: a mail is durable from its post, and stays untaken (delivered again at the
agent's next step) until the transaction that records the model call it was shown commits;
a model call whose message was not stored was never acknowledged, as before.

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

The bound on model calls: an agent calls the model without end only while a live broadcast
is its mission (the seed's rule: a mission keeps its agents running; ``expires`` ends one on
time). Otherwise, once the last real user message it took has left its window (at most
``window`` calls later: each call adds a message), it makes 3 encouraged calls and idles, in
every case: mail that expired, was cleared or was deleted is not delivered, is no mission, and
does not keep the agent running (``store.record_step`` holds an agent only for mail that
``deliver`` would take). A new agent on a store whose conversations were all deleted thus makes
its calls on its own mail and idles (before, the deleted swarm's broadcast stayed in the mail
table, became its inherited mission, and was pinned with the counter reset at every step).

Tools: the swarm's ``ToolRegistry``; a tool whose policy is ``"ask"`` needs the ``approver``
given to the swarm, and without one its calls are denied (the model gets a denied result).

Each agent's loop runs with ``run(None)`` (no new input): every step is recorded in the agent's
trail as any agent's is. Close the swarm (``close()``, or ``with``) to stop the agents' event loops.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
from collections.abc import Iterable, Sequence

import msgspec

from msgwire import AssistantMessage, UserMessage, context
from msgwire.context import Context, EncouragementCounter
from msgwire.errors import StoreError, StoreUnavailableError

from .agent import Agent
from .audit import Committed, Draft, Entry
from .conversation import Conversation
from .events import StepEnd
from .pipeline import ContextPipeline
from .providers import Provider
from .store import AgentState, AgentView, HeaderColumn, Mail, SwarmStore
from .tools import Approver, ToolRegistry

__all__ = ["SYNTHETIC_TEXT", "Swarm", "SwarmAgent"]

SYNTHETIC_TEXT = "Continue your mission. Check notifications and coordinate with the swarm."
"""The seed system's encouragement, sent when an agent has no user message to go on."""


class SwarmAgent(msgspec.Struct, kw_only=True):
    """One agent of a swarm: its name, its stored conversation (bound), its loop (made at its
    first step), what ``before_step`` read of it (its counter and mission), the last context
    built for it and how many model calls it made."""

    name: str
    conversation: Conversation
    loop: Agent | None = None
    encouragement: int = 0
    mission: UserMessage | None = None
    last_context: Context | None = None
    calls: int = 0


class _Step:
    """What a step took and decided, stored with its first append: the new mail shown to its
    model call (``take``), the mark taking it sets (``upto``, past expired mail too), and the
    counter its context made when it changed (``encouragement``; ``idle``: the idle context)."""

    __slots__ = ("encouragement", "idle", "take", "upto")

    def __init__(self, take: list[Mail], upto: int | None) -> None:
        self.take = take
        self.upto = upto
        self.encouragement: int | None = None
        self.idle = False


class _StepLedger:
    """The ledger of a swarm agent's conversation (an ``EntryLedger``): the store's, except that
    a step's first append also commits what the step took and decided (``_Step``) and reads the
    view of the agent's next step, in one transaction (``store.commit_step``)."""

    def __init__(self, store: SwarmStore, name: str) -> None:
        self.store = store
        self.name = name
        self.view: AgentView | None = None  # read with the last commit: the next step's
        self.step: _Step | None = None  # the step under way, until its first append

    def start(self, view: AgentView, conversation: Conversation) -> _Step:
        """A step from ``view``: its new mail (what ``conversation`` does not hold already) and
        the mark past it wait for the step's first append."""
        take = [m for m in view.mail if m.message.id not in conversation]
        self.step = _Step(take, view.mail_upto if view.mail_upto > view.mail_seen else None)
        return self.step

    def take_view(self) -> AgentView | None:
        view, self.view = self.view, None
        return view

    def commit(self, conversation_id: str, drafts: Sequence[Draft], after: int | None, /) -> Committed:
        step, self.step, self.view = self.step, None, None
        if step is None:  # an append between steps
            step = _Step([], None)
        committed, self.view = self.store.commit_step(
            self.name,
            conversation_id,
            drafts,
            after,
            take=step.take,
            upto=step.upto,
            encouragement=step.encouragement,
            idle=step.idle,
        )
        return committed

    def since(self, conversation_id: str, after: int, /) -> list[Entry]:
        return self.store.since(conversation_id, after)


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
        store: SwarmStore,
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
        self._ledgers: dict[str, _StepLedger] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    # --- agents and mail ----------------------------------------------------------------------

    def add(
        self, name: str, *, system_prompt: str | None = None, accept_header: Iterable[HeaderColumn] = ()
    ) -> SwarmAgent:
        """An agent of this swarm: its conversation is created (or reopened when the store
        already knows the agent) and it starts idle, waiting for mail. A reopened conversation's
        header is its trail's: ``HeaderMismatchError`` when a stored column says otherwise,
        unless ``accept_header`` names it (``store.open``)."""
        try:
            conversation = self.store.open(self.store.agent(name).conversation_id, accept_header=accept_header)
        except KeyError:
            conversation = self.store.create(agent=name, system_prompt=system_prompt or self.system_prompt)
            self.store.register_agent(name, conversation.id)
        ledger = self._ledgers[name] = _StepLedger(self.store, name)
        conversation.bind(ledger)
        agent = self.agents[name] = SwarmAgent(name=name, conversation=conversation)
        return agent

    def broadcast(
        self,
        text: str | UserMessage,
        *,
        to: Sequence[str] | None = None,
        expires: float | dt.timedelta | dt.datetime | None = None,
    ) -> Mail:
        """To every agent (the mission, inherited by agents added later) or to a group
        (``to``): resets their counters and starts the idle ones. ``expires`` (seconds or a
        ``timedelta`` from now, or an aware ``datetime``) ends it: then it is as if it had
        never been sent, and agents it kept running idle after the encouragement rule."""
        return self.store.broadcast(text, to=to, sender=self.sender, expires=expires)

    def start_agent(self, name: str) -> None:
        """Start an idle agent without a message (it runs on its mission, or on encouragement);
        ``KeyError`` for an agent the store does not know."""
        self.store.set_agent(name, state="running")

    def send(
        self, name: str, text: str | UserMessage, *, expires: float | dt.timedelta | dt.datetime | None = None
    ) -> Mail:
        """A direct message to one agent: resets its counter and starts it if idle; not taken
        after ``expires``, if given (as ``broadcast``'s)."""
        return self.store.post(text, to=name, sender=self.sender, expires=expires)

    def clear_mail(self, *, to: str | None = None, older_than: float | dt.timedelta | None = None) -> int:
        """Delete the store's mail (``store.clear_mail``): all of it, that addressed to agent
        ``to`` alone, or that posted ``older_than`` ago or earlier; how many mails. A cleared
        mission no longer holds its agents: they idle after the encouragement rule."""
        return self.store.clear_mail(to=to, older_than=older_than)

    def state(self, name: str) -> AgentState:
        return self.store.agent(name)

    # --- the hooks of each agent's loop -------------------------------------------------------

    def _before(self, agent: SwarmAgent) -> None:
        """The agent's view: read with its last commit, else now (its new mail, counter and
        mission); other writers' entries taken; the mail waits for the step's first append."""
        ledger = self._ledgers[agent.name]
        view = ledger.take_view() or self.store.view(agent.name)
        if view.head_seq > len(agent.conversation) - 1:
            agent.conversation.sync()
        agent.encouragement = view.encouragement
        agent.mission = view.mission
        ledger.start(view, agent.conversation)

    def _build(self, agent: SwarmAgent, conversation: Conversation) -> Context:
        """The context of the agent's next model call (see the module docs); builds, nothing else
        (what it decides is stored with the step's first append)."""
        step = self._ledgers[agent.name].step
        session = conversation.session()
        if step is not None and step.take:  # the new mail, stored with the step's first append
            session = msgspec.structs.replace(session, messages=[*session.messages, *(m.message for m in step.take)])
        built = context.build(
            session,
            self.window,
            synthetic_text=self.synthetic_text,
            counter=EncouragementCounter(count=agent.encouragement),
            pin=agent.mission,
        )
        agent.last_context = built
        if step is not None and (built.counter.count != agent.encouragement or built.idle):
            step.encouragement, step.idle = built.counter.count, built.idle
        return built

    def _after(self, agent: SwarmAgent, step: StepEnd) -> None:
        """The counter the step's context made, kept; stored here only when no append of the
        step stored it (its mail is then taken at the next step)."""
        count = agent.last_context.counter.count if agent.last_context is not None else agent.encouragement
        ledger = self._ledgers[agent.name]
        left, ledger.step = ledger.step, None
        if left is not None and (left.encouragement is not None or left.idle):
            self.store.record_step(agent.name, encouragement=count, idle=left.idle)
        agent.encouragement = count

    # --- running ------------------------------------------------------------------------------

    def step(self, name: str) -> AssistantMessage | None:
        """One run of agent ``name`` when it is running: model calls (each with a context built
        as the module docs say) and tools, until the model stops calling tools, ``max_steps``
        calls, or the agent goes idle; ``None`` (and no call) when it is idle. ``KeyError`` for
        an agent not added to this swarm."""
        agent = self.agents.get(name)
        if agent is None:
            raise KeyError(f"no agent {name!r} in this swarm (on {self.store.url}): add it first")
        view = self.store.view(name)
        if view.state == "idle":
            return None
        return self._run(agent, view)

    def _run(self, agent: SwarmAgent, view: AgentView) -> AssistantMessage:
        """One run of a running agent, its first step from ``view``."""
        self._ledgers[agent.name].view = view
        loop = self._loop(agent)
        before = loop.steps
        try:
            return loop.run(None)
        finally:
            agent.calls += loop.steps - before

    def _loop(self, agent: SwarmAgent) -> Agent:
        if agent.loop is None:
            agent.loop = Agent(
                self.provider,
                model=self.model,
                tools=self.tools,
                approver=self.approver,
                conversation=agent.conversation,
                max_steps=self.max_steps,
                context=ContextPipeline(build=lambda conversation: self._build(agent, conversation)),
                before_step=lambda _: self._before(agent),
                after_step=lambda _, step: self._after(agent, step),
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
        one waits for mail (woken by a post, every agent it concerns at once; ``poll_interval``
        bounds each wait). While the store cannot be reached the agents wait and try again, each
        every ``poll_interval``; the failure is kept once in ``errors``."""
        self._stop.clear()
        for name in self.agents:
            thread = threading.Thread(target=self._serve, args=(name, poll_interval), name=f"swarm-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop the agents' threads: each ends its step, an idle one its wait at once."""
        self._stop.set()
        for thread in self._threads:
            while thread.is_alive():
                self.store.wake_waiters()  # again until it ends: it may have been about to wait
                thread.join(0.05)
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
        """Agent ``name``'s thread: step while running, wait for mail while idle. A failed run
        is kept in ``errors`` (once while the same failure repeats, as an outage would every
        poll) and the agent then waits for its next mail, except when the store could not be
        reached: the agent stays as stored and tries again every ``poll_interval``, so a running
        agent goes back to work when the database returns."""
        last_failure = ""
        agent, ledger = self.agents[name], self._ledgers[name]
        while not self._stop.is_set():
            try:
                # the view its last step's commit read (a run ends right after it), else now
                view = ledger.take_view() or self.store.view(name)
                if view.state == "idle":
                    self.store.wait_mail(view.mail_top, poll_interval)
                    ledger.view = None  # read before the mail that ended the wait, maybe
                else:
                    self._run(agent, view)
                last_failure = ""
            except Exception as exc:
                failure = f"{type(exc).__name__}: {exc}"
                if failure != last_failure:
                    self.errors.append(exc)
                last_failure = failure
                self._after_failure(name, exc, poll_interval)

    def _after_failure(self, name: str, exc: Exception, poll_interval: float) -> None:
        self._ledgers[name].view = None
        if not isinstance(exc, StoreUnavailableError):
            with contextlib.suppress(StoreError):  # the store's own failure is in ``errors`` already, or comes next
                if self.store.idle_unless_mail(name):
                    return
        self._stop.wait(poll_interval)
