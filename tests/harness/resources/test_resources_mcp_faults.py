"""The MCP fault suite: servers that do not start, stay silent, answer slowly, die mid-session, or
are killed and started again (over stdio and streamable HTTP). Real SDK servers in their own
processes; the tests wait on what the manager reports, never on time alone."""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp.client.stdio import PROCESS_TERMINATION_TIMEOUT

from msgwire.errors import ResourceError
from msgwire.harness.resources.mcp import MCPResources
from msgwire.types import MCPResourceBlock
from tests._support.mcp_servers import LOWLEVEL, WAIT, Changes, HttpServer, kill, process_gone, wait_until


def pid_of(block: MCPResourceBlock) -> int:
    """The server's process id from a ``counter://reads`` read (``read N by PID``)."""
    assert block.status == "resolved", block.error
    return int((block.content or "").rsplit(" ", 1)[1])


def test_a_server_that_cannot_start_stops_neither_open_nor_the_others() -> None:
    servers = {
        "good": LOWLEVEL,
        "missing": ["/nonexistent/mcp-server"],
        "exits": [sys.executable, "-c", "raise SystemExit(3)"],
    }
    with MCPResources(servers) as mcp:
        assert mcp.unavailable == {
            "missing": "could not connect: FileNotFoundError: [Errno 2] No such file or directory: "
            "'/nonexistent/mcp-server'",
            "exits": "could not connect: Connection closed",
        }
        assert mcp.read("good", "config://app").status == "resolved"
        assert mcp.read("missing", "config://app").error == (
            "server 'missing' could not read 'config://app': could not connect: FileNotFoundError: "
            "[Errno 2] No such file or directory: '/nonexistent/mcp-server'"
        )
        assert mcp.read("exits", "config://app").error == (
            "server 'exits' could not read 'config://app': could not connect: Connection closed"
        )
        # listing every server leaves out those that cannot be listed; one of them by name says why
        assert {r.server_name for r in mcp.list()} == {"good"}
        with pytest.raises(ResourceError, match=r"^MCP server 'missing' could not be listed: could not connect: "):
            mcp.list("missing")


def test_a_server_silent_at_start_is_given_up_after_connect_timeout(tmp_path: Path) -> None:
    """Given up at ``connect_timeout``: the server reads the handshake until its stdin closes,
    the SDK's first step in stopping it, and notes when; ``open()`` returns once the process is
    stopped (the SDK lets it exit on its own for PROCESS_TERMINATION_TIMEOUT, then kills it)."""
    pid_file, closed_file = tmp_path / "pid", tmp_path / "closed"
    silent = (
        f"import os, sys, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        f"sys.stdin.buffer.read(); open({str(closed_file)!r}, 'w').write(repr(time.time())); time.sleep(600)"
    )
    started = time.time()  # wall clock: compared with the server's
    with MCPResources({"silent": [sys.executable, "-c", silent]}, connect_timeout=2) as mcp:
        opened = time.time() - started
        assert mcp.unavailable == {"silent": "could not connect: no answer to the MCP handshake within 2 s"}
        wait_until(lambda: process_gone(int(pid_file.read_text())), "the silent server's process to be stopped")
    given_up = float(closed_file.read_text()) - started
    assert 2 <= given_up < 3.5  # at connect_timeout, with what a loaded machine adds
    assert opened - given_up < PROCESS_TERMINATION_TIMEOUT + 1.5  # then stopped, not waited for


def test_a_slow_read_times_out_and_the_connection_stays() -> None:
    with MCPResources({"s": LOWLEVEL}, timeout=3) as mcp:
        before = pid_of(mcp.read("s", "counter://reads"))
        assert mcp.read("s", "slow://gate").error == "server 's' could not read 'slow://gate': no answer within 3 s"
        after = mcp.read("s", "counter://reads", refresh=True)
        assert (after.content, mcp.unavailable) == (f"read 2 by {before}", {})


