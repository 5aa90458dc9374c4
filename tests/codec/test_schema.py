"""The committed JSON Schema of v1 is current, and what dumps writes conforms to it."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import msgspec

import msgwire
from msgwire.schema import json_schema, render

ROOT = Path(__file__).resolve().parents[2]


def test_committed_schema_is_current() -> None:
    committed = (ROOT / "docs" / "schema-v1.json").read_bytes()
    assert committed == render(), "docs/schema-v1.json is stale: run `make schema` and commit it"


def test_example_session_conforms_to_the_schema() -> None:
    session = msgwire.loads((ROOT / "python" / "msgwire" / "examples" / "session.json").read_bytes())
    document = msgspec.json.decode(msgwire.dumps(session))
    jsonschema.Draft202012Validator(json_schema()).validate(document)


def test_schema_rejects_a_wrong_document() -> None:
    document = msgspec.json.decode((ROOT / "python" / "msgwire" / "examples" / "session.json").read_bytes())
    document["messages"][0]["source"] = "telepathy"
    errors = list(jsonschema.Draft202012Validator(json_schema()).iter_errors(document))
    assert errors, "a source outside the enum must not validate"
