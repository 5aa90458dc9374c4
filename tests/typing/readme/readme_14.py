import msgwire
from msgwire.harness.providers import OpenAI, Request
from msgwire.testing import ScriptedServer, reply, tool_call

tools = [msgwire.Tool(name="read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})]
script = [reply([tool_call("read_file", {"path": "notes.txt"})]), reply("notes.txt says: buy milk.")]

with ScriptedServer(script) as server, OpenAI(base_url=server.url, api_key="sk-test", model="gpt-4o") as model:
    history: list[msgwire.Message] = [msgwire.user("What does notes.txt say?")]
    request = Request(messages=history, tools=tools, max_tokens=200)
    with model.stream(request) as stream:        # sent; retried only before the first body byte
        for event in stream:                     # msgwire events as they arrive
            if event.type == "tool_call_end":
                print("call:", event.block.name, event.block.parsed_arguments())
        calls = stream.message()                 # also after a failure: stop_reason="error"
    history += [calls, msgwire.tool_result(calls.tool_calls[0].id, "buy milk")]
    answer = model.complete(Request(messages=history, tools=tools, max_tokens=200))  # not streamed
    print(answer.text)                           # notes.txt says: buy milk.
