"""How big the fault and many-process tests run: scaled down in `make test`, full in `make
test-deep` (which sets MSGWIRE_HYPOTHESIS=deep). One switch for every such test, so that a
deep run is a deep run everywhere."""

from __future__ import annotations

import os

__all__ = ["DEEP", "scaled"]

DEEP = os.environ.get("MSGWIRE_HYPOTHESIS") == "deep"


def scaled(quick: int, deep: int) -> int:
    """``deep`` under `make test-deep`, else ``quick``."""
    return deep if DEEP else quick
