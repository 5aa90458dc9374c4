"""The JSON Schema of canonical schema v1, generated from the Structs in ``types.py``.

``docs/schema-v1.json`` is this schema, committed; ``tests/codec/test_schema.py`` fails when it is
stale (regenerate with ``make schema``). Unknown messages and blocks have no schema: they are
whatever a newer version wrote.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .types import SCHEMA_VERSION, ContentBlock, Event, Message, Request, Session

__all__ = ["json_schema", "render"]


def json_schema() -> dict[str, Any]:
    """One document: the session envelope at the root, every other type under ``$defs``."""
    (root, *_), components = msgspec.json.schema_components(
        [Session, Message, ContentBlock, Event, Request], ref_template="#/$defs/{name}"
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:msgwire:schema:v{SCHEMA_VERSION}",
        "title": f"msgwire canonical schema v{SCHEMA_VERSION}",
        **root,
        "$defs": dict(sorted(components.items())),
    }


def render() -> bytes:
    """The committed form: indented, keys in a stable order, a final newline."""
    return msgspec.json.format(msgspec.json.encode(json_schema()), indent=2) + b"\n"


if __name__ == "__main__":
    import sys

    sys.stdout.buffer.write(render())
