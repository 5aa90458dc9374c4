import msgwire
from msgwire import ServerToolCallBlock, TextBlock, formats

with open("tests/fixtures/realworld/anthropic/claude-web-search-citations-long.sse", "rb") as f:
    reply = msgwire.assemble(f.read(), "anthropic")
search = next(b for b in reply.content if isinstance(b, ServerToolCallBlock))
print(search.name, search.arguments)                     # web_search {"query": ...}
for block in reply.content:
    if isinstance(block, TextBlock):
        for c in block.citations:                        # kind, url, title, cited_text, span
            print(c.kind, c.url)
converted = formats.convert_response(reply, "openai-responses")
# the citations are url_citation annotations there; the web search, Anthropic's own, is reported
