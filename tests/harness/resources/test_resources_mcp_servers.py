"""``MCPResources`` against servers written with the installed SDK's own low-level ``Server`` and
its high-level ``MCPServer``, the way the SDK's examples write them (mcp_lowlevel_server.py,
mcp_highlevel_server.py), with and without ``subscriptions/listen``, over stdio."""

from __future__ import annotations

import base64
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from msgwire.errors import ResourceError
from msgwire.harness.resources.mcp import MCPResources, TemplateInfo
from tests._support.mcp_servers import HIGHLEVEL, LOWLEVEL, SERVERS, Changes, Clock

# (command line, a resource that changes at every read, the server's words for an unknown uri)
CANNOT_NOTIFY = {
    "lowlevel": (LOWLEVEL, "counter://reads", "Resource not found: nope://x"),  # like the SDK's simple-resource
    "lowlevel-refusing": ([*LOWLEVEL, "--refuse-listen"], "counter://reads", "Resource not found: nope://x"),
    "highlevel": ([*HIGHLEVEL, "--no-listen"], "note://counter", "Unknown resource: nope://x"),
}


@pytest.mark.parametrize("kind", CANNOT_NOTIFY)
def test_a_server_that_cannot_notify_is_read_and_cached_by_freshness(kind: str) -> None:
    """Before: every read of a server without a listen handler failed with 'Method not found'."""
    command, counter, unknown = CANNOT_NOTIFY[kind]
    clock = Clock()
    with MCPResources({"s": command}, clock=clock) as mcp:
        first = mcp.read("s", counter)
        assert (first.status, first.error) == ("resolved", None)
        assert (first.content or "").startswith("read 1")
        assert mcp.read("s", counter) == first  # from the cache
        assert (mcp.stats.hits, mcp.stats.misses) == (1, 1)
        clock.now += 3601  # the default hour: nothing else says when it changes
        assert (mcp.read("s", counter).content or "").startswith("read 2")
        # the server's own words reach the block unchanged
        assert mcp.read("s", "nope://x").error == f"server 's' could not read 'nope://x': {unknown}"
        assert mcp.unavailable == {}


def test_a_cache_lifetime_the_server_states_is_kept_without_notifications() -> None:
    clock = Clock()
    with MCPResources({"s": [*LOWLEVEL, "--ttl-ms", "30000"]}, clock=clock) as mcp:
        assert (mcp.read("s", "counter://reads").content or "").startswith("read 1")
        clock.now += 29
        assert (mcp.read("s", "counter://reads").content or "").startswith("read 1")
        clock.now += 2
        assert (mcp.read("s", "counter://reads").content or "").startswith("read 2")
        assert (mcp.stats.hits, mcp.stats.misses) == (1, 2)


# (command line, the resource that changes, a read that announces a change of it)
NOTIFYING = {
    "lowlevel": ([*LOWLEVEL, "--listen"], "counter://reads", "control://bump"),
    "highlevel": (HIGHLEVEL, "note://counter", "control://bump/5"),
}


@pytest.mark.parametrize("kind", NOTIFYING)
def test_a_change_notification_from_either_sdk_server_drops_the_cached_copy(kind: str) -> None:
    command, counter, bump = NOTIFYING[kind]
    changes = Changes()
    with MCPResources({"s": command}, on_change=changes) as mcp:
        first = mcp.read("s", counter)
        assert mcp.read("s", counter) == first  # cached, and watched
        assert mcp.read("s", bump).status == "resolved"
        assert changes.wait_for("s", counter)
        assert mcp.stats.invalidated == 1
        again = mcp.read("s", counter)
        assert again.status == "resolved"
        assert again.content != first.content


