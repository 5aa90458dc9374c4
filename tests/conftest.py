"""Hypothesis profiles: `make test` is deterministic, `make test-deep` searches at random.

`ci` (the default) derandomizes every property test, so a clean clone passes or fails the same
way on every run; `deep` (MSGWIRE_HYPOTHESIS=deep, set by `make test-deep`) draws fresh random
examples, scaled up by MSGWIRE_HYPOTHESIS_SCALE (see `examples` in tests/_support/strategies.py),
and keeps failing examples in `.hypothesis/` so the next run replays them first.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("deep", derandomize=False, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("MSGWIRE_HYPOTHESIS", "ci"))


@pytest.fixture(autouse=True, scope="module")
def _collect_garbage_per_module() -> Iterator[None]:
    """Collect garbage at the end of each module, so that an unclosed resource (a socket, an
    event loop) warns in the module that leaked it, not in whichever test the collector happens
    to run during (filterwarnings=error turns the warning into that test's failure)."""
    yield
    gc.collect()
