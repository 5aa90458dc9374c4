"""An MCP server written with the SDK's low-level ``Server`` (2.x), the way the SDK's own
``simple-resource`` example and its resources story write one: handlers passed to the
constructor, the server run over stdio by hand. The tests run it as a subprocess.

Flags: ``--listen`` serves ``subscriptions/listen`` (``ListenHandler`` on an in-memory bus, as the
SDK's subscriptions story does); ``--refuse-listen`` advertises it but refuses every listen
request; without either the server cannot notify, like ``simple-resource``. ``--ttl-ms N`` states
a cache lifetime for reads (``cache_hints``). ``--no-templates`` leaves ``resources/templates/list``
unserved, as ``simple-resource`` does. ``--gate PATH``: the file whose appearance lets
``slow://gate`` answer (a read of it first appends the server's pid to ``PATH.waiting``: a side
effect that outlives the process, so a test can count how often the read reached a server).

Resources: ``config://app`` (JSON), ``counter://reads`` (changes at every read), ``blob://pixel``
(binary), ``control://bump`` (publishes an update of ``counter://reads``), ``crash://exit`` (the
process exits while answering), ``slow://gate`` (answers once the ``--gate`` file exists: never
without one); the template ``greeting://{name}``. An unknown uri gets the SDK's ``Resource not found`` error.
"""

from __future__ import annotations

import argparse
import base64
import os
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, INVALID_REQUEST

PIXEL = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"

RESOURCES = [
    types.Resource(uri="config://app", name="app_config", title="App config", mime_type="application/json"),
    types.Resource(uri="counter://reads", name="reads", description="Counts its own reads.", mime_type="text/plain"),
    types.Resource(uri="blob://pixel", name="pixel", mime_type="image/png"),
    types.Resource(uri="control://bump", name="bump", description="Announces a change of counter://reads."),
    types.Resource(uri="crash://exit", name="crash"),
    types.Resource(uri="slow://gate", name="slow"),
]


def build_server(
    *, listen: bool, refuse_listen: bool, ttl_ms: int | None, templates: bool, gate: Path | None
) -> Server[Any]:
    bus = InMemorySubscriptionBus()
    reads = 0

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=RESOURCES)

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template="greeting://{name}", name="greeting", description="A greeting.", mime_type="text/plain"
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        nonlocal reads
        uri = params.uri
        if uri == "config://app":
            contents: list[types.TextResourceContents | types.BlobResourceContents] = [
                types.TextResourceContents(uri=uri, mime_type="application/json", text='{"feature": true}')
            ]
        elif uri == "counter://reads":
            reads += 1
            contents = [
                types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"read {reads} by {os.getpid()}")
            ]
        elif uri == "blob://pixel":
            contents = [
                types.BlobResourceContents(uri=uri, mime_type="image/png", blob=base64.b64encode(PIXEL).decode())
            ]
        elif uri == "control://bump":
            await bus.publish(ResourceUpdated(uri="counter://reads"))
            contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text="bumped")]
        elif uri == "crash://exit":
            os._exit(3)
        elif uri == "slow://gate":
            if gate is not None:
                with gate.with_name(gate.name + ".waiting").open("a") as waiting:
                    waiting.write(f"{os.getpid()}\n")
            while gate is None or not gate.exists():
                await anyio.sleep(0.05)
            contents = [types.TextResourceContents(uri=uri, text="the gate opened")]
        elif uri.startswith("greeting://"):
            contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"Hello, {uri[11:]}!")]
        else:
            raise MCPError(code=INVALID_PARAMS, message=f"Resource not found: {uri}")
        return types.ReadResourceResult(contents=contents)

    async def refuse(
        ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        raise MCPError(code=INVALID_REQUEST, message="listening is switched off on this server")

    on_listen = ListenHandler(bus) if listen else refuse if refuse_listen else None
    return Server(
        "lowlevel-resources",
        cache_hints={"resources/read": CacheHint(ttl_ms=ttl_ms)} if ttl_ms is not None else None,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates if templates else None,
        on_read_resource=read_resource,
        on_subscriptions_listen=on_listen,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", action="store_true")
    parser.add_argument("--refuse-listen", action="store_true")
    parser.add_argument("--ttl-ms", type=int)
    parser.add_argument("--no-templates", action="store_true")
    parser.add_argument("--gate", type=Path)
    args = parser.parse_args()
    app = build_server(
        listen=args.listen,
        refuse_listen=args.refuse_listen,
        ttl_ms=args.ttl_ms,
        templates=not args.no_templates,
        gate=args.gate,
    )

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await app.run(read_stream, write_stream, app.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
