"""Fixtures of the harness tests: ``scripted``, a scripted model server on 127.0.0.1 for one test
(``msgwire.testing``), checked for failures of its own when the test ends, and
``own_pgserver``, a PostgreSQL server per module for the tests that stop it. The stores'
fixtures (``pgserver``, ``postgres_url``, ``store_url``) are in tests/conftest.py: the interop
tests use them too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from msgwire.testing import ScriptedServer
from tests._support.postgres import PostgresServer, bindir, running


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
    assert server.errors == []


@pytest.fixture(scope="module")
def own_pgserver() -> Iterator[PostgresServer]:
    """A server of the module's own, for tests that stop and restart it (the session's is shared)."""
    if bindir() is None:
        pytest.skip("the PostgreSQL server is not installed (Debian package postgresql: make system)")
    with running() as server:
        yield server
