from msgwire import Message, assistant, formats, tool_result, user
from msgwire.types import ToolCallBlock

cache = formats.RequestCache()
history: list[Message] = [user("What is in notes.txt?")]
history.append(assistant([ToolCallBlock(id="call_1", name="read_file", arguments='{"path": "notes.txt"}')]))
body = formats.to_request_json(history, "anthropic", cache=cache)      # the call gets a placeholder
history.append(tool_result("call_1", "buy milk", tool_name="read_file"))
body = formats.to_request_json(history, "anthropic", cache=cache)      # written from the new result
assert body == formats.to_request_json(history, "anthropic")           # the bytes of a full build
