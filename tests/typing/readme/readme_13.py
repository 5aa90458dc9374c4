import sys, msgwire
from pathlib import Path
from msgwire.harness import resources
from msgwire.harness.resources import FileResolver, ImageRecognizer, Rules, TokenBudget, parse_mentions

Path("/tmp/ws").mkdir(exist_ok=True)
Path("/tmp/ws/app.py").write_text("import os\nPORT = 8080\nDEBUG = False\n")
Path("/tmp/ws/.env").write_text("TOKEN=hunter2\n")

files = FileResolver("/tmp/ws", permissions={"user": Rules(allow=("**",)), "planner": Rules(allow=("docs/**",))})
message = parse_mentions(msgwire.user('Why @app.py:2-3 and not @.env? See @"docs/my notes.md".'))
images = ImageRecognizer(files=files)      # no vision model given: auto reads images with OCR
mcp = resources.MCPResources({"docs": [sys.executable, "tests/harness/resources/mcp_resource_server.py"]})
with mcp:
    readme = mcp.context(msgwire.MCPResourceBlock(server_name="docs", resource_uri="docs://readme"))
    history = resources.resolve([readme, message], [files, images, mcp], role="user")
    pruned = TokenBudget(8000, last_used=mcp.last_used).prune(history)  # LRU resources out first
assert isinstance(history[1], msgwire.UserMessage)  # the user's message, resolved
for block in history[1].content:
    if isinstance(block, msgwire.FileReferenceBlock):
        print(block.path, block.status, block.error)
parts = msgwire.formats.to_request(pruned.messages, "anthropic")["messages"][0]["content"]
print(parts[0]["text"].splitlines()[0])      # the resource, merged into the user turn
print(parts[2]["text"])                      # the file reference, lines numbered
