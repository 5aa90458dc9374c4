"""The demo's agent session (section 8 of ``msgwire demo``): the agent loop against the local
scripted model server, on a copy of the bundled workspace (``examples/workspace``).

What it shows: what goes into the context (an ``@file:lines`` mention, an image read by OCR, or
by the model's vision when the ``ocr`` extra is missing, an MCP resource when the ``mcp`` extra is
installed), the model asking for two tools at once, one approved and run, one denied by the user,
both results sent back, the model's answer, then the audit trail as a timeline with its hash
chain verified, and the same conversation replayed on another provider with the recorded tool
results. No network: the model is ``msgwire.testing.ScriptedServer`` on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..types import ImageBlock, MCPResourceBlock, PathSource, TextBlock, UserMessage
from .render import ERROR, TOOL

__all__ = ["show_agent"]

PROMPT = "Check @notes.md:3-4 and the screenshot, read config.toml, then delete notes.md: it is done."
ANSWER = (
    "config.toml sets port 8080, as the notes, the screenshot and the readme say. "
    "I did not delete notes.md: you refused, and it holds the release checklist."
)
VISION_ANSWER = "A terminal: `deploy --port 8080`, then `listening on 0.0.0.0:8080`."


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def show_agent(out: Console, examples: Path) -> None:
    if not _installed("httpx"):
        out.print(Text("  skipped: the providers need httpx (pip install 'msgwire[harness]')", "yellow"))
        return
    with tempfile.TemporaryDirectory(prefix="msgwire-demo-") as folder:
        workspace = Path(folder) / "workspace"
        shutil.copytree(examples / "workspace", workspace)
        _session(out, examples, workspace)


def _session(out: Console, examples: Path, workspace: Path) -> None:
    from ..harness import Agent, ContextPipeline, Deny, ProviderVision, StepStart, replay, tool
    from ..harness.providers import Anthropic, OpenAI
    from ..harness.resources import FileResolver, ImageRecognizer
    from ..testing import ScriptedServer, reply, tool_call
    from .chat import show_event
    from .timeline import show
    from .workspace import workspace_tools

    ocr = _installed("tesserocr") and _installed("PIL")
    mcp_ready = _installed("mcp")
    calls = [tool_call("read_file", {"path": "config.toml"}), tool_call("delete_file", {"path": "notes.md"})]
    script = [reply([TextBlock(text="Reading config.toml; deleting notes.md."), *calls]), reply(ANSWER)]
    if not ocr:
        script.insert(0, reply(VISION_ANSWER))  # the image's vision call comes first
    registry = workspace_tools(workspace, policy="auto")

    @tool(policy="ask")
    def delete_file(path: str) -> str:
        """Delete a file of the workspace."""
        (workspace / path).unlink()
        return f"{path} deleted"

    registry.add(delete_file)

    def user(requests: list[Any]) -> dict[str, Any]:
        """The demo's user: says no to deleting the notes."""
        for request in requests:
            out.print(Text(f"? {request.call.name} wants {request.call.arguments}: the user says no", TOOL))
        return {r.call.id: Deny(reason="keep the notes", by="user") for r in requests}

    with ScriptedServer(script) as server, OpenAI(base_url=server.url, api_key="demo", model="gpt-4o") as model:
        files = FileResolver(workspace)
        vision = ProviderVision(model, model="gpt-4o", vision=not ocr)
        images = ImageRecognizer(vision=vision, files=files)
        mcp = _mcp(out, examples) if mcp_ready else None
        try:
            resolvers = [files, images] if mcp is None else [files, images, mcp]
            with Agent(
                model, tools=registry, approver=user, context=ContextPipeline(resolvers), max_tokens=400
            ) as agent:
                out.print(f"  model: the scripted server at {server.url}, speaking OpenAI Chat Completions")
                if mcp is not None:
                    block = MCPResourceBlock(server_name="docs", resource_uri="docs://readme")
                    agent.conversation.add(mcp.context(block))
                    out.print("  📎 MCP resource docs://readme attached as context (a real MCP server over stdio)")
                else:
                    out.print(Text("  MCP resource skipped: pip install 'msgwire[mcp]' to attach one", "yellow"))
                how = "OCR (Tesseract)" if ocr else "the model's vision (OCR skipped: pip install 'msgwire[ocr]')"
                out.print(Text(f"  🖼 screenshot.png attached, read by {how}"))
                out.print(Text(f"you> {PROMPT}", "bold"))
                prompt = UserMessage(
                    content=[TextBlock(text=PROMPT), ImageBlock(source=PathSource(path="screenshot.png"))]
                )
                for event in agent.stream(prompt):
                    show_event(out, event)
                    if isinstance(event, StepStart) and event.step == 0:
                        _resolved(out, agent)
                out.print(f"  notes.md still there: {(workspace / 'notes.md').exists()}")
                out.print()
                show(agent.conversation, out)
                _replayed(out, agent, server, registry, calls, replay, Anthropic, reply)
        finally:
            if mcp is not None:
                mcp.close()
            images.close()


def _mcp(out: Console, examples: Path) -> Any:
    from ..harness.resources import MCPResources

    mcp = MCPResources({"docs": [sys.executable, str(examples / "mcp_docs_server.py")]})
    try:
        mcp.open()
    except Exception as failure:  # an SDK that cannot start the server: say so, go on
        out.print(Text(f"  MCP server failed to start: {failure}", ERROR))
        return None
    return mcp


def _resolved(out: Console, agent: Any) -> None:
    message = agent.conversation.messages()[-1]
    for block in message.content:
        if block.type == "file_reference":
            out.print(Text(f"  📎 @{block.path}:{block.start_line}-{block.end_line}: {block.status}", "dim"))
        elif block.type == "image":
            text = (block.recognized_text or block.vision_analysis or "").replace("\n", " / ")
            out.print(Text(f"  🖼 read by {block.mode_used}: {text!r} ({block.status})", "dim"))


def _replayed(
    out: Console, agent: Any, server: Any, registry: Any, calls: Any, replay: Any, cls: Any, reply: Any
) -> None:
    """The same conversation on Anthropic (the same scripted replies): the recorded results reused."""
    server.add(reply([TextBlock(text="Reading config.toml; deleting notes.md."), *calls]), reply(ANSWER))
    with cls(base_url=server.url, api_key="demo", model="claude-sonnet-4-5") as target:
        _, report = replay(agent.conversation, target, tools=registry, max_tokens=400)
    reused = sum(t.reused for t in report.turns)
    changed = len(report.changed)
    kinds = sorted({f"{loss.kind} ({loss.action})" for loss in report.losses.entries})
    line = (
        f"  replayed on {report.dialect} ({report.model}): {len(report.turns)} turn(s), {changed} changed, "
        f"{reused} recorded result(s) reused, no tool ran again; lossy for its dialect: "
        f"{', '.join(kinds) or 'nothing'}"
    )
    out.print(Text(line))
