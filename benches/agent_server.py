"""The agent benches' model: the scripted server in a process of its own (so its work does not
share the benchmark's GIL, as a real model server would not), answering every request with the
reply of its step in a recorded tool-using session: the step is the number of assistant
messages the request already holds. Prints its URL, serves until its standard input closes.

Run by ``test_agent.py`` and ``agent_interleaved.py``: ``python benches/agent_server.py STEPS``.
The workload both clients run is here too: ``STEPS``, the ``PROMPT`` and the ``lookup`` tool.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec

from msgwire import TextBlock
from msgwire.testing import Received, Reply, ScriptedServer, reply, tool_call

FINAL = "All nine keys are looked up: every value is in the results above, and none is missing."
STEPS = int(os.environ.get("MSGWIRE_BENCH_STEPS", "10"))
PROMPT = "Look up the keys k0 to k8, one at a time, then tell me."
SERVER = Path(__file__)


def lookup(key: str) -> str:
    """Look a key up in the store."""
    return f"{key} = value of {key}, last changed on 2026-11-24 by the nightly import job"


def session(steps: int) -> list[Reply]:
    """``steps - 1`` turns that each say a sentence and call ``lookup``, then the answer."""
    turns = [
        reply(
            [
                TextBlock(text=f"Looking up key {i}, then the next one."),
                tool_call("lookup", {"key": f"k{i}"}, id=f"call_{i:03d}"),
            ]
        )
        for i in range(steps - 1)
    ]
    return [*turns, reply(FINAL)]


def main() -> None:
    replies = session(int(sys.argv[1]))

    def respond(received: Received) -> Reply:
        body = msgspec.json.decode(received.body)
        step = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        return replies[min(step, len(replies) - 1)]

    with ScriptedServer(respond=respond) as server:
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
