"""The import rules of the package (docs/design.md section 1), read off the source with `ast`.

- the wire layer (everything outside `harness/`, `cli/` and `interop/`) never imports them;
- nothing imports `interop/` (adapters to other libraries, on top of the wire layer and the
  harness) but `interop/` itself;
- `import msgwire` loads no HTTP, database, OCR, MCP or terminal library;
- the harness and the interop modules never call `msgwire._core` (they use the wire API);
- the harness parts (tools, providers, store, resources) do not import each other;
- an optional library is imported only in the module that needs it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
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
    "pydantic_ai": {"interop/pydantic_ai.py"},
    "pydantic": {"harness/tools/pydantic_types.py", "interop/pydantic_ai.py"},
    "pydantic_core": {"harness/tools/pydantic_types.py"},
    "agents": {
        "interop/openai_agents.py",
        "interop/openai_agents_events.py",
        "interop/openai_agents_model.py",
        "interop/openai_agents_passthrough.py",
        "interop/openai_agents_request.py",
    },
}
WINGS = ("harness/", "cli/", "interop/")
"""What stands on the wire layer: the agent harness, the command, the adapters to other libraries."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _imports(path: Path) -> list[str]:
    """Absolute names of every module `path` imports (relative imports resolved)."""
    rel = path.relative_to(PACKAGE.parent)
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
        bad = [n for n in _imports(path) if n.startswith(("msgwire.harness", "msgwire.cli", "msgwire.interop"))]
        assert not bad, f"{where} imports {bad}"


def test_only_interop_imports_interop() -> None:
    """The adapters sit on top: the harness and the command never need another library's types."""
    for path in _modules():
        where = _where(path)
        if not where.startswith("interop/"):
            bad = [n for n in _imports(path) if n.startswith("msgwire.interop")]
            assert not bad, f"{where} imports {bad}"


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
    for module, more in (("msgwire.harness", []), ("msgwire.cli", ["msgwire.harness"])):
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


# --- the harness wing: one home per rule --------------------------------------------------------


def _graph(root: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (``TYPE_CHECKING`` imports count:
    a cycle through them is a cycle of meaning all the same)."""
    modules = {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts): p
        for p in (PACKAGE / root).rglob("*.py")
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


@pytest.mark.parametrize("root", ["harness", "cli", "testing", "interop"])
def test_no_import_cycle(root: str) -> None:
    assert _cycles(_graph(root)) == []


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
