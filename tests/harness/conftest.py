"""``scripted``: a scripted model server on 127.0.0.1 for one test (``msgwire.harness.scripted``),
checked for failures of its own when the test ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from msgwire.harness.scripted import ScriptedServer


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
    assert server.errors == []