def test_templates_are_listed_beside_resources() -> None:
    servers = {"low": LOWLEVEL, "high": [*HIGHLEVEL, "--no-listen"], "plain": [*LOWLEVEL, "--no-templates"]}
    with MCPResources(servers) as mcp:
        assert mcp.templates("low") == [
            TemplateInfo(
                server_name="low",
                uri_template="greeting://{name}",
                name="greeting",
                mime_type="text/plain",
                description="A greeting.",
            )
        ]
        high = {t.uri_template: t for t in mcp.templates("high")}
        assert high["greeting://{name}"].description == "A greeting for the named subject."
        assert high["greeting://{name}"].mime_type == "text/plain"
        assert mcp.templates("plain") == []  # no resources/templates/list handler: no templates
        assert [t.server_name for t in mcp.templates()] == ["low", "high", "high"]
        # a template is not a resource; a uri made from it is read like one
        assert all("{" not in r.uri for r in mcp.list())
        assert mcp.read("low", "greeting://ada").content == "Hello, ada!"
        assert mcp.read("high", "greeting://ada").content == "Hello, ada!"
        with pytest.raises(ResourceError, match=r"^no MCP server named 'nobody'$"):
            mcp.templates("nobody")


def test_resources_are_listed_with_their_names_and_titles() -> None:
    with MCPResources({"low": LOWLEVEL}) as mcp:
        config = next(r for r in mcp.list("low") if r.uri == "config://app")
        assert (config.name, config.title, config.mime_type) == ("app_config", "App config", "application/json")


@pytest.mark.parametrize(
    ("command", "uri", "data"),
    [
        (LOWLEVEL, "blob://pixel", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"),
        ([*HIGHLEVEL, "--no-listen"], "note://logo", b"\x89PNG\r\n\x1a\n" + bytes(range(8))),
    ],
)
def test_a_binary_resource_comes_back_as_base64(command: list[str], uri: str, data: bytes) -> None:
    with MCPResources({"s": command}) as mcp:
        block = mcp.read("s", uri)
        assert (block.status, block.content, block.mime_type) == ("resolved", None, "image/png")
        assert base64.b64decode(block.blob or "") == data


def test_what_a_failing_resource_says_is_the_servers_choice() -> None:
    """Newcomer finding 32: 'Error reading resource notes://boom' is the SDK's doing. ``MCPServer``
    sends the message of a ``ResourceError`` the resource raises, and only the uri for any other
    exception (``UnexpectedResourceError``: the text may hold secrets); msgwire passes on what
    arrives."""
    with MCPResources({"s": [*HIGHLEVEL, "--no-listen"]}) as mcp:
        assert mcp.read("s", "note://down").error == "server 's' could not read 'note://down': the database is down"
        boom = mcp.read("s", "note://boom").error or ""
        assert boom == "server 's' could not read 'note://boom': Error reading resource note://boom"
        assert "hunter2" not in boom


def test_a_command_string_is_split_as_a_shell_would(tmp_path: Path) -> None:
    spaced = tmp_path / "my servers" / "server.py"
    spaced.parent.mkdir()
    shutil.copy(SERVERS / "mcp_lowlevel_server.py", spaced)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(spaced))} --ttl-ms 5000"
    with MCPResources({"s": command}) as mcp:
        assert mcp.read("s", "config://app").content == '{"feature": true}'


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("ws://127.0.0.1:9/mcp", "MCP server 's': 'ws://127.0.0.1:9/mcp' is not an http(s) URL; a stdio server"),
        ("python 'server.py", "MCP server 's': the command line \"python 'server.py\" cannot be split"),
        ("  ", "MCP server 's': the command line is empty"),
        ([], "MCP server 's': the command line is empty"),
    ],
)
def test_a_server_that_is_neither_a_command_nor_a_url_is_refused(spec: str | list[str], error: str) -> None:
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(").replace(")", r"\)")):
        MCPResources({"s": spec})


def test_a_url_is_never_run_as_a_command() -> None:
    with MCPResources({"s": "HTTP://127.0.0.1:9/mcp"}, connect_timeout=10) as mcp:  # the discard port: refused
        assert mcp.unavailable["s"].startswith("could not connect: ConnectError")
