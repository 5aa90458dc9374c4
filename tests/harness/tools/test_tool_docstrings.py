"""The docstring's Returns section in the tool's description, in Google, NumPy and Sphinx styles,
written as pydantic-ai writes it: each case is compared with pydantic-ai's own description and
parameter descriptions (its function-schema code runs offline). The docstrings are pydantic-ai's
test cases (tests/test_tools.py), rewritten here."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import pytest

from msgwire.harness import tool
from msgwire.harness.tools.docstrings import parse_docstring

pydantic_ai = pytest.importorskip("pydantic_ai")
pydantic = pytest.importorskip("pydantic")


def google(foo: int, bar: str) -> str:
    """Do foobar stuff, a lot.

    Args:
        foo: The foo thing.
        bar: The bar thing.
    """
    return f"{foo} {bar}"


def google_returns(x: int) -> str:
    """A function that does something.

    Args:
        x: The input value.

    Returns:
        str: The result as a string.
    """
    return str(x)


def google_returns_untyped(x: int) -> str:
    """A function that does something.

    Args:
        x: The input value.

    Returns:
        The result as a string.
    """
    return str(x)


def sphinx_returns(x: int) -> str:
    """A sphinx function with returns.

    :param x: The input value.
    :rtype: str
    :return: The result as a string with type.
    """
    return str(x)


def numpy_returns(x: int) -> str:
    """A numpy function with returns.

    Parameters
    ----------
    x : int
        The input value.

    Returns
    -------
    str
        The result as a string with type.
    """
    return str(x)


def only_returns() -> str:
    """

    Returns:
        str: The result as a string.
    """
    return "foo"


def no_body(foo: int, bar: Annotated[str, pydantic.Field(description="from fields")]) -> str:
    """
    Args:
        foo: The foo thing.
        bar: The bar thing.
    """
    return f"{foo} {bar}"


CASES = [google, google_returns, google_returns_untyped, sphinx_returns, numpy_returns, only_returns, no_body]


def _parameter_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    return {name: p.get("description") for name, p in schema["properties"].items()}


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_descriptions_are_pydantic_ais(fn: Any) -> None:
    ours = tool(fn).spec
    theirs = pydantic_ai.Tool(fn).function_schema
    assert ours.description == (theirs.description or "")
    assert _parameter_descriptions(ours.parameters) == _parameter_descriptions(theirs.json_schema)


def test_the_returns_section_as_written() -> None:
    assert tool(numpy_returns).spec.description == (
        "<summary>A numpy function with returns.</summary>\n"
        "<returns>\n<type>str</type>\n<description>The result as a string with type.</description>\n</returns>"
    )
    assert tool(google_returns_untyped).spec.description == (
        "<summary>A function that does something.</summary>\n"
        "<returns>\n<description>The result as a string.</description>\n</returns>"
    )


@pytest.mark.parametrize("fn", [google_returns, sphinx_returns, numpy_returns], ids=["google", "sphinx", "numpy"])
def test_describe_returns_false_leaves_the_returns_section_out(fn: Any) -> None:
    assert "<returns>" not in tool(describe_returns=False)(fn).spec.description
    assert tool(describe_returns=False)(fn).spec.description == parse_docstring(inspect.getdoc(fn) or "").summary


def test_a_returns_section_with_more_text() -> None:
    parsed = parse_docstring(
        inspect.cleandoc(
            """Look a city up.

            Returns:
                dict[str, int]: The population by year,
                    oldest first.

            Raises:
                KeyError: no such city.
            """
        )
    )
    assert (parsed.summary, parsed.returns_type, parsed.returns) == (
        "Look a city up.",
        "dict[str, int]",
        "The population by year, oldest first.",
    )
    sentence = parse_docstring("Look.\n\nReturns:\n    A report: short, and sunny.")
    assert (sentence.returns_type, sentence.returns) == (None, "A report: short, and sunny.")  # not a type


def test_sphinx_fields_that_are_not_parameters_are_not_the_description() -> None:
    parsed = parse_docstring(":returns: the thing\n:raises ValueError: when not")
    assert (parsed.summary, parsed.returns, parsed.params) == ("", "the thing", {})
