"""A swarm on PostgreSQL, end to end: messages delivered per second to 8 agents (issue 22), beside
the server's own commit rate in the same run (the bound: every step of an agent commits).

Delivered end to end: a direct message is posted (``swarm.send``: its commit and NOTIFY), the
agent wakes, takes its mail into its conversation (``deliver``: one transaction), and the
model server (a ``ScriptedServer`` on 127.0.0.1 answering at once) receives the request that
carries it. ``--messages`` are posted per agent, as fast as one thread posts (``--posters N``:
N threads, each agent's mail from one of them, in order); an agent
takes whatever mail arrived by its next step (a batch when it is busy), so the figure is the
whole swarm's: messages / (last arrival - first post). By default each agent's context window
holds all its messages of the run (a batch of mail is seen whole: ``4 * messages + 8``, 108);
``--window 20`` is the swarm's default. Each agent makes one step before the timed run (its
loop and HTTP connection built).

An agent keeps calling the model while a direct message is in its window (the seed's rule: a
task holds its agent until it slides out), then makes 3 encouraged calls and idles: so the
model calls per delivered message are set by the window, and the commits per message by the
commits per model call. Both are reported, counted over the run and the agents' way back to
idle: the model server's requests, ``pg_stat_database.xact_commit`` (every transaction, read-only
ones too) and ``pg_stat_wal.wal_sync`` (the WAL flushes: the commits that wrote, grouped), and
the server processes' CPU (``/proc``).

The server's commit rate, measured on the same server before the swarm: a bare loop of
``INSERT`` + ``COMMIT`` of one small row on one connection, and the same on 8 connections at
once (the group commit a server with 8 writers gets). Commits per delivered message are read
from ``pg_stat_database.xact_commit`` around the run. The server is the tests' throwaway
cluster (``tests/_support/postgres.py``: Unix socket, ``fsync=on``, ``synchronous_commit=on``).

Run: ``.venv/bin/python -m benches.swarm_throughput [--agents 8] [--messages 25] [--window 108] [--commits 2000]
[--posters 1]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from benches import pgstats
from benches.arrivals import Arrivals
from msgwire.harness.providers import OpenAI
from msgwire.harness.store import open_store
from msgwire.harness.swarm import Swarm
from msgwire.testing import ScriptedServer


def commit_rate(url: str, writers: int, commits: int) -> float:
    """Commits per second of ``writers`` connections each committing ``commits`` one-row INSERTs."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commits (writer INT, i INT, at TIMESTAMPTZ DEFAULT now())")
    start = threading.Barrier(writers + 1)

    def write(w: int) -> None:
        with psycopg.connect(url) as conn:
            start.wait()
            for i in range(commits):
                conn.execute("INSERT INTO bench_commits (writer, i) VALUES (%s, %s)", (w, i))
                conn.commit()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    return writers * commits / (time.perf_counter() - began)


def _idle(swarm: Swarm, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(swarm.state(n).state != "idle" for n in names):
        if time.monotonic() > deadline:
            raise TimeoutError("the agents did not go idle")
        time.sleep(0.02)


def measure(
    url: str, agents: int, per_agent: int, window: int, data_dir: Path | None = None, posters: int = 1
) -> dict[str, float]:
    arrivals = Arrivals("m-")
    with ScriptedServer(respond=arrivals.respond) as server:
        store = open_store(url, max_size=agents + 2)
        with OpenAI(base_url=server.url, api_key="k", model="m") as model, Swarm(store, model, window=window) as swarm:
            names = [f"agent-{i}" for i in range(agents)]
            for name in names:
                swarm.add(name)
            swarm.start(poll_interval=5.0)
            for name in names:
                swarm.send(name, f"warm-{name}")
            _idle(swarm, names, 120)
            markers = {f"m-{name}-{i}" for name in names for i in range(per_agent)}
            before = pgstats.counters(url)
            calls_before = arrivals.calls
            cpu_before = pgstats.server_cpu(data_dir) if data_dir is not None else 0.0
            post_times: list[float] = []

            def post(mine: list[str]) -> None:  # each agent's messages from one thread, in order
                for i in range(per_agent):
                    for name in mine:
                        start = time.perf_counter()
                        swarm.send(name, f"m-{name}-{i}")
                        post_times.append(time.perf_counter() - start)

            threads = [threading.Thread(target=post, args=(names[p::posters],)) for p in range(posters)]
            began = time.monotonic()
            if posters == 1:
                post(names)
            else:
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            posted = time.monotonic()
            last = arrivals.wait_all(markers, 600)
            _idle(swarm, names, 600)
            cpu = pgstats.server_cpu(data_dir) - cpu_before if data_dir is not None else float("nan")
            calls = arrivals.calls - calls_before
            after = pgstats.counters(url)
            swarm.stop()
            assert swarm.errors == [], swarm.errors
            for name in names:  # every mail taken once, every trail whole
                trail = store.load(swarm.agents[name].conversation.id)
                assert trail.verify(), name
                taken = [m for m in trail.messages() if m.type == "user" and m.source == "direct"]
                assert len(taken) == len({m.id for m in taken}) == per_agent + 1, name
        store.close()
    count = len(markers)
    return {
        "messages": count,
        "seconds": last - began,
        "posting seconds": posted - began,
        "post ms p50": statistics.median(post_times) * 1000,
        "per second": count / (last - began),
        "model calls per message": calls / count,
        "commits per message": (after["commits"] - before["commits"]) / count,
        "commits per model call": (after["commits"] - before["commits"]) / calls,
        "WAL flushes per message": (after["wal_syncs"] - before["wal_syncs"]) / count,
        "server CPU ms per message": cpu / count * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--messages", type=int, default=25, help="per agent")
    parser.add_argument("--window", type=int, default=None, help="messages per context (4 * messages + 8)")
    parser.add_argument("--commits", type=int, default=2000, help="per writer of the bare commit loop")
    parser.add_argument("--posters", type=int, default=1, help="threads posting (each agent's mail from one)")
    args = parser.parse_args()
    window = args.window if args.window is not None else 4 * args.messages + 8
    from tests._support.postgres import running

    with running() as pg:
        one = commit_rate(pg.schema_url(), 1, args.commits)
        many = commit_rate(pg.schema_url(), args.agents, args.commits // 4)
        found: dict[str, Any] = measure(pg.schema_url(), args.agents, args.messages, window, pg.data, args.posters)
        after = commit_rate(pg.schema_url(), 1, args.commits)
    print(
        f"PostgreSQL (fsync=on, synchronous_commit=on), {args.agents} agents, {found['messages']} messages, "
        f"window {window}, {args.posters} posting thread{'s' if args.posters > 1 else ''}, "
        f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(
        f"  bare INSERT+COMMIT: {one:8.0f} commits/s on 1 connection ({after:.0f} after the swarm), "
        f"{many:8.0f} on {args.agents}"
    )
    print(
        f"  swarm: {found['per second']:8.1f} messages/s delivered end to end "
        f"({found['seconds']:.2f} s; posting took {found['posting seconds']:.2f} s, "
        f"a post {found['post ms p50']:.1f} ms median; a bare commit {1000 / one:.1f} ms)"
    )
    print(
        f"  per message: {found['model calls per message']:.2f} model calls, "
        f"{found['commits per message']:.2f} commits ({found['commits per model call']:.2f} per model call), "
        f"{found['WAL flushes per message']:.2f} WAL flushes, "
        f"server CPU {found['server CPU ms per message']:.2f} ms"
    )


if __name__ == "__main__":
    main()
