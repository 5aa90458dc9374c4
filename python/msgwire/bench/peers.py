"""What the stream benches hand msgwire's peers, written once for ``msgwire bench`` and benches/:
a body cut into network-sized reads, a mock HTTP transport that streams it (so the SDKs and
httpx-sse read the same bytes as msgwire, with no network), and the loops people write by hand.

The peers' libraries are imported when a loop runs, not with this module: ``msgwire bench``
lists a peer that is not installed as skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

NETWORK_CHUNK = 16 * 1024  # what an HTTP client typically hands over per read


def pieces(data: bytes, size: int = NETWORK_CHUNK) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def mock_transport(data: bytes, http: ModuleType) -> Any:
    """A mock transport of ``http`` (httpx, or httpx2, which recent SDKs take) answering every
    request with ``data`` as a streamed SSE body, in network-sized chunks."""
    chunks = pieces(data)

    class Body(http.SyncByteStream):  # type: ignore[name-defined, misc]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return http.MockTransport(handler)


def httpx_sse_loop(client: Any) -> tuple[str, list[tuple[str, str, str]]]:
    """What people write by hand for a Chat Completions stream: httpx-sse, ``json.loads`` per
    event, and an accumulator keyed on the tool call's index. Returns the text and the calls
    (id, name, arguments)."""
    import httpx_sse

    text: list[str] = []
    calls: dict[int, list[str]] = {}
    with httpx_sse.connect_sse(client, "POST", "http://bench/v1/chat/completions") as source:
        for event in source.iter_sse():
            if event.data == "[DONE]":
                break
            for choice in json.loads(event.data)["choices"]:
                delta = choice["delta"]
                if delta.get("content"):
                    text.append(delta["content"])
                for call in delta.get("tool_calls") or ():
                    entry = calls.setdefault(call["index"], ["", "", ""])
                    entry[0] = call.get("id") or entry[0]
                    function = call.get("function") or {}
                    entry[1] = function.get("name") or entry[1]
                    entry[2] += function.get("arguments") or ""
    return "".join(text), [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]


def split_and_parse(body: bytes) -> int:
    """``orjson.loads`` of every data line, the lines split out in Python as a hand-written loop
    must: the JSON floor of a stream. Returns how many lines it parsed."""
    import orjson

    parsed = 0
    for line in body.split(b"\n"):
        if line.startswith(b"data: {"):
            orjson.loads(line[6:])
            parsed += 1
    return parsed
