"""How long an idle swarm agent takes to wake on a post: the time from a direct message's commit
to the model server receiving that agent's request (issue 20, "Every idle agent wakes at once").

A ``Swarm`` of N idle agents runs in threads (``start(poll_interval=P)``, P long on purpose:
only the post may wake an agent), its model a ``ScriptedServer`` on 127.0.0.1 that stamps the
arrival of each request. Each agent in turn gets a direct message, posted from this process
(``swarm.send``) or from another one (a spawned process with its own store); after each wake
the agent is let go idle again (``window=1``: one call on the message, three encouragements)
before the next post, and each agent has made one step before the first timed post (its
first builds its loop and HTTP connection). PostgreSQL runs on the tests' throwaway server
(``tests/_support/postgres.py``); SQLite on a temporary file (posts from another process are
seen at its poll of 0.2 s).

Run: ``.venv/bin/python -m benches.wake [--agents 3] [--rounds 5] [--poll 5] [--store postgres]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benches.arrivals import Arrivals
from msgwire.harness.providers import OpenAI
from msgwire.harness.store import open_store
from msgwire.harness.swarm import Swarm
from msgwire.testing import ScriptedServer


def _poster(url: str, commands: Any, done: Any) -> None:
    """Another process: post each (agent, text) it is sent; answer with the time of the commit."""
    store = open_store(url)
    try:
        while (command := commands.get()) is not None:
            name, text = command
            store.post(text, to=name, sender="bench")
            done.put(time.monotonic())
    finally:
        store.close()


@contextmanager
def _store_url(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{Path(folder) / 'wake.db'}"
        return
    from tests._support.postgres import running

    with running() as server:
        yield server.schema_url()


def _idle(swarm: Swarm, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while swarm.state(name).state != "idle":
        if time.monotonic() > deadline:
            raise TimeoutError(f"agent {name} did not go idle")
        time.sleep(0.01)


def measure(kind: str, agents: int, rounds: int, poll: float) -> dict[str, list[float]]:
    """Wake latencies in seconds: ``{"here": [...], "other process": [...]}``."""
    arrivals = Arrivals("wake-")
    results: dict[str, list[float]] = {"here": [], "other process": []}
    context = multiprocessing.get_context("spawn")
    with _store_url(kind) as url, ScriptedServer(respond=arrivals.respond) as server:
        store = open_store(url)
        commands, done = context.Queue(), context.Queue()
        poster = context.Process(target=_poster, args=(url, commands, done), daemon=True)
        poster.start()
        with OpenAI(base_url=server.url, api_key="k", model="m") as model, Swarm(store, model, window=1) as swarm:
            names = [f"agent-{i}" for i in range(agents)]
            for name in names:
                swarm.add(name)
            swarm.start(poll_interval=poll)
            for name in names:  # each agent's first step builds its loop and HTTP connection: not a wake's cost
                swarm.send(name, f"warm-{name}")
                _idle(swarm, name, 60)
            for r in range(rounds):
                for where in results:
                    for name in names:
                        marker = f"wake-{where}-{r}-{name}"
                        if where == "here":
                            swarm.send(name, marker)
                            posted = time.monotonic()
                        else:
                            commands.put((name, marker))
                            posted = done.get(timeout=60)
                        arrived = arrivals.wait(marker, poll * agents + 30)
                        results[where].append(float("inf") if arrived is None else arrived - posted)
                        _idle(swarm, name, 60)
            swarm.stop()
            assert swarm.errors == [], swarm.errors
        commands.put(None)
        poster.join(30)
        store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--poll", type=float, default=5.0)
    parser.add_argument("--store", choices=["postgres", "sqlite"], default="postgres")
    args = parser.parse_args()
    results = measure(args.store, args.agents, args.rounds, args.poll)
    print(f"{args.store}, {args.agents} idle agents, poll_interval={args.poll:g} s, {args.rounds} rounds")
    for where, values in results.items():
        ms = sorted(v * 1000 for v in values)
        print(
            f"  post from {where:<13}: median {statistics.median(ms):8.1f} ms, max {ms[-1]:8.1f} ms ({len(ms)} wakes)"
        )


if __name__ == "__main__":
    main()
