"""The demo's MCP server (``msgwire demo`` runs it over stdio when the ``mcp`` extra is installed):
one text resource, built with the official SDK."""

from __future__ import annotations

from msgwire.errors import MissingExtraError

try:
    from mcp.server.mcpserver import MCPServer
except ImportError as exc:
    raise MissingExtraError("the demo's MCP server", "mcp", exc) from None

app = MCPServer("msgwire-demo-docs", log_level="CRITICAL")


@app.resource("docs://readme", mime_type="text/markdown")
def readme() -> str:
    return "# Service\nThe service answers on port 8080; health checks hit /health."


if __name__ == "__main__":
    app.run()
