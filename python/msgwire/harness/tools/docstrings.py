"""What a tool's docstrings tell the model: the function's description, its parameters' and its
return value's, and the attribute docstrings of the classes its parameters name.

- ``parse_docstring``: Google (``Args:`` / ``Returns:``), NumPy (``Parameters`` / ``Returns``
  underlined with ``---``) and Sphinx (``:param name:``, ``:returns:``, ``:rtype:``) styles, mixed
  freely; hard-wrapped lines are joined into paragraphs.
- ``Docstring.description``: the text before the first section, and the Returns section as
  pydantic-ai writes it (``<summary>...</summary>`` then ``<returns>`` with ``<type>`` and
  ``<description>``), so a model reads the same words whichever library described the tool.
- ``attribute_docs``: the string literal under each annotated attribute of a class (``x: int``
  then ``\"\"\"The x.\"\"\"``), read from its source as pydantic's ``use_attribute_docstrings``
  does; a class without source (built at run time, or in a REPL) has none.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap
import weakref
from dataclasses import dataclass, field

__all__ = ["Docstring", "attribute_docs", "parse_docstring"]


@dataclass(frozen=True)
class Docstring:
    """A parsed docstring: ``summary`` (the text before the first section), ``params``
    (parameter -> description), ``returns`` (the Returns section's text, ``None`` when there is
    no such section) and ``returns_type`` (the type it names, if any)."""

    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None
    returns_type: str | None = None

    def description(self, *, returns: bool = True) -> str:
        """The tool's description: the summary, and with ``returns`` (and a Returns section) the
        summary and the return value in pydantic-ai's tags."""
        if not returns or self.returns is None:
            return self.summary
        type_line = f"<type>{self.returns_type}</type>\n" if self.returns_type else ""
        block = f"<returns>\n{type_line}<description>{self.returns}</description>\n</returns>"
        return f"<summary>{self.summary}</summary>\n{block}" if self.summary else block


_PARAMETER_SECTIONS = ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
_GOOGLE = re.compile(rf"^({'|'.join(_PARAMETER_SECTIONS)})\s*:\s*$")
_GOOGLE_RETURNS = re.compile(r"^Returns?\s*:\s*$")
_SECTION = re.compile(
    rf"^({'|'.join(_PARAMETER_SECTIONS)}|Other Parameters|Returns?|Yields?|Raises|Examples?|Notes?|See Also|"
    r"Attributes|Warnings?|References|Todo)\s*:?\s*$"
)
_NUMPY_PARAMETERS = re.compile(r"^(Parameters|Params|Other Parameters|Arguments)$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?::\s*(.*))?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)((?:\s+[^:]*)?):\s*(.*)$")  # :name args: text
_RETURN_TYPE = re.compile(r"^\(?([^\s:()]+(?:\[[^\]]*\])?)\)?$")  # `str`, `dict[str, int]`, `(int)`


def parse_docstring(doc: str) -> Docstring:
    """A Google, NumPy or Sphinx docstring (see the module docstring), already dedented
    (``inspect.getdoc`` / ``inspect.cleandoc``)."""
    lines = doc.expandtabs().splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    returns: list[str | None] = [None, None]  # text, type
    i = 0
    in_summary = True
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        numpy_header = i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]) and _SECTION.match(stripped)
        if _SPHINX_FIELD.match(stripped):
            in_summary = False
            i = _sphinx_field(lines, i, params, returns)
        elif numpy_header:
            in_summary = False
            if _NUMPY_PARAMETERS.match(stripped):
                i = _numpy_section(lines, i + 2, params)
            elif stripped in ("Returns", "Return"):
                i = _numpy_returns(lines, i + 2, returns)
            else:
                i = _skip_section(lines, i + 2, _indent(line))
        elif _SECTION.match(stripped) and stripped.endswith(":"):
            in_summary = False
            if _GOOGLE.match(stripped):
                i = _google_section(lines, i + 1, _indent(line), params)
            elif _GOOGLE_RETURNS.match(stripped):
                i = _google_returns(lines, i + 1, _indent(line), returns)
            else:
                i = _skip_section(lines, i + 1, _indent(line))
        else:
            if in_summary:
                summary.append(stripped)
            i += 1
    return Docstring("\n".join(_paragraphs(summary)).strip(), params, returns[0], returns[1])


