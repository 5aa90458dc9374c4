"""The recorded provider streams of tests/fixtures/wire: every file, its test id and its dialect."""

from __future__ import annotations

from pathlib import Path

WIRE = Path(__file__).parents[1] / "fixtures" / "wire"

FOLDER_DIALECT = {
    "openai": "openai",
    "openai-compat": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}


FIXTURES = sorted(p for p in WIRE.glob("*/*") if p.suffix in (".sse", ".ndjson"))


FIXTURE_IDS = [f"{p.parent.name}/{p.name}" for p in FIXTURES]


def dialect_of(path: Path) -> str:
    if path.parent.name == "openai" and path.name.startswith("responses-"):
        return "openai-responses"
    return FOLDER_DIALECT[path.parent.name]
