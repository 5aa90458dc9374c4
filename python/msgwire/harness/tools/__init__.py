"""Tools: declaration (``@tool``, ``ToolRegistry``), approval (``ApprovalPolicy``, an approver,
``Approve`` / ``Deny``) and concurrent execution (``ToolRunner``) with one result per call.

This package knows nothing of providers, stores or resources (``agent.py`` composes them); it
records into a conversation through the small ``Recorder`` protocol (``Conversation`` is one).
"""

from __future__ import annotations

from .approval import (
    ApprovalRequest,
    Approvals,
    Approve,
    Approver,
    Decision,
    DecisionRecord,
    Deny,
    Recorder,
    decide,
    fingerprint,
)
from .policy import ApprovalPolicy, check_policy
from .registry import BaseTool, ExecutorTool, FunctionTool, ToolContext, ToolExecutor, ToolOptions, ToolRegistry, tool
from .results import FailureText, ToolFailure, ToolOutput
from .run import ToolRunner

__all__ = [
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approvals",
    "Approve",
    "Approver",
    "BaseTool",
    "Decision",
    "DecisionRecord",
    "Deny",
    "ExecutorTool",
    "FailureText",
    "FunctionTool",
    "Recorder",
    "ToolContext",
    "ToolExecutor",
    "ToolFailure",
    "ToolOptions",
    "ToolOutput",
    "ToolRegistry",
    "ToolRunner",
    "check_policy",
    "decide",
    "fingerprint",
    "tool",
]
