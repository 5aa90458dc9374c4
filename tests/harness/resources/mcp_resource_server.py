"""A small MCP server for the resource tests, built with the official SDK (2.x), run over stdio
by the tests: text, JSON and binary resources, one that changes at every read, one that fails,
and a template resource whose read changes the counter and notifies listeners."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("test-resources", log_level="CRITICAL")  # the failing resource is expected
state = {"reads": 0}


@app.resource("docs://readme", mime_type="text/markdown")
def readme() -> str:
    return "# Readme\nThe service answers on port 8080."


@app.resource("data://config.json", mime_type="application/json")
def config() -> dict[str, object]:
    return {"retries": 3, "hosts": ["a", "b"]}


@app.resource("bin://logo.png", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(range(8))


@app.resource("state://counter", mime_type="text/plain")
def counter() -> str:
    state["reads"] += 1
    return f"read {state['reads']}"


@app.resource("fail://boom", mime_type="text/plain")
def boom() -> str:
    raise RuntimeError("the database is down")


@app.resource("control://bump/{by}")
async def bump(by: str, ctx: Context) -> str:
    state["reads"] += int(by)
    await ctx.notify_resource_updated("state://counter")
    return f"bumped by {by}"


if __name__ == "__main__":
    app.run()