def test_a_slow_read_holds_up_no_other_read(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    with MCPResources({"s": [*LOWLEVEL, "--gate", str(gate)], "other": LOWLEVEL}, timeout=WAIT) as mcp:
        slow: list[MCPResourceBlock] = []
        reader = threading.Thread(target=lambda: slow.append(mcp.read("s", "slow://gate")))
        reader.start()
        wait_until(tmp_path.joinpath("gate.waiting").exists, "the slow read to reach the server")
        # the same server and another one answer while the slow read waits for its gate
        assert mcp.read("s", "config://app").status == "resolved"
        assert mcp.read("other", "config://app").status == "resolved"
        assert reader.is_alive()
        gate.touch()
        reader.join(WAIT)
        assert [b.content for b in slow] == ["the gate opened"]


def test_a_server_that_dies_mid_session_is_started_again_by_the_next_read() -> None:
    with MCPResources({"s": LOWLEVEL}) as mcp:
        first = pid_of(mcp.read("s", "counter://reads"))
        assert mcp.read("s", "crash://exit").error == (
            "server 's' could not read 'crash://exit': the connection was lost before the answer came: "
            "Connection closed"
        )
        assert mcp.unavailable == {"s": "the connection was lost: Connection closed"}
        again = mcp.read("s", "counter://reads", refresh=True)
        assert pid_of(again) != first
        assert again.content == f"read 1 by {pid_of(again)}"  # a new process
        assert mcp.unavailable == {}


class GatedRead:
    """A read of ``slow://gate`` in a thread of its own (``--gate PATH``: it waits for ``PATH``),
    timed; ``servers()`` are the pids the read reached, one per server it was sent to (the server
    appends its pid to ``PATH.waiting``: a side effect that outlives the process)."""

    def __init__(self, mcp: MCPResources, server: str, gate: Path) -> None:
        self.waiting = gate.with_name(gate.name + ".waiting")
        self.block: MCPResourceBlock | None = None
        self.took = 0.0
        self._thread = threading.Thread(target=self._read, args=(mcp, server))
        self._thread.start()
        wait_until(self.waiting.exists, "the read to reach the server")

    def _read(self, mcp: MCPResources, server: str) -> None:
        start = time.monotonic()
        self.block = mcp.read(server, "slow://gate")
        self.took = time.monotonic() - start

    def servers(self) -> list[int]:
        return [int(pid) for pid in self.waiting.read_text().split()]

    def result(self) -> MCPResourceBlock:
        self._thread.join(WAIT)
        assert self.block is not None, "the read did not end"
        return self.block


@pytest.mark.parametrize("flags", [[], ["--listen"]], ids=["silent", "notifying"])
def test_a_read_in_flight_when_its_stdio_server_dies_fails_naming_it_and_is_not_sent_again(
    tmp_path: Path, flags: list[str]
) -> None:
    """The read is not sent to the server started again: it may have acted on it (a read with
    side effects would run twice), and the restart would take the read past its ``timeout``. The
    next read starts the server again."""
    gate, timeout = tmp_path / "gate", 10.0
    with MCPResources({"s": [*LOWLEVEL, *flags, "--gate", str(gate)]}, timeout=timeout) as mcp:
        first = pid_of(mcp.read("s", "counter://reads"))
        read = GatedRead(mcp, "s", gate)
        kill(first)  # while the read waits for its gate
        block = read.result()
        assert block.error == (
            "server 's' could not read 'slow://gate': the connection was lost before the answer came: Connection closed"
        )
        assert read.took < timeout
        assert read.servers() == [first]  # sent once, to the server that died
        assert mcp.unavailable == {"s": "the connection was lost: Connection closed"}  # not started again yet
        again = pid_of(mcp.read("s", "counter://reads", refresh=True))
        assert again != first
        assert (read.servers(), mcp.unavailable) == ([first], {})


@pytest.mark.parametrize("flags", [[], ["--no-listen"]], ids=["notifying", "silent"])
def test_a_read_in_flight_when_its_http_server_dies_fails_naming_it_and_is_not_sent_again(
    tmp_path: Path, flags: list[str]
) -> None:
    gate, timeout = tmp_path / "gate", 10.0
    with HttpServer(*flags, "--gate", str(gate)) as server, MCPResources({"wiki": server.url}, timeout=timeout) as mcp:
        first = mcp.read("wiki", "note://pid").content
        read = GatedRead(mcp, "wiki", gate)
        server.kill()
        block = read.result()
        # the SDK's words for a connection that ended, or (had the transport outlived the cut
        # response) for the response stream cut before the answer
        assert re.fullmatch(
            "server 'wiki' could not read 'slow://gate': the connection was lost before the answer came: "
            "(Connection closed|SSE stream ended without a response)",
            block.error or "",
        ), block.error
        assert read.took < timeout
        assert len(read.servers()) == 1
        server.start()
        back = mcp.read("wiki", "note://pid", refresh=True)
        assert back.status == "resolved"
        assert back.content != first
        assert len(read.servers()) == 1


@pytest.mark.parametrize("flags", [[], ["--listen"]], ids=["silent", "notifying"])
def test_a_stdio_server_that_dies_between_reads_is_seen_gone_and_started_again_before_the_next_read(
    flags: list[str],
) -> None:
    with MCPResources({"s": [*LOWLEVEL, *flags]}) as mcp:
        first = pid_of(mcp.read("s", "counter://reads"))
        kill(first)
        wait_until(lambda: mcp.unavailable == {"s": "the connection was lost: Connection closed"}, "the loss seen")
        again = mcp.read("s", "counter://reads", refresh=True)
        assert pid_of(again) != first
        assert again.content == f"read 1 by {pid_of(again)}"  # sent once, to the new process
        assert mcp.unavailable == {}


def test_a_stdio_server_killed_is_started_again_and_what_it_watched_is_read_again() -> None:
    changes = Changes()
    with MCPResources({"s": [*LOWLEVEL, "--listen"]}, on_change=changes) as mcp:
        first = pid_of(mcp.read("s", "counter://reads"))  # cached, and watched
        kill(first)
        # its change stream is cut: an update may have been missed, so the cached copy goes
        assert changes.wait_for("s", "counter://reads")
        again = mcp.read("s", "counter://reads")
        assert pid_of(again) != first
        assert (mcp.stats.hits, mcp.stats.invalidated) == (0, 1)


@pytest.mark.parametrize("listens", [True, False], ids=["notifying", "silent"])
def test_an_http_server_killed_and_restarted(listens: bool) -> None:
    """While the server is down every read says why; once it is back the next read works, without
    ``open()``. A cached copy is still served while down, unless it relied on the change stream."""
    changes = Changes()
    with (
        HttpServer(*([] if listens else ["--no-listen"])) as server,
        MCPResources({"wiki": server.url}, on_change=changes) as mcp,
    ):
        first = mcp.read("wiki", "note://pid")
        readme = mcp.read("wiki", "note://readme")
        server.kill()
        if listens:
            assert changes.wait_for("wiki", "note://readme")  # the cut stream dropped both copies
        down = mcp.read("wiki", "note://pid", refresh=True)
        if not listens:
            # nothing told of the loss: the read is sent, and the SDK ends the connection when the
            # request cannot be posted (the same words as a request cut mid-answer); not sent again
            assert down.error == (
                "server 'wiki' could not read 'note://pid': the connection was lost before the answer came: "
                "Connection closed"
            )
            down = mcp.read("wiki", "note://pid", refresh=True)
        assert down.error == (
            "server 'wiki' could not read 'note://pid': could not connect: ConnectError: All connection attempts failed"
        )
        assert mcp.unavailable == {"wiki": "could not connect: ConnectError: All connection attempts failed"}
        cached = mcp.read("wiki", "note://readme")
        assert cached.status == ("error" if listens else "resolved")
        if not listens:
            assert cached == readme
        server.start()
        back = mcp.read("wiki", "note://pid", refresh=True)
        assert back.status == "resolved"
        assert back.content != first.content  # another process
        assert mcp.unavailable == {}
