"""openai-agents runs for the session tests and benches: its own ``Runner`` and its own test
model (``agents.testing.ScriptedModel``) over several turns, the model's outputs the items real
Responses streams returned (``tests/fixtures/realworld/openai-responses``, provenance in
``SOURCES.md``: reasoning, parallel function calls, a web search with citations, text with
``logprobs`` and ``phase``), plus a file search, a computer call the Runner carries out on a
small ``AsyncComputer``, and a handoff to a second agent.

``run_turns(session)`` runs every turn against any ``Session`` and returns what each model call
was given and each turn's final output, so two sessions can be compared on the same run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import Agent, ComputerTool, RunConfig, Runner, function_tool
from agents.computer import AsyncComputer, Button
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message, function_call
from hypothesis import strategies as st
from openai.types.responses import ResponseOutputItem
from pydantic import TypeAdapter

from tests._support.strategies import json_objects, json_values, texts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "realworld" / "openai-responses"
RUN_CONFIG = RunConfig(tracing_disabled=True)
_output_item = TypeAdapter(ResponseOutputItem)


def recorded(name: str) -> list[dict[str, Any]]:
    """The output items of a recorded Responses stream (its ``response.output_item.done`` events)."""
    items = []
    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except json.JSONDecodeError:
            continue  # a [DONE] sentinel
        if event.get("type") == "response.output_item.done":
            items.append(event["item"])
    return items


def outputs(*items: dict[str, Any]) -> list[Any]:
    """Items as the SDK gives them to openai-agents: its own output item types."""
    return [_output_item.validate_python(item) for item in items]


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function_tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


@function_tool
def weather(location: str) -> str:
    """The weather at a place."""
    return f"40 C in {location}"


class Screen(AsyncComputer):
    """A browser that clicks nowhere and always shows the same tiny PNG."""

    @property
    def environment(self) -> Any:
        return "browser"

    @property
    def dimensions(self) -> tuple[int, int]:
        return (1024, 768)

    async def screenshot(self) -> str:
        return "iVBORw0KGgo="

    async def click(self, x: int, y: int, button: Button) -> None:
        return None

    async def double_click(self, x: int, y: int) -> None:
        return None

    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        return None

    async def type(self, text: str) -> None:
        return None

    async def wait(self) -> None:
        return None

    async def move(self, x: int, y: int) -> None:
        return None

    async def keypress(self, keys: list[str]) -> None:
        return None

    async def drag(self, path: list[tuple[int, int]]) -> None:
        return None


FILE_SEARCH = {
    "id": "fs_1",
    "type": "file_search_call",
    "status": "completed",
    "queries": ["milk"],
    "results": [{"file_id": "file_1", "filename": "notes.txt", "score": 0.5, "text": "buy milk", "attributes": {}}],
}
COMPUTER_CALL = {
    "id": "cu_1",
    "type": "computer_call",
    "call_id": "call_cu_1",
    "status": "completed",
    "action": {"type": "click", "x": 10, "y": 20, "button": "left"},
    "pending_safety_checks": [],
}


def turns(*, streamed: bool = False) -> list[tuple[str, list[list[Any]]]]:
    """Each turn: the user's text and the model's outputs, one list per model call (``streamed``:
    the turns whose outputs ``ScriptedModel`` streams by itself: messages, reasoning and
    function calls, not the built-in tools' items)."""
    calls = recorded("openai-gpt-5-reasoning-parallel-function-calls.sse")  # reasoning, add, multiply
    weather_calls = recorded("azure-o4-mini-function-call.sse")  # reasoning, weather
    every = [
        ("What are 2 + 3 and 2 * 3?", [outputs(*calls), outputs(*recorded("openai-gpt-5-long-reasoning-summary.sse"))]),
        (
            "And the weather in Florence?",
            [outputs(*weather_calls), outputs(*recorded("openai-gpt-5-reasoning-summary-text.sse"))],
        ),
        ("How many people live in Tokyo?", [outputs(*recorded("openai-web-search-call.sse"))]),
        ("What do my notes say?", [[*outputs(FILE_SEARCH), assistant_message("Buy milk.", item_id="msg_fs")]]),
        ("Click the button.", [outputs(COMPUTER_CALL), outputs(*recorded("openai-basic-text-2026.sse"))]),
        ("Ask the specialist.", [[function_call("transfer_to_specialist", {}, call_id="call_handoff")]]),
    ]
    builtin = ("How many", "What do my notes", "Click")
    return [turn for turn in every if not (streamed and turn[0].startswith(builtin))]


CALL = {"arguments": '{"a":2,"b":3}', "call_id": "call_1", "name": "add", "type": "function_call", "id": "fc_1"}

ITEM_KINDS: list[dict[str, Any]] = [  # each kind of item openai-agents may keep, and odd ones
    {"role": "user", "content": "plain"},
    {"type": "message", "role": "user", "content": "typed, string"},
    {"role": "user", "content": [{"type": "input_text", "text": "parts"}]},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "high"},
            {"type": "input_file", "file_id": "file_1"},
        ],
    },
    {"role": "user", "content": []},
    {"role": "system", "content": "Answer in French."},
    {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
    {"role": "assistant", "content": "easy"},
    {"type": "message", "role": "assistant", "content": "easy, typed"},
    {
        "id": "__fake_id__",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "a", "annotations": []}],
    },
    {
        "id": "__fake_id__",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "b", "annotations": []}],
    },
    {
        "id": "msg_r",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    },
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "think"}],
        "encrypted_content": "E",
    },
    {"id": "rs_2", "type": "reasoning", "summary": [], "content": [], "status": None},
    CALL,
    {**CALL, "id": "fc_2", "call_id": "call_2", "status": "completed"},
    {"call_id": "call_1", "output": "5", "type": "function_call_output"},
    {
        "call_id": "call_2",
        "type": "function_call_output",
        "output": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA=="},
        ],
    },
    {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "tokyo"}},
    {"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["q"], "results": None},
    {
        "id": "cu_1",
        "type": "computer_call",
        "call_id": "call_cu",
        "status": "completed",
        "action": {"type": "screenshot"},
        "pending_safety_checks": [],
    },
    {
        "call_id": "call_cu",
        "type": "computer_call_output",
        "acknowledged_safety_checks": None,
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA=="},
    },
    {
        "id": "lsh_1",
        "type": "local_shell_call",
        "call_id": "call_sh",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls"], "env": {}},
    },
    {"id": "lsh_1", "type": "local_shell_call_output", "output": "a.txt"},
    {"type": "custom_tool_call", "call_id": "call_ct", "name": "grammar", "input": "x = 1", "id": "ctc_1"},
    {"type": "custom_tool_call_output", "call_id": "call_ct", "output": "ok"},
    {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "s", "name": "t", "arguments": "{}"},
    {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    {"type": "item_reference", "id": "msg_old"},
    {"type": "a_future_item", "anything": {"nested": [1, 1.0, True, None, "x"]}},
    {"role": "critic", "content": "a role no API has"},
    {"type": "function_call_output", "output": "a result without its call_id"},
]


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    """A kind of item with some of its values changed and fields added, or any JSON object."""
    base = dict(draw(st.sampled_from(ITEM_KINDS)))
    for key in draw(st.lists(st.sampled_from(sorted(base)), unique=True, max_size=3)):
        if key not in ("type", "role"):
            base[key] = draw(texts) if isinstance(base[key], str) else draw(texts | json_values)
    extra = {k: v for k, v in draw(json_objects).items() if k not in ("type", "role")}
    return draw(st.sampled_from([{**base, **extra}, base, extra]))


@dataclass
class Run:
    inputs: list[Any]
    """What each model call was given (the main agent's, then the specialist's)."""
    final_outputs: list[Any]


async def run_turns(session: Session, *, streamed: bool = False) -> Run:
    """Every turn of ``turns()`` through ``Runner`` with ``session``."""
    script = turns(streamed=streamed)
    steps = [step for _, turn in script for step in turn]
    model = ScriptedModel(steps)
    specialist_model = ScriptedModel([[assistant_message("Specialist here.", item_id="msg_specialist")]])
    specialist = Agent(name="specialist", model=specialist_model)
    agent = Agent(
        name="assistant",
        instructions="Be brief.",
        model=model,
        tools=[add, multiply, weather, ComputerTool(Screen())],
        handoffs=[specialist],
    )
    finals = []
    for text, _ in script:
        if streamed:
            result = Runner.run_streamed(agent, text, session=session, run_config=RUN_CONFIG)
            async for _event in result.stream_events():
                pass
            finals.append(result.final_output)
        else:
            finals.append((await Runner.run(agent, text, session=session, run_config=RUN_CONFIG)).final_output)
    model.assert_complete()
    specialist_model.assert_complete()
    return Run(inputs=[c.input for c in (*model.calls, *specialist_model.calls)], final_outputs=finals)
