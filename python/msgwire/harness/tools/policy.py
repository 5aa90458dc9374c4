"""``ApprovalPolicy``: whether a tool's calls run without asking, are asked about, or are refused
(``approval.py`` applies it; ``registry.py`` keeps one per tool)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Union

from msgwire import ToolCallBlock

__all__ = ["ApprovalPolicy", "PolicyName", "check_policy"]

PolicyName = Literal["auto", "ask", "deny"]
ApprovalPolicy = Union[PolicyName, Callable[[ToolCallBlock], Any]]
"""``"auto"``, ``"ask"``, ``"deny"``, or ``f(call) -> "auto" | "ask" | "deny" | Approve | Deny``
(sync or async)."""


def check_policy(policy: Any) -> ApprovalPolicy:
    """``policy`` when it is one (``ValueError`` otherwise)."""
    if policy in ("auto", "ask", "deny") or callable(policy):
        return policy  # type: ignore[no-any-return]
    raise ValueError(f"an approval policy is 'auto', 'ask', 'deny' or a function of the call, not {policy!r}")
