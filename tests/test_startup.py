"""What starting msgwire loads (issue 30: ``import msgwire`` and ``msgwire --help`` within reach of a
bare interpreter; their figures in benches/README.md, ``python -m benches.startup``).

- ``import msgwire`` imports none of its submodules: every public name is imported from its
  submodule when first used (``msgwire/__init__.py``), and is then the very object of that
  submodule; ``__all__``, the names the module's ``__getattr__`` knows and the imports type
  checkers read under ``TYPE_CHECKING`` are the same names;
- ``msgwire.stream``, ``msgwire.transcode`` and ``msgwire.validate`` stay the functions of those
  names whoever imports their submodules first (the import system binds a submodule to its name);
- ``msgwire --help`` imports no command's module, no rich and no wire layer, and lists what each
  command's own parser says; ``msgwire COMMAND --help`` is the command's whole parser.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import msgwire
from msgwire.cli import build_parser
from msgwire.cli.commands import SUMMARIES

INIT = Path(msgwire.__file__)


def _loaded_after(code: str) -> list[str]:
    """The modules of msgwire, msgspec and rich that a fresh interpreter has after ``code``."""
    listing = "print(sorted(m for m in sys.modules if m.split('.')[0] in ('msgwire', 'msgspec', 'rich')))"
    probe = f"{code}\nimport sys\n{listing}"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_import_msgwire_imports_none_of_its_submodules() -> None:
    assert _loaded_after("import msgwire") == ["msgwire"]


def test_a_name_used_imports_its_own_submodule_and_what_that_needs() -> None:
    loaded = _loaded_after("import msgwire\nmsgwire.UsageError")
    assert "msgwire.errors" in loaded
    assert not {"msgwire.formats", "msgwire.stream", "msgwire.codec", "msgwire.context"} & set(loaded), loaded


def _type_checking_names() -> dict[str, str]:
    """Each name imported under ``if TYPE_CHECKING:`` in ``msgwire/__init__.py``: its submodule."""
    tree = ast.parse(INIT.read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    names = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {alias.asname or alias.name: node.module for alias in node.names}
    return names


def test_all_the_lazy_names_and_the_type_checkers_imports_agree() -> None:
    assert sorted(msgwire._EXPORTS) == sorted(set(msgwire.__all__) - {"__version__"})
    assert _type_checking_names() == msgwire._EXPORTS


@pytest.mark.parametrize("name", msgwire.__all__)
def test_every_public_name_is_its_submodules_own_object(name: str) -> None:
    if name == "__version__":
        assert msgwire.__version__ == msgwire._core.__version__
        return
    module = sys.modules[f"msgwire.{msgwire._EXPORTS[name]}"] if hasattr(msgwire, name) else None
    assert module is not None
    assert getattr(msgwire, name) is getattr(module, name)


def test_the_functions_named_as_their_submodules_stay_functions_whoever_imports_them_first() -> None:
    code = (
        "import msgwire.stream, msgwire.transcode, msgwire.validate\n"
        "import msgwire\n"
        "print([callable(f) and not isinstance(f, type(msgwire)) for f in "
        "(msgwire.stream, msgwire.transcode, msgwire.validate)])\n"
        "from msgwire import stream, transcode, validate\n"
        "print(stream.__module__, transcode.__module__, validate.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[True, True, True]"
    assert out[1] == "msgwire.stream msgwire.transcode msgwire.validate"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        msgwire.no_such_name  # noqa: B018 - the access is the test


def test_the_command_help_loads_no_command_and_no_rich() -> None:
    loaded = _loaded_after("from msgwire.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    commands = [m for m in loaded if m.startswith("msgwire.cli.") and m.removeprefix("msgwire.cli.") in SUMMARIES]
    assert commands == []
    assert not [m for m in loaded if m.startswith(("rich", "msgspec", "msgwire.types", "msgwire.harness"))], loaded


def test_the_command_help_lists_what_each_commands_own_parser_says() -> None:
    assert build_parser(set()).format_help() == build_parser().format_help()


@pytest.mark.parametrize("command", SUMMARIES)
def test_a_commands_help_is_its_whole_parser(command: str) -> None:
    def subparser(full: set[str] | None) -> str:
        action = next(a for a in build_parser(full)._actions if a.dest == "command")
        return action.choices[command].format_help()  # type: ignore[index]

    assert subparser({command}) == subparser(None)
    assert "--" in subparser({command}) or command == "demo"  # its options, not a bare summary
