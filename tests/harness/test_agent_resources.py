"""The agent resolves what goes into a context before each request: an ``@file:lines`` mention in
a prompt (a real file under a workspace root), an image read by vision (the scripted model, through
``ProviderVision``), an MCP resource (a real MCP server over stdio); each change recorded
(``resources_resolved``), a token budget's prunings in the step's audit."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from msgwire import ImageBlock, MCPResourceBlock, PathSource, TextBlock, UserMessage
from msgwire.harness import Agent, ContextPipeline, ProviderVision
from msgwire.harness.resources import FileResolver, ImageRecognizer, MCPResources, TokenBudget
from msgwire.testing import ScriptedServer, reply
from tests._support.agents import connect
from tests._support.images import render

MCP_SERVER = [sys.executable, str(Path(__file__).parent / "resources" / "mcp_resource_server.py")]


def test_mentions_images_and_mcp_resources_are_resolved_before_the_request(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("import os\nPORT = 8080\nDEBUG = False\n")
    (tmp_path / "shot.png").write_bytes(render(["PORT 8080"]))
    scripted.add(reply("A screenshot reading PORT 8080."), reply("Port 8080, as app.py and the readme say."))
    files = FileResolver(tmp_path)
    with (
        connect("openai", scripted, model="gpt-4o") as provider,
        MCPResources({"docs": MCP_SERVER}) as mcp,
        contextlib.closing(ImageRecognizer(vision=ProviderVision(provider, model="gpt-4o"), files=files)) as images,
        Agent(provider, context=ContextPipeline([files, images, mcp]), max_tokens=300) as agent,
    ):
        agent.conversation.add(mcp.context(MCPResourceBlock(server_name="docs", resource_uri="docs://readme")))
        prompt = UserMessage(
            content=[
                TextBlock(text="Which port? See @app.py:2-3 and @missing.py and the screenshot."),
                ImageBlock(source=PathSource(path="shot.png")),
            ]
        )
        answer = agent.run(prompt)
    assert answer.text == "Port 8080, as app.py and the readme say."
    vision, main = scripted.wait(2)
    assert any(p.get("type") == "image_url" for p in vision.json()["messages"][0]["content"])
    sent = main.json()["messages"]
    assert sent[0]["content"].startswith('<mcp_resource server="docs" uri="docs://readme"')
    assert "The service answers on port 8080." in sent[0]["content"]
    parts = sent[1]["content"]
    texts = "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert '<file path="app.py" lines="2-3">\n2 | PORT = 8080\n3 | DEBUG = False\n</file>' in texts
    assert "missing.py" in texts  # the unresolved one says why
    assert any(p["type"] == "image_url" for p in parts)  # seen by vision: sent as an image
    resolved = [e for e in agent.conversation.entries if e.decision == "resources_resolved"]
    blocks = [b for e in resolved for b in e.audit["blocks"]]
    assert [(b["type"], b["status"]) for b in blocks] == [
        ("mcp_resource", "resolved"),
        ("image", "resolved"),  # the prompt's blocks, in order: the mentions follow the text
        ("file_reference", "resolved"),
        ("file_reference", "error"),
    ]
    image = next(b for b in agent.conversation.messages()[1].content if isinstance(b, ImageBlock))
    assert (image.mode_used, image.vision_analysis) == ("vision", "A screenshot reading PORT 8080.")
    assert agent.conversation.verify()


def test_a_token_budget_prunes_resources_from_what_is_sent(scripted: ScriptedServer) -> None:
    scripted.add(reply("Done."))
    big = MCPResourceBlock(
        server_name="docs", resource_uri="docs://big", content="x" * 4000, status="resolved", mime_type="text/plain"
    )
    budget = ContextPipeline(budget=TokenBudget(200))
    with connect("openai", scripted) as provider, Agent(provider, context=budget) as agent:
        agent.conversation.add(UserMessage(content=[big], source="context"))
        agent.run("Summarize.")
    sent = scripted.wait(1)[0].json()["messages"]
    assert "x" * 100 not in sent[0]["content"]
    step = agent.conversation.entries[-1]
    assert [p["resource_uri"] for p in step.audit["pruned"]] == ["docs://big"]
    stored = agent.conversation.messages()[0]
    assert stored.content[0] == big  # pruned from the request only: the conversation keeps it
