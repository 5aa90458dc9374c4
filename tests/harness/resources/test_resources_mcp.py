"""MCP resources against a real MCP server (mcp_resource_server.py, the SDK's ``MCPServer``) over
stdio: reading, the cache, change notifications. The SDK's low-level server and the faults:
test_resources_mcp_servers.py and test_resources_mcp_faults.py."""

from __future__ import annotations

import base64
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from msgwire import formats
from msgwire.harness.resources.mcp import Freshness, MCPResources
from tests._support.mcp_servers import Clock

SERVER = [sys.executable, str(Path(__file__).with_name("mcp_resource_server.py"))]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def changes() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def mcp(clock: Clock, changes: list[tuple[str, str]]) -> Iterator[MCPResources]:
    freshness = Freshness(by_uri={"control://*": 0}, by_mime={"application/json": 60})
    seen = threading.Event()

    def changed(server: str, uri: str) -> None:
        changes.append((server, uri))
        seen.set()

    with MCPResources({"docs": SERVER, "other": SERVER}, freshness=freshness, clock=clock, on_change=changed) as m:
        m.changed = seen  # type: ignore[attr-defined]
        yield m


def test_list_and_read_text_json_and_binary(mcp: MCPResources, clock: Clock) -> None:
    listed = mcp.list("docs")
    assert [(r.uri, r.mime_type) for r in listed] == [
        ("docs://readme", "text/markdown"),
        ("data://config.json", "application/json"),
        ("bin://logo.png", "image/png"),
        ("state://counter", "text/plain"),
        ("fail://boom", "text/plain"),
    ]
    assert {r.server_name for r in mcp.list()} == {"docs", "other"}
    readme = mcp.read("docs", "docs://readme")
    assert (readme.status, readme.content, readme.mime_type) == (
        "resolved",
        "# Readme\nThe service answers on port 8080.",
        "text/markdown",
    )
    assert readme.retrieved_at is not None
    assert readme.retrieved_at.timestamp() == clock.now
    config = mcp.read("docs", "data://config.json")
    assert config.content is not None
    assert '"retries": 3' in config.content
    logo = mcp.read("docs", "bin://logo.png")
    assert (logo.content, logo.mime_type) == (None, "image/png")
    assert base64.b64decode(logo.blob or "") == b"\x89PNG\r\n\x1a\n" + bytes(range(8))


def test_failures_are_error_blocks(mcp: MCPResources) -> None:
    boom = mcp.read("docs", "fail://boom")
    assert (boom.status, boom.error) == (
        "error",
        "server 'docs' could not read 'fail://boom': Error reading resource fail://boom",
    )
    unknown = mcp.read("docs", "nope://x")
    assert unknown.error == "server 'docs' could not read 'nope://x': Unknown resource: nope://x"
    assert mcp.read("nobody", "docs://readme").error == "no MCP server named 'nobody'"


def test_a_second_read_uses_the_cache_until_stale(mcp: MCPResources, clock: Clock) -> None:
    first = mcp.read("docs", "state://counter")
    assert first.content == "read 1"
    again = mcp.read("docs", "state://counter")
    assert again == first  # served from the cache: same content, same retrieved_at
    assert (mcp.stats.hits, mcp.stats.misses) == (1, 1)
    clock.now += 3599
    assert mcp.read("docs", "state://counter").content == "read 1"
    clock.now += 2  # past the default hour
    fresh = mcp.read("docs", "state://counter")
    assert fresh.content == "read 2"
    assert fresh.retrieved_at is not None
    assert fresh.retrieved_at > (first.retrieved_at or fresh.retrieved_at)
    assert mcp.read("docs", "state://counter", refresh=True).content == "read 3"
    # the other server is another process with its own state and its own cache entries
    assert mcp.read("other", "state://counter").content == "read 1"


def test_freshness_per_resource_type(mcp: MCPResources, clock: Clock) -> None:
    mcp.read("docs", "data://config.json")
    clock.now += 59
    mcp.read("docs", "data://config.json")
    assert mcp.stats.hits == 1
    clock.now += 2  # application/json is fresh for 60 s here
    mcp.read("docs", "data://config.json")
    assert (mcp.stats.hits, mcp.stats.misses) == (1, 2)
    assert Freshness().seconds("x://y", None) == 3600
    assert Freshness(by_mime={"text/*": 5}).seconds("x://y", "text/plain") == 5
    assert Freshness().seconds("x://y", None, server_ttl_ms=10_000) == 10  # a shorter server TTL wins
    assert Freshness(default=5).seconds("x://y", None, server_ttl_ms=10_000) == 5


def test_a_change_notification_invalidates(mcp: MCPResources, changes: list[tuple[str, str]]) -> None:
    assert mcp.read("docs", "state://counter").content == "read 1"
    assert mcp.read("docs", "state://counter").content == "read 1"  # cached
    assert mcp.read("docs", "control://bump/100").content == "bumped by 100"  # the server notifies
    assert mcp.changed.wait(10)  # type: ignore[attr-defined]
    assert changes == [("docs", "state://counter")]
    assert mcp.stats.invalidated == 1
    assert mcp.read("docs", "state://counter").content == "read 102"


def test_resources_enter_the_conversation_as_context(mcp: MCPResources) -> None:
    from msgwire import MCPResourceBlock, user

    pending = MCPResourceBlock(server_name="docs", resource_uri="docs://readme")
    message = mcp.resolve_message(
        mcp.context(pending, MCPResourceBlock(server_name="docs", resource_uri="fail://boom"))
    )
    assert message.source == "context"  # type: ignore[union-attr]
    assert [b.status for b in message.content] == ["resolved", "error"]  # type: ignore[union-attr]
    assert mcp.resolve_message(message) is message  # nothing pending any more
    body = formats.to_request([message, user("What port?")], "anthropic")
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": '<mcp_resource server="docs" uri="docs://readme" mime_type="text/markdown">\n'
                    "# Readme\nThe service answers on port 8080.\n</mcp_resource>",
                },
                {
                    "type": "text",
                    "text": '<mcp_resource server="docs" uri="fail://boom" status="error" error="server '
                    "'docs' could not read 'fail://boom': Error reading resource fail://boom\"/>",
                },
                {"type": "text", "text": "What port?"},
            ],
        }
    ]
    assert mcp.last_used("docs", "docs://readme") is not None
    assert mcp.last_used("docs", "never://read") is None


def test_a_closed_manager_says_so() -> None:
    closed = MCPResources({"docs": SERVER})
    assert closed.read("docs", "docs://readme").error == (
        "server 'docs' could not read 'docs://readme': RuntimeError: MCPResources is not open "
        "(use it in a with block, or call open())"
    )
    assert closed.unavailable == {"docs": "MCPResources is not open"}
    with pytest.raises(RuntimeError, match=r"^MCPResources is not open"):
        closed.list()
    for _ in range(2):  # it opens again after a close, with new connections
        with closed:
            assert closed.read("docs", "docs://readme", refresh=True).status == "resolved"
            assert closed.unavailable == {}
