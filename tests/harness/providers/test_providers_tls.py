"""Loading a CA bundle costs 100+ ms (137 ms of a first ``agent.run`` of 220 ms in the review):
an ``http://`` provider never loads one, and every ``https://`` provider of a process shares the
one loaded. Each case runs in a fresh process, which counts the loads (``ssl.SSLContext``'s
``load_verify_locations`` and ``load_default_certs``) while it calls a real server."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from msgwire.testing import ScriptedServer, reply

_COUNTING = """
import json, ssl, sys
loads = []
for name in ("load_verify_locations", "load_default_certs"):
    def counted(self, *args, _name=name, _original=getattr(ssl.SSLContext, name), **kwargs):
        loads.append(_name)
        return _original(self, *args, **kwargs)
    setattr(ssl.SSLContext, name, counted)
"""


def _loads_in_a_fresh_process(body: str, *args: str) -> list[str]:
    script = _COUNTING + textwrap.dedent(body) + "\nprint(json.dumps(loads))\n"
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_an_http_provider_loads_no_certificates() -> None:
    with ScriptedServer([reply("one"), reply("two")]) as server:
        loaded = _loads_in_a_fresh_process(
            """
            from msgwire.harness import Agent
            from msgwire.harness.providers import OpenAI
            with OpenAI(base_url=sys.argv[1], api_key="k", model="m") as model, Agent(model) as agent:
                assert agent.run("a").text == "one"
                assert agent.run("b").text == "two"
            """,
            server.url,
        )
        assert len(server.requests) == 2
    assert loaded == []  # before: 1 (httpx's client loads certifi's bundle, whatever the URL)


def test_https_providers_share_one_loaded_bundle() -> None:
    loaded = _loads_in_a_fresh_process(
        """
        from msgwire.harness.providers import Anthropic, OpenAI
        first = OpenAI(api_key="k")
        second = Anthropic(api_key="k")
        assert first.transport.client is not second.transport.client  # each its own client
        again = OpenAI(api_key="k")
        again.transport.client
        for model in (first, second, again):
            model.close()
        """
    )
    assert loaded == ["load_verify_locations"]  # before: one per client (3)
