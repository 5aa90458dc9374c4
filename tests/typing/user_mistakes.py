"""Mistakes mypy --strict must catch (tests/test_typing.py expects exactly these errors, one per
line marked `# error:`)."""

from __future__ import annotations

import msgwire


def mistakes(body: bytes, event: msgwire.Event) -> None:
    msgwire.assemble(body, "opnai")  # error: arg-type
    msgwire.stream(body, "openai", partial_arg=True)  # error: call-arg
    if event.type == "usage":
        print(event.text)  # error: attr-defined
    msgwire.transcode(body, "openai", "antropic")  # error: arg-type