def attribute_docs(cls: type) -> dict[str, str]:
    """Attribute name -> the string literal right under its annotated assignment, for ``cls``
    and the classes it inherits from (its own first); empty when the source cannot be read."""
    docs: dict[str, str] = {}
    bases = list(inspect.getmro(cls)) if isinstance(cls, type) else []
    for klass in [*bases, *getattr(cls, "__orig_bases__", ())]:  # a TypedDict keeps its bases here
        if isinstance(klass, type) and klass.__module__.split(".")[0] not in _NO_SOURCE:
            for name, text in _own_attribute_docs(klass).items():
                docs.setdefault(name, text)
    return docs


_NO_SOURCE = frozenset(("builtins", "msgspec", "typing", "typing_extensions", "abc", "collections"))
_cache: weakref.WeakKeyDictionary[type, dict[str, str]] = weakref.WeakKeyDictionary()


def _own_attribute_docs(cls: type) -> dict[str, str]:
    """Read once per class: finding a class's source parses its whole module (until Python 3.13
    records where a class starts)."""
    if "__annotations__" not in vars(cls):
        return {}
    docs = _cache.get(cls)
    if docs is None:
        docs = _cache[cls] = _read_attribute_docs(cls)
    return docs


def _read_attribute_docs(cls: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):  # no source file, a built-in, or a partial source
        return {}
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(_paragraphs(inspect.cleandoc(after.value.value).splitlines())).strip()
    return docs


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _paragraphs(lines: list[str]) -> list[str]:
    """Lines joined into paragraphs (a docstring's hard wraps undone), blank-line separated."""
    out: list[str] = []
    current: list[str] = []
    for line in [*(line.strip() for line in lines), ""]:
        if line:
            current.append(line)
        elif current:
            out.extend([" ".join(current), ""])
            current = []
    return out[:-1]


def _skip_section(lines: list[str], i: int, header_indent: int) -> int:
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > header_indent):
        i += 1
    return i


def _google_section(lines: list[str], i: int, header_indent: int, params: dict[str, str]) -> int:
    item_indent: int | None = None
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if item_indent is None:
            item_indent = indent
        match = _GOOGLE_ITEM.match(line.strip()) if indent == item_indent else None
        if match:
            name = match.group(1).lstrip("*")
            params[name] = match.group(3).strip()
        elif name is not None:  # a continuation line
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _google_returns(lines: list[str], i: int, header_indent: int, returns: list[str | None]) -> int:
    """``Returns:`` then an indented block: ``type: text`` or just the text (one value, as
    pydantic-ai reads it)."""
    end = _skip_section(lines, i, header_indent)
    block = [line.strip() for line in lines[i:end]]
    while block and not block[0]:
        block.pop(0)
    if block:
        kind, sep, rest = block[0].partition(":")
        if sep and _RETURN_TYPE.match(kind.strip()):
            returns[1] = _RETURN_TYPE.sub(r"\1", kind.strip())
            block[0] = rest.strip()
    returns[0] = "\n".join(_paragraphs(block)).strip()
    return end


def _numpy_section(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    base: int | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]):
            break  # the next section
        indent = _indent(line)
        if base is None:
            base = indent
        if indent == base:
            match = _NUMPY_ITEM.match(line.strip())
            if match is None:
                break
            name = match.group(1).lstrip("*")
            params[name] = ""
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _numpy_returns(lines: list[str], i: int, returns: list[str | None]) -> int:
    """``Returns`` / ``-------`` then ``[name : ]type`` lines, each with its indented text; the
    first value is kept (as pydantic-ai reads it)."""
    items: list[tuple[str, list[str]]] = []
    base: int | None = None
    while i < len(lines) and not (i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])):
        line = lines[i]
        if line.strip():
            base = _indent(line) if base is None else base
            if _indent(line) < base:
                break
            if _indent(line) == base:
                items.append((line.strip(), []))
            else:
                items[-1][1].append(line)
        elif items:
            items[-1][1].append("")
        i += 1
    if items:
        head, text = items[0]
        returns[1] = head.rpartition(":")[2].strip() or None
        returns[0] = "\n".join(_paragraphs(text)).strip()
    return i


def _sphinx_field(lines: list[str], i: int, params: dict[str, str], returns: list[str | None]) -> int:
    """One ``:field args: text`` and its continuation lines; ``param``, ``returns`` / ``return``
    and ``rtype`` are kept, the rest (``raises``, ``type``, ...) read past."""
    match = _SPHINX_FIELD.match(lines[i].strip())
    assert match is not None
    kind, args, text = match.group(1), match.group(2).split(), match.group(3).strip()
    indent = _indent(lines[i])
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > indent and not lines[i].strip().startswith(":"):
        text = f"{text} {lines[i].strip()}"
        i += 1
    if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and args:
        params[args[-1]] = text
    elif kind in ("returns", "return"):
        returns[0] = text
    elif kind == "rtype":
        returns[1] = text
    return i
