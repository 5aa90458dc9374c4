"""The one exception hierarchy of msgwire.

Bad data raises ``DecodeError``, a ``ValueError``, so ``except ValueError`` keeps working for
callers that treat msgwire like ``json``. Every message names where the problem is: a byte
offset into the input (``offset``) or a JSON path (``path``, e.g. ``$.messages[3].tool_call_id``).
"""

from __future__ import annotations

import re

__all__ = ["DecodeError", "MsgwireError", "ValidationError"]


class MsgwireError(Exception):
    """Base of every error msgwire raises on purpose."""


class DecodeError(MsgwireError, ValueError):
    """Input that cannot be read as msgwire data: malformed JSON, wrong shape, wrong type."""

    def __init__(self, message: str, *, offset: int | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.path = path


class ValidationError(DecodeError):
    """Well-formed data that breaks a rule of the schema or of ``msgwire.validate``.

    ``errors`` lists every problem found as ``(path, message)`` pairs; the exception message
    shows the first ones.
    """

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        shown = "; ".join(f"{msg} - at `{path}`" for path, msg in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(shown + more, path=errors[0][0] if errors else None)


_AT_PATH = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_BYTE = re.compile(r"\(byte (\d+)\)")
_MISSING_FIELD = re.compile(r"missing required field `([^`]+)`")


def from_msgspec(exc: Exception, prefix: str = "$") -> DecodeError:
    """Our error for a msgspec error, its path rebased under ``prefix`` (the path of the value
    that was decoded on its own) and extended to the missing field when one is named."""
    import msgspec

    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        match = _BYTE.search(text)
        return DecodeError(text, offset=int(match.group(1)) if match else None)
    found = _AT_PATH.match(text)
    assert found is not None  # the pattern matches any text
    message, path = found.group("msg"), found.group("path") or "$"
    path = prefix + path[1:]
    missing = _MISSING_FIELD.search(message)
    if missing:
        path = f"{path}.{missing.group(1)}"
    return ValidationError([(path, message)])
