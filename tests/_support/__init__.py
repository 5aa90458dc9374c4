"""What the tests share and are not tests themselves, imported as ``tests._support.<module>``
(the repository root is on pytest's ``pythonpath``):

- ``strategies``: hypothesis strategies for every public type, and ``examples(n)``;
- ``streamgen``, ``streamgen_responses``: hypothesis strategies for realistic provider streams;
- ``streams``: provider streams built by hand (SSE bodies, chunks, one tool call's fragments);
- ``wire``: the recorded streams of tests/fixtures/wire, their ids and dialects;
- ``sdk``: the official SDK accumulators over a mock transport, and their comparisons with
  msgwire's messages;
- ``localserver``: a real HTTP server on 127.0.0.1.
- ``mcp_servers``: the SDK-written MCP servers of the resource tests, as command lines, and a
  streamable HTTP one the fault tests kill and start again.
"""
