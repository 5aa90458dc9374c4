"""Fixtures of the harness tests: ``scripted``, a scripted model server on 127.0.0.1 for one test
(``msgwire.testing``), checked for failures of its own when the test ends. The stores'
fixtures (``pgserver``, ``postgres_url``, ``store_url``) are in tests/conftest.py: the interop
tests use them too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from msgwire.testing import ScriptedServer


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
    assert server.errors == []
