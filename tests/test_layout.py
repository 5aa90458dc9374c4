"""The import rules of the package (docs/design.md section 1), read off the source with `ast`.

- the wire layer (everything outside `harness/`, `cli/`, `interop/` and `bench/`) never imports them;
- nothing imports `interop/` (adapters to other libraries, on top of the wire layer and the
  harness) but `interop/` itself and the bench wing (which times the conversion msgwire ships);
- the bench wing (`bench/`: what `msgwire bench` times) stands on the wire layer and `interop/`,
  and only `cli/bench.py` and benches/ import it; benches/ imports no pytest module of its own
  (`benches.test_*`), and the peers' mock transport and hand-written loop are written once;
- `import msgwire` loads no HTTP, database, OCR, MCP or terminal library;
- the harness and the interop modules never call `msgwire._core` (they use the wire API);
- the harness parts (tools, providers, store, resources) do not import each other;
- no module of the package takes part in an import cycle (lazy and `TYPE_CHECKING` imports
  counted);
- an optional library is imported only in the module that needs it;
- the harness keeps no state at module level (``test_the_harness_keeps_no_module_level_state``).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "msgwire"
PARTS = ("tools", "providers", "store", "resources")
# optional library -> the modules (relative to the package) allowed to import it
OPTIONAL = {
    "httpx": {"harness/providers/_http.py", "harness/resources/images.py", "sse.py"},
    "aiohttp": {"harness/providers/_aiohttp.py"},
    "psycopg": {"harness/store/postgres.py"},
    "tesserocr": {"harness/resources/ocr.py"},
    "pytesseract": {"harness/resources/ocr.py"},
    "langdetect": {"harness/resources/ocr.py"},
    "lingua": {"harness/resources/ocr.py"},
    "PIL": {"harness/resources/images.py", "harness/resources/ocr.py"},
    "mcp": {"harness/resources/mcp.py", "examples/mcp_docs_server.py"},  # the demo's server, run as a script
    "pyarrow": {"harness/store/parquet.py"},
    "pydantic_ai": {
        "interop/pydantic_ai.py",
        "interop/pydantic_ai_model.py",
        "interop/pydantic_ai_request.py",
        "interop/pydantic_ai_response.py",
    },
    "pydantic": {
        "harness/tools/pydantic_types.py",
        "interop/pydantic_ai.py",
        "interop/openai_agents_deltas.py",  # openai-agents' events are pydantic models
    },
    "pydantic_core": {"harness/tools/pydantic_types.py"},
    "agents": {
        "interop/openai_agents.py",
        "interop/openai_agents_events.py",
        "interop/openai_agents_model.py",
        "interop/openai_agents_passthrough.py",
        "interop/openai_agents_request.py",
    },
    "httpx_sse": {"bench/peers.py"},
    "orjson": {"bench/peers.py"},
}
WINGS = ("harness/", "cli/", "interop/", "bench/")
"""What stands on the wire layer: the agent harness, the command, the adapters to other libraries,
the bench."""
BENCHES = PACKAGE.parents[1] / "benches"
TESTS = PACKAGE.parents[1] / "tests"


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _imports(path: Path) -> list[str]:
    """Absolute names of every module `path` imports (relative imports resolved; a file outside
    the package, in tests/ or benches/, from the repository's root)."""
    rel = path.relative_to(PACKAGE.parent if path.is_relative_to(PACKAGE.parent) else PACKAGE.parents[1])
    package = list(rel.parent.parts)
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.append(module)
            names += [f"{module}.{a.name}" for a in node.names]
    return names


def _where(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_the_wire_layer_never_imports_the_harness_the_cli_or_interop() -> None:
    for path in _modules():
        where = _where(path)
        if where.startswith(WINGS) or where == "__main__.py":
            continue
        wings = ("msgwire.harness", "msgwire.cli", "msgwire.interop", "msgwire.bench")
        bad = [n for n in _imports(path) if n.startswith(wings)]
        assert not bad, f"{where} imports {bad}"


def test_only_interop_and_the_bench_import_interop() -> None:
    """The adapters sit on top: the harness and the command never need another library's types;
    the bench times the conversion msgwire ships rather than a copy of its own."""
    for path in _modules():
        where = _where(path)
        if not where.startswith(("interop/", "bench/")):
            bad = [n for n in _imports(path) if n.startswith("msgwire.interop")]
            assert not bad, f"{where} imports {bad}"


def test_the_bench_wing_stands_on_the_wire_layer_and_interop() -> None:
    for path in (PACKAGE / "bench").rglob("*.py"):
        bad = [n for n in _imports(path) if n.startswith(("msgwire.harness", "msgwire.cli", "msgwire.testing"))]
        assert not bad, f"{_where(path)} imports {bad}"


def test_only_the_bench_command_and_benches_import_the_bench_wing() -> None:
    """The bench is the benches' and ``msgwire bench``'s: the package and its tests reach it only
    through the command."""
    for path in [*_modules(), *TESTS.rglob("*.py")]:
        where = path.relative_to(PACKAGE.parents[1]).as_posix()
        if where.startswith("python/msgwire/bench/") or where == "python/msgwire/cli/bench.py":
            continue
        bad = [n for n in _imports(path) if n.startswith("msgwire.bench")]
        assert not bad, f"{where} imports {bad}"


def test_benches_import_no_test_module() -> None:
    """A bench's helpers live in a module of their own (or the bench wing), never in a pytest
    module: text, not ``ast``, so that code run in a subprocess from a string counts too."""
    test_module = re.compile(r"(from|import)\s+(benches\.|\.)test_\w+")
    for path in BENCHES.rglob("*.py"):
        found = test_module.search(path.read_text())
        assert found is None, f"benches/{path.relative_to(BENCHES)} imports {found.group(0)!r}"


@pytest.mark.parametrize(
    "line",
    [
        'calls.setdefault(call["index"], ["", "", ""])',  # the hand-written httpx-sse accumulator
        ".SyncByteStream):",  # the mock transport's streamed body
    ],
)
def test_the_peers_helpers_are_written_once(line: str) -> None:
    """``msgwire bench`` and benches/ run the same hand-written loop over the same mock transport:
    one copy, in ``bench/peers.py``."""
    holders = [p for p in [*_modules(), *BENCHES.rglob("*.py")] if line in p.read_text()]
    assert holders == [PACKAGE / "bench" / "peers.py"], holders


def test_the_harness_and_interop_never_call_the_extension() -> None:
    for path in _modules():
        if _where(path).startswith(("harness/", "interop/")):
            bad = [n for n in _imports(path) if n.startswith("msgwire._core")]
            assert not bad, f"{_where(path)} imports {bad}"


@pytest.mark.parametrize("part", PARTS)
def test_harness_parts_do_not_import_each_other(part: str) -> None:
    others = tuple(f"msgwire.harness.{p}" for p in PARTS if p != part)
    for path in (PACKAGE / "harness" / part).rglob("*.py"):
        bad = [n for n in _imports(path) if n.startswith(others)]
        assert not bad, f"{_where(path)} imports {bad}"


def test_optional_libraries_stay_in_their_module() -> None:
    for path in _modules():
        where = _where(path)
        for name in _imports(path):
            top = name.split(".")[0]
            if top in OPTIONAL:
                assert where in OPTIONAL[top], f"{where} imports {top} (allowed in {sorted(OPTIONAL[top])})"


def test_import_msgwire_loads_no_optional_library() -> None:
    heavy = [
        "httpx",
        "sqlite3",
        "psycopg",
        "tesserocr",
        "pytesseract",
        "PIL",
        "mcp",
        "pyarrow",
        "pydantic",
        "rich",
        "agents",
        "msgwire.harness",
        "msgwire.interop",
    ]
    code = f"import sys, msgwire; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", out


def test_the_harness_and_the_command_load_no_optional_library() -> None:
    """``import msgwire.harness`` (conversations, tools, the agent) needs no HTTP client, OCR,
    MCP or pydantic library: the providers and resources load theirs when imported, pydantic
    loads for the tools that use it; the command loads the harness only in the commands that
    use it (chat, audit, the demo's agent section)."""
    heavy = ["httpx", "mcp", "tesserocr", "PIL", "psycopg", "pydantic"]
    for module, more in (("msgwire.harness", []), ("msgwire.cli", ["msgwire.harness", "msgwire.interop"])):
        code = f"import sys, {module}; print([m for m in {[*heavy, *more]!r} if m in sys.modules])"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        assert out == "[]", (module, out)


def test_the_core_states_the_dialects_and_its_texts_once() -> None:
    """``formats.DIALECTS``, ``MISSING_RESULT`` and ``EMPTY_MESSAGE`` are the Rust core's own;
    the ``Dialect`` literal names the same dialects."""
    from typing import get_args

    import msgwire
    from msgwire import _core

    assert set(msgwire.formats.DIALECTS) == set(get_args(msgwire.Dialect))
    assert len(msgwire.formats.DIALECTS) == len(get_args(msgwire.Dialect))
    assert msgwire.formats.MISSING_RESULT is _core.MISSING_RESULT
    assert msgwire.formats.EMPTY_MESSAGE == "(empty message)" == _core.EMPTY_MESSAGE


# --- no cycle; the harness wing: one home per rule ---------------------------------------------


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (lazy and ``TYPE_CHECKING`` imports count:
    a cycle through them is a cycle of meaning all the same; a package's ``__init__`` only
    re-exports, and is left out)."""
    modules = {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts): p
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path) if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    """In the whole package: the wire layer (its convenience methods delegate through
    ``types._Above``, which ``codec`` and ``validate`` fill), the harness, the command, the test
    doubles, the adapters and the bench."""
    assert _cycles(_graph()) == []


def test_the_conversation_imports_nothing_above_the_audit_trail() -> None:
    names = _imports(PACKAGE / "harness" / "conversation.py")
    harness = {m for m in names if m.startswith("msgwire.harness.") and not m.startswith("msgwire.harness.audit")}
    assert not harness, harness


def test_the_audit_rules_live_in_the_audit_trail() -> None:
    """The header rule, the admission rule and the result decisions are written once, in
    ``harness/audit.py``: no other module of the harness spells them out."""
    for path in (PACKAGE / "harness").rglob("*.py"):
        if path.name == "audit.py":
            continue
        text = path.read_text()
        where = _where(path)
        assert '"interrupted": "tool_interrupted"' not in text, f"{where} writes the result decisions again"
        assert 'params.get("new")' not in text, f"{where} reads a mode change's new state itself"
        assert "use update()" not in text or where == "harness/conversation.py", where
        assert 'how == "update"' not in text, f"{where} writes the admission rule again"


def test_the_test_doubles_are_msgwire_testing_and_the_harness_does_not_use_them() -> None:
    assert not (PACKAGE / "harness" / "scripted.py").exists()
    for path in _modules():
        where = _where(path)
        if where.startswith("harness/"):
            bad = [n for n in _imports(path) if n.startswith("msgwire.testing")]
            assert not bad, f"{where} imports {bad}"
    for path in (PACKAGE / "testing").rglob("*.py"):
        bad = [n for n in _imports(path) if n.startswith(("msgwire.harness", "msgwire.cli"))]
        assert not bad, f"{_where(path)} imports {bad}"


# --- no module-level state in the harness -----------------------------------------------------

MUTABLE_CALLS = {
    "dict", "list", "set", "bytearray",
    "defaultdict", "OrderedDict", "Counter", "deque", "ChainMap",
    "WeakKeyDictionary", "WeakValueDictionary", "WeakSet",
}  # fmt: skip
MUTATORS = {
    "append", "extend", "insert", "remove", "sort", "reverse",  # list
    "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update",  # set
    "update", "pop", "popitem", "clear", "setdefault",  # dict (and list, set)
    "appendleft", "extendleft", "popleft", "rotate",  # deque
}  # fmt: skip
STATE_ALLOWED = {
    ("harness/tools/docstrings.py", "_cache"): "a memo of a pure function of a class (its attribute docs, "
    "read from its source), weakly keyed: no caller's data, the same answer for everyone",
    ("harness/tools/results.py", "_block_types"): "a memo of issubclass per type: a pure function of the type",
    ("harness/tools/run.py", "_shared"): "the thread pool every runner shares for sync tools, on purpose and "
    "documented (SHARED_THREADS): it carries no call's data from one runner to another",
}


def _module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements run at import: the module's own and those inside its top-level if/try/with."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody"):
                pending.extend(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                pending.extend(handler.body)
        else:
            yield node


def _is_mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_CALLS
    return False


def _module_state(path: Path) -> dict[str, str]:
    """Module-level names ``path`` keeps state in, and why each counts: a container bound to a
    name that is not an ALL_CAPS constant, a container (constant or not) the module changes
    (item assignment or deletion, ``+=``, a mutating method), or a name a function rebinds
    (``global``). ``functools.cache`` on a function is not looked at: a memo of a pure function."""
    tree = ast.parse(path.read_text(), str(path))
    containers: dict[str, bool] = {}  # name -> whether it is an ALL_CAPS constant
    for node in _module_level(tree):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        for target in targets:
            dunder = isinstance(target, ast.Name) and target.id.startswith("__") and target.id.endswith("__")  # __all__
            if isinstance(target, ast.Name) and not dunder and value is not None and _is_mutable(value):
                containers[target.id] = target.id.lstrip("_").isupper()
    state = {name: "a mutable container, not an ALL_CAPS constant" for name, caps in containers.items() if not caps}
    for node in ast.walk(tree):
        changed: str | None = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changed = node.value.id if isinstance(node.value, ast.Name) else None
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed = node.target.id
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            changed = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        elif isinstance(node, ast.Global):
            for name in node.names:
                state[name] = f"rebound at run time (global, line {node.lineno})"
        if changed in containers:
            state[changed] = f"a module-level container changed at line {node.lineno}"
    return state


def test_the_harness_keeps_no_module_level_state() -> None:
    """A rule of the house: no module-level mutable state in the harness. State shared through a
    module (a dict keyed by ``id(call)``, as the approvals' fingerprints and decoded arguments
    were) is shared by every runner and thread and outlives what it was for: it belongs on an
    object that makes the trip itself. Exceptions are listed with their reason."""
    found = {
        (_where(path), name): why
        for path in (PACKAGE / "harness").rglob("*.py")
        for name, why in _module_state(path).items()
    }
    unexplained = {key: why for key, why in found.items() if key not in STATE_ALLOWED}
    assert not unexplained, f"module-level state in the harness: {unexplained}"
    assert set(STATE_ALLOWED) <= set(found), f"allowed but gone (drop them): {set(STATE_ALLOWED) - set(found)}"
