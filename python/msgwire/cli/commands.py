"""The ``msgwire`` command's subcommands, each with its line in ``msgwire --help``, in their order.

Read without importing the commands' modules: ``msgwire --help`` lists the commands from here,
and only the module of the command that runs (or whose ``--help`` is asked for) is imported, with
what it needs (rich, the wire layer, the harness). Each module ``cli/<name>.py`` has
``add_parser(commands)``, which gives its parser this line as its ``help``.
"""

from __future__ import annotations

SUMMARIES: dict[str, str] = {
    "parse": "decode a recorded provider stream (SSE or NDJSON) and show the assembled message",
    "convert": "convert a session or a request body between the canonical envelope and every dialect",
    "transcode": "rewrite a recorded provider stream in another dialect's wire format",
    "chat": "a live agent session: streamed answers, tool calls approved one by one, /mode /fork /save /audit",
    "sessions": "the conversations msgwire chat stored: id, started, last activity, messages, first words",
    "audit": "show an audit trail (an export, or a stored conversation) as a timeline and verify its hash chain",
    "bench": "time msgwire beside the installed peers (SDKs, httpx-sse, pydantic-ai, msgspec, orjson)",
    "demo": "show msgwire on the bundled examples (what `make demo` runs)",
}
