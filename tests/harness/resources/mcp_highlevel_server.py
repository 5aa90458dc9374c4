"""An MCP server written with the SDK's high-level ``MCPServer`` (2.x), the way the SDK's
examples write one: ``@mcp.resource`` functions and ``mcp.run()``. The tests run it as a
subprocess, over stdio, or over streamable HTTP with ``--http PORT``.

``--no-listen`` builds it with ``subscriptions=False`` (``subscriptions/listen`` unserved: the
server cannot notify). Resources: ``note://readme`` (text), ``note://pid`` (the process id, so a
test can tell a restarted server), ``note://logo`` (binary), ``note://counter`` (changes at every
read), the template ``control://bump/{by}`` (adds ``by`` to the counter and notifies an update of
``note://counter``), ``note://down`` (raises the
SDK's ``ResourceError``: an anticipated failure, its message reaches the client),
``note://boom`` (raises ``RuntimeError``: a crash, which the SDK reports by uri only),
``note://exit`` (the process exits while answering), and the template ``greeting://{name}``.
``--gate PATH`` adds ``slow://gate``, the low-level server's: it answers once ``PATH`` exists, a
read of it first appending the server's pid to ``PATH.waiting`` (a side effect that outlives the
process).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

parser = argparse.ArgumentParser()
parser.add_argument("--no-listen", action="store_true")
parser.add_argument("--http", type=int, metavar="PORT")
parser.add_argument("--gate", type=Path)
args = parser.parse_args()

# the failing resources are expected: keep the server's tracebacks out of the test output
mcp = MCPServer("highlevel-resources", log_level="CRITICAL", subscriptions=False if args.no_listen else None)
reads = 0


@mcp.resource("note://readme", mime_type="text/markdown")
def readme() -> str:
    """How to reach the service."""
    return "# Readme\nThe service answers on port 8080."


@mcp.resource("note://pid", mime_type="text/plain")
def pid() -> str:
    return str(os.getpid())


@mcp.resource("note://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(range(8))


@mcp.resource("note://counter", mime_type="text/plain")
def counter() -> str:
    global reads
    reads += 1
    return f"read {reads}"


@mcp.resource("control://bump/{by}", mime_type="text/plain")
async def bump(by: str, ctx: Context) -> str:
    global reads
    reads += int(by)
    await ctx.notify_resource_updated("note://counter")
    return f"bumped by {by}"


@mcp.resource("note://down", mime_type="text/plain")
def down() -> str:
    raise ResourceError("the database is down")


@mcp.resource("note://boom", mime_type="text/plain")
def boom() -> str:
    raise RuntimeError("secret detail: password=hunter2")


@mcp.resource("note://exit")
def exit_now() -> str:
    os._exit(3)


@mcp.resource("greeting://{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for the named subject."""
    return f"Hello, {name}!"


if args.gate is not None:
    gate: Path = args.gate

    @mcp.resource("slow://gate", mime_type="text/plain")
    async def slow_gate() -> str:
        with gate.with_name(gate.name + ".waiting").open("a") as waiting:
            waiting.write(f"{os.getpid()}\n")
        while not gate.exists():
            await anyio.sleep(0.05)
        return "the gate opened"


if __name__ == "__main__":
    if args.http is not None:
        mcp.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        mcp.run()
