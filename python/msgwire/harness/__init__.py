"""The agent harness, on top of the wire layer: conversations with an audit trail, tools with
approval and concurrent execution, providers and the agent loop, stores, and what goes into a
context (file references, images, MCP resources).

Re-exported here: ``Conversation`` and its ``Entry``; the tools (``tool``, ``ToolRegistry``,
``ToolRunner``, approvals); ``Agent`` (``agent.py``), its ``ContextPipeline`` (``pipeline.py``),
its events (``events.py``); ``replay`` / ``areplay`` (``replay.py``, a client of the agent);
``ProviderVision`` (``vision.py``). The providers, resources and stores are imported from their sub-packages
(``msgwire.harness.providers`` needs httpx; ``import msgwire.harness`` does not).

Import rules (checked by ``tests/test_layout.py``): the wire layer never imports this package;
this package uses the wire API and never ``msgwire._core``; its parts (``tools``, ``providers``,
``store``, ``resources``) do not import each other (``agent.py`` composes them); an optional
library is imported only in the one module that needs it.
"""

from __future__ import annotations

from .agent import AfterStep, Agent, BeforeStep, Emit, Prompt, ToolStep
from .audit import DECISIONS, Entry, Verification
from .conversation import Conversation, EntryLedger
from .events import (
    AgentEvent,
    ApprovalRequested,
    LoopEvent,
    RunEnd,
    StepEnd,
    StepStart,
    StreamFailed,
    ToolDecided,
    ToolFinished,
    ToolStarted,
)
from .pipeline import BuildContext, ContextPipeline
from .replay import RecordedResults, ReplayOptions, ReplayReport, TurnReplay, areplay, replay
from .tools import (
    ApprovalPolicy,
    ApprovalRequest,
    Approvals,
    Approve,
    Approver,
    Deny,
    ToolContext,
    ToolFailure,
    ToolOutput,
    ToolRegistry,
    ToolRunner,
    tool,
)
from .vision import ProviderVision

__all__ = [
    "DECISIONS",
    "AfterStep",
    "Agent",
    "AgentEvent",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approvals",
    "Approve",
    "Approver",
    "BeforeStep",
    "BuildContext",
    "ContextPipeline",
    "Conversation",
    "Deny",
    "Emit",
    "Entry",
    "EntryLedger",
    "LoopEvent",
    "Prompt",
    "ProviderVision",
    "RecordedResults",
    "ReplayOptions",
    "ReplayReport",
    "RunEnd",
    "StepEnd",
    "StepStart",
    "StreamFailed",
    "ToolContext",
    "ToolDecided",
    "ToolFailure",
    "ToolFinished",
    "ToolOutput",
    "ToolRegistry",
    "ToolRunner",
    "ToolStarted",
    "ToolStep",
    "TurnReplay",
    "Verification",
    "areplay",
    "replay",
    "tool",
]
