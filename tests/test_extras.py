"""A missing extra says which ``pip install 'msgwire[...]'`` brings it, and the extras in
pyproject.toml hold what the modules import.

Each import site runs in a fresh interpreter with its library made unimportable
(``sys.modules[name] = None``, as for a library that is not installed): it raises
``MissingExtraError`` (an ``ImportError`` and a ``MsgwireError``) naming the extra, and the
command line says so in one line with exit code 2. The extras are read from pyproject.toml and
compared with the imports each guarded site makes (through the installed packages' metadata:
which distribution an import name comes from, and what it depends on).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "msgwire"
CORE = {"msgspec", "rich"}  # the dependencies of every install

_BLOCKING = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # as if not installed: importing it raises ModuleNotFoundError
try:
    exec(sys.argv[2])
except ImportError as exc:
    import msgwire.errors
    missing = getattr(msgwire.errors, "MissingExtraError", ())
    print(type(exc).__name__, isinstance(exc, missing) and isinstance(exc, msgwire.errors.MsgwireError))
    print(exc)
else:
    print("no error")
"""

SITES = [
    ("httpx", "import msgwire.harness.providers", "harness"),
    ("aiohttp", "import msgwire.harness.providers._aiohttp", "harness"),
    ("psycopg", "from msgwire.harness.store import open_store; open_store('postgresql://u@h/db')", "postgres"),
    ("pyarrow", "from msgwire.harness.store.parquet import export_parquet", "parquet"),
    ("mcp", "from msgwire.harness.resources import MCPResources", "mcp"),
    ("mcp", "import msgwire.examples.mcp_docs_server", "mcp"),
    ("tesserocr", "from msgwire.harness.resources import TesseractOCR", "ocr"),
    ("PIL", "from msgwire.harness.resources import TesseractOCR", "ocr"),
    ("lingua", "from msgwire.harness.resources import TesseractOCR", "ocr"),
    ("pydantic", "import msgwire.harness.tools.pydantic_types", "pydantic"),
    ("agents", "from msgwire.interop.openai_agents import StoreSession", "openai-agents"),
    ("pydantic_ai", "from msgwire.interop.pydantic_ai import to_model_messages", "pydantic-ai"),
]


