"""The ``server`` fixture: a scripted model server per test; when the test ends, every request
it received is checked against the SDK param types (``providers_support.check_received``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from msgwire.harness.providers import HTTPProvider
from msgwire.testing import ScriptedServer
from tests._support.providers import check_received, provider


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted
    assert scripted.errors == []
    for received in scripted.requests:
        check_received(received)


@pytest.fixture
def connect(server: ScriptedServer) -> Iterator[Callable[..., HTTPProvider]]:
    """``connect(dialect, **options)``: a provider pointed at the test's server, closed when the
    test ends."""
    made: list[HTTPProvider] = []

    def make(dialect: str, **options: Any) -> HTTPProvider:
        made.append(provider(dialect, server, **options))
        return made[-1]

    yield make
    for model in made:
        model.close()
