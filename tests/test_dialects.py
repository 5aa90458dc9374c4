"""Every dialect has each place a dialect needs (docs/design.md section 1b): the Python half of
what the Rust compiler checks of ``DialectName``'s matches.

A dialect named in the ``Dialect`` literal (python/msgwire/types.py) has: the Rust core's name
(``formats.DIALECTS`` is ``DialectName::ALL``), a provider class (``PROVIDERS``) and a
capabilities table, a route in ``msgwire.testing``'s server (a provider's request reaches it as
that dialect), recordings (streams the command's detection tells as that dialect, request
bodies, full request bodies, response bodies), and a fuzz target that ``make fuzz`` runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

import msgwire
from msgwire.cli.detect import sniff_stream
from msgwire.harness.providers import PROVIDERS
from msgwire.harness.providers import capabilities as capabilities_module
from msgwire.testing import ScriptedServer, reply
from tests._support.providers import provider

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
DIALECTS = get_args(msgwire.Dialect)


def _fuzz_targets() -> tuple[set[str], set[str]]:
    """The targets ``make fuzz`` runs (``FUZZ_TARGETS``), and the binaries fuzz/Cargo.toml declares."""
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(r"^FUZZ_TARGETS \?= (.+)$", makefile, re.MULTILINE)
    assert found is not None, "the Makefile sets FUZZ_TARGETS"
    declared = set(re.findall(r'^name = "(\w+)"', (ROOT / "fuzz" / "Cargo.toml").read_text(), re.MULTILINE))
    return set(found.group(1).split()), declared


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_has_its_places(dialect: str) -> None:
    assert dialect in msgwire.formats.DIALECTS, "the Rust core's DialectName"

    assert PROVIDERS[dialect].dialect == dialect, "harness/providers: a provider class in PROVIDERS"
    assert capabilities_module._TABLES.get(dialect), "harness/providers/capabilities.py: a table"

    with ScriptedServer() as server:  # testing/server.py routes the provider's request to it
        server.add(reply("routed"))
        model = provider(dialect, server)
        try:
            answer = model.complete(msgwire.Request(messages=[msgwire.user("hi")], max_tokens=16))
        finally:
            model.close()
        (received,) = server.requests
    assert (received.dialect, answer.text) == (dialect, "routed")

    streams = sorted((FIXTURES / "realworld" / dialect).iterdir())
    assert any(sniff_stream(p.read_bytes()) == dialect for p in streams), "tests/fixtures/realworld: a stream"
    for kind in ("requests", "requests-full", "responses"):
        assert any((FIXTURES / kind / dialect).glob("*.json")), f"tests/fixtures/{kind}/{dialect}"

    target = dialect.replace("-", "_")
    run, declared = _fuzz_targets()
    assert (ROOT / "fuzz" / "fuzz_targets" / f"{target}.rs").exists(), f"fuzz/fuzz_targets/{target}.rs"
    assert target in declared, f"fuzz/Cargo.toml declares {target}"
    assert target in run, f"the Makefile's FUZZ_TARGETS runs {target}"