def _without(blocked: str, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, blocked, *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(("blocked", "statement", "extra"), SITES, ids=[f"{s[0]}-{s[2]}" for s in SITES])
def test_a_missing_library_names_the_extra_to_install(blocked: str, statement: str, extra: str) -> None:
    done = _without(blocked, _BLOCKING, statement)
    assert done.returncode == 0, done.stderr
    kind, message = done.stdout.splitlines()
    assert kind == "MissingExtraError True"
    assert f"needs {blocked}, which is not installed: pip install 'msgwire[{extra}]'" in message


def test_images_need_no_httpx_until_a_url_is_fetched() -> None:
    """The ``ocr`` extra brings no httpx: ``msgwire.harness.resources`` imports without it, an
    image from base64 is read by OCR, and only an image URL fails (naming the extra)."""
    code = """
import base64, io, sys
sys.modules["httpx"] = None
from PIL import Image, ImageDraw, ImageFont
from msgwire import ImageBlock, UrlSource, Base64Source
from msgwire.harness.resources import ImageRecognizer, TesseractOCR
picture = Image.new("RGB", (420, 90), "white")
font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
ImageDraw.Draw(picture).text((12, 20), "Invoice 42", fill="black", font=font)
data = io.BytesIO()
picture.save(data, "PNG")
recognizer = ImageRecognizer(ocr=TesseractOCR())
png = Base64Source(media_type="image/png", data=base64.b64encode(data.getvalue()).decode())
read = recognizer.recognize(ImageBlock(source=png, recognition_mode="ocr"))
url = recognizer.recognize(ImageBlock(source=UrlSource(url="https://example.com/a.png"), recognition_mode="ocr"))
recognizer.close()
print(read.status, read.recognized_text.strip() if read.recognized_text else None)
print(url.status, url.error)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    read, url = done.stdout.splitlines()
    assert read == "resolved Invoice 42"
    assert url == ("error fetching an image URL needs httpx, which is not installed: pip install 'msgwire[harness]'")


_CLI = "import sys\nsys.modules[sys.argv[1]] = None\nfrom msgwire.cli import main\nsys.exit(main(sys.argv[2:]))\n"


@pytest.mark.parametrize(
    ("blocked", "command", "extra"),
    [
        ("httpx", ["chat", "--provider", "openai", "--model", "m", "--api-key", "k"], "harness"),
        ("psycopg", ["sessions", "--store", "postgresql://u@/db?host=/nonexistent"], "postgres"),
        ("psycopg", ["audit", "--store", "postgresql://u:pw@/db?host=/nonexistent", "some-id"], "postgres"),
    ],
    ids=["chat-httpx", "sessions-psycopg", "audit-psycopg"],
)
def test_the_command_says_which_extra_in_one_line(blocked: str, command: list[str], extra: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CLI, blocked, *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()  # one line, no traceback
    assert line.startswith(f"msgwire {command[0]}: error: ")
    assert line.endswith(f"needs {blocked}, which is not installed: pip install 'msgwire[{extra}]'")
    assert ":pw@" not in line


# --- pyproject's extras against the import sites ---------------------------------------------


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {extra: [Requirement(r) for r in reqs] for extra, reqs in project["optional-dependencies"].items()}


def _closure(requirements: list[Requirement]) -> set[str]:
    """The distributions these requirements install, with their own dependencies (as installed)."""
    seen: set[str] = set()
    todo = [(r.name, set(r.extras)) for r in requirements]
    while todo:
        name, extras = todo.pop()
        if _normal(name) in seen and not extras:
            continue
        seen.add(_normal(name))
        for text in importlib.metadata.requires(name) or []:
            req = Requirement(text)
            wanted = not req.marker or any(req.marker.evaluate({"extra": e}) for e in [*extras, ""])
            if wanted:
                todo.append((req.name, set(req.extras)))
    return seen


def _guarded_sites() -> list[tuple[str, str, str]]:
    """(module, imported top-level name, extra) of every import inside a ``try`` whose handler
    raises ``MissingExtraError(part, extra, exc)``."""
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Try):
                continue
            extras = [
                call.args[1].value
                for handler in node.handlers
                for call in ast.walk(handler)
                if isinstance(call, ast.Call)
                and getattr(call.func, "id", None) == "MissingExtraError"
                and isinstance(call.args[1], ast.Constant)
            ]
            for extra in extras:
                for statement in node.body:
                    sites += [
                        (path.relative_to(PACKAGE).as_posix(), n.split(".")[0], extra) for n in _imported(statement)
                    ]
    return sites


def _imported(statement: ast.stmt) -> list[str]:
    """The modules an absolute import statement names (none for any other statement)."""
    if isinstance(statement, ast.Import):
        return [a.name for a in statement.names]
    if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
        return [statement.module]
    return []


def test_each_extra_holds_what_its_import_sites_import() -> None:
    extras = _extras()
    sites = _guarded_sites()
    assert {extra for _, _, extra in sites} >= {"harness", "postgres", "parquet", "mcp", "ocr", "pydantic"}
    distributions = importlib.metadata.packages_distributions()
    for module, name, extra in sites:
        assert extra in extras, f"{module} names the extra {extra!r}, which pyproject.toml does not define"
        provided_by = {_normal(d) for d in distributions.get(name, [])}
        assert provided_by, f"{name} (imported by {module}) is not installed here: cannot check its extra"
        assert provided_by & _closure(extras[extra]), f"{module} imports {name}; msgwire[{extra}] does not install it"


def test_every_import_of_an_optional_library_at_import_time_is_guarded() -> None:
    """A module-level import of a library outside the core dependencies sits in a guard that
    names its extra (else a missing extra is a bare ModuleNotFoundError)."""
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.parse(path.read_text(), str(path)).body:  # module level only
            tops = {n.split(".")[0] for n in _imported(node)}
            bare += [(module, top) for top in sorted(tops - sys.stdlib_module_names - {"msgwire", "__future__", *CORE})]
    assert bare == []
