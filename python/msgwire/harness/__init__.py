"""The agent harness, on top of the wire layer: conversations with an audit trail, tools with
approval and concurrent execution, providers and the agent loop, stores, and what goes into a
context (file references, images, MCP resources).

Re-exported here: ``Conversation`` and its ``Entry``; the tools (``tool``, ``ToolRegistry``,
``ToolRunner``, approvals); ``Agent`` (``agent.py``), its events (``events.py``) and ``replay``
(``replay.py``). The providers, resources and stores are imported from their sub-packages
(``msgwire.harness.providers`` needs httpx; ``import msgwire.harness`` does not).

Import rules (checked by ``tests/test_layout.py``): the wire layer never imports this package;
this package uses the wire API and never ``msgwire._core``; its parts (``tools``, ``providers``,
``store``, ``resources``) do not import each other (``agent.py`` composes them); an optional
library is imported only in the one module that needs it.
"""

from __future__ import annotations

from .agent import Agent, BuildContext, Prompt, ProviderVision
from .audit import Entry, Parent, Verification
from .conversation import DECISIONS, Conversation, EntrySink
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
from .replay import ReplayReport, TurnReplay, areplay, replay
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

__all__ = [
    "DECISIONS",
    "Agent",
    "AgentEvent",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approvals",
    "Approve",
    "Approver",
    "BuildContext",
    "Conversation",
    "Deny",
    "Entry",
    "EntrySink",
    "LoopEvent",
    "Parent",
    "Prompt",
    "ProviderVision",
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
    "TurnReplay",
    "Verification",
    "areplay",
    "replay",
    "tool",
]
