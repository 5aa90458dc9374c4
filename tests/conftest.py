"""Hypothesis profiles: `make test` is deterministic, `make test-deep` searches at random.

`ci` (the default) derandomizes every property test, so a clean clone passes or fails the same
way on every run; `deep` (MSGWIRE_HYPOTHESIS=deep, set by `make test-deep`) draws fresh random
examples, scaled up by MSGWIRE_HYPOTHESIS_SCALE (see `examples` in tests/_support/strategies.py),
and keeps failing examples in `.hypothesis/` so the next run replays them first.

The stores' fixtures, for every test that runs against both (the harness's, the interop's): a
throwaway PostgreSQL server for the session (``pgserver``), started only when a test asks for
it, and ``store_url``: a fresh SQLite file or a fresh PostgreSQL schema.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests._support.postgres import PostgresServer, bindir, running

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


@pytest.fixture(scope="session")
def pgserver() -> Iterator[PostgresServer]:
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
