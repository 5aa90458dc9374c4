"""Fixtures of the harness tests: ``scripted``, a scripted model server on 127.0.0.1 for one test
(``msgwire.testing``), checked for failures of its own when the test ends; a throwaway
PostgreSQL server for the session (``pgserver``) and one per module for the tests that stop it
(``own_pgserver``); and ``store_url``: a fresh SQLite file or a
fresh PostgreSQL schema, so that one test runs against both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from msgwire.testing import ScriptedServer
from tests._support.postgres import PostgresServer, bindir, running


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
    assert server.errors == []


@pytest.fixture(scope="session")
def pgserver() -> Iterator[PostgresServer]:
    if bindir() is None:
        pytest.skip("the PostgreSQL server is not installed (Debian package postgresql: make system)")
    with running() as server:
        yield server


@pytest.fixture(scope="module")
def own_pgserver() -> Iterator[PostgresServer]:
    """A server of the module's own, for tests that stop and restart it (the session's is shared)."""
    if bindir() is None:
        pytest.skip("the PostgreSQL server is not installed (Debian package postgresql: make system)")
    with running() as server:
        yield server


@pytest.fixture
def postgres_url(pgserver: PostgresServer) -> str:
    """A connection string to a fresh, empty schema of the session's server."""
    return pgserver.schema_url()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'msgwire.db'}"
    server: PostgresServer = request.getfixturevalue("pgserver")
    return server.schema_url()
