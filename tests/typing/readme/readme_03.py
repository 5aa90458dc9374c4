import msgwire

with open("python/msgwire/examples/streams/openai-parallel-tool-calls.sse", "rb") as recording:
    for event in msgwire.stream(recording, "openai", partial_args=True):
        if event.type == "tool_call_delta":
            print(event.index, event.parsed)     # 0 {'city': 'Mexic'}, then 0 {'city': 'Mexico Ci'}, ...
