"""The swarm section of `make demo`: three agents, the hauler idle after three nudges, woken by
a direct message; the others kept running by their mission."""

from __future__ import annotations

import io

from rich.console import Console

from msgwire.cli.demo_swarm import show_swarm


def test_the_swarm_demo_shows_idle_after_three_nudges_and_a_direct_wake_up() -> None:
    buffer = io.StringIO()
    show_swarm(Console(file=buffer, width=200), 8)
    lines = [line.split() for line in buffer.getvalue().splitlines()]
    hauler = [(row[0], row[-2], row[-1]) for row in lines if len(row) > 3 and row[1] == "hauler"]
    assert hauler == [("1", "1", "running"), ("2", "2", "running"), ("3", "3", "idle"), ("7", "0", "running")]
    others = [row for row in lines if len(row) > 3 and row[1] in ("scout", "miner")]
    assert len(others) == 14
    assert all(row[-2:] == ["0", "running"] for row in others)
    assert "assistant, assistant, assistant, user/direct, assistant" in buffer.getvalue()
