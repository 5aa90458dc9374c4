"""The swarm part of ``msgwire demo``: three agents on a SQLite store, a scripted model server.

A group broadcast starts the scout and the miner (their mission: they keep it, from the
database, however far it slides out of their context window); the hauler is started without
a message, is encouraged three times (the third nudge is sent) and goes idle; a direct message
wakes it. A broadcast to *everyone* would have kept all three running: agents without a
mission of their own inherit the swarm's (the seed system's global fallback).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # the harness loads only when the section runs (`msgwire parse` never needs it)
    from ..testing import Received, Reply

__all__ = ["show_swarm"]

_LINES = {
    "scout": "Scanning the next sector.",
    "miner": "Drilling the iron seam.",
    "hauler": "Standing by at the dock.",
}


def _answer(received: Received) -> Reply:
    from ..testing import reply

    prompt = received.json()["messages"][0]["content"]
    for name, line in _LINES.items():
        if name in str(prompt):
            return reply(line)
    return reply("On it.")


def _opening(agent: Any) -> str:
    ctx = agent.last_context
    if ctx is None:
        return "-"
    if ctx.synthetic is not None:
        return "synthetic: continue (not stored)"
    first = ctx.messages[0]
    text = "".join(getattr(b, "text", "") for b in first.content)
    where = "mission from the DB" if ctx.pinned is not None else first.source
    return f"{where}: {text}"


def show_swarm(out: Console, number: int) -> None:
    from ..harness.providers import OpenAI
    from ..harness.store import SQLiteStore
    from ..harness.swarm import SYNTHETIC_TEXT, Swarm
    from ..testing import ScriptedServer
    from .render import section

    section(out, number, "A swarm of three agents on SQLite: broadcasts, encouragement, idle, a direct message")
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(respond=_answer) as server:
        store = SQLiteStore(Path(tmp) / "swarm.db")
        provider = OpenAI(base_url=server.url, api_key="demo", model="scripted")
        swarm = Swarm(store, provider, window=4)
        for name in _LINES:
            swarm.add(name, system_prompt=f"You are the {name} of a mining swarm.")
        table = Table(box=None, pad_edge=False)
        for column in ("round", "agent", "context opened by", "counter", "state after"):
            table.add_column(column)

        def run_round(label: str) -> None:
            for name in _LINES:
                if swarm.step(name) is None:
                    continue
                state = swarm.state(name)
                table.add_row(label, name, _opening(swarm.agents[name]), str(state.encouragement), state.state)

        swarm.broadcast("Survey the belt and mine what you find.", to=["scout", "miner"])
        swarm.start_agent("hauler")
        for r in range(1, 7):
            run_round(str(r))
        swarm.send("hauler", "Haul the ore the miner dug to the station.")
        run_round("7")
        out.print(table)
        hauler = swarm.agents["hauler"].conversation
        stored = [m.type + ("/" + m.source if m.type == "user" else "") for m in store.messages(hauler.id)]  # type: ignore[union-attr]
        out.print(f"  the hauler's stored conversation: {', '.join(stored)}")
        out.print(f"  (the synthetic {SYNTHETIC_TEXT!r} was sent three times and never stored)")
        out.print(f"  {len(server.requests)} model calls; the scout and the miner never went idle: the mission")
        out.print("  stays in the database after it leaves their window of 4 messages")
        out.print("  tools whose policy is 'ask' need an approver given to the swarm: without one they are denied")
        swarm.close()
        provider.close()
        store.close()
