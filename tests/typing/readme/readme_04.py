import msgwire

with open("python/msgwire/examples/streams/anthropic-thinking.sse", "rb") as recording:
    response = recording.read()[:4000]             # a stream cut before its end
try:
    message = msgwire.assemble(response, "anthropic")
except msgwire.StreamError as exc:                 # here a TruncatedStreamError
    if exc.partial_message is not None:            # None when no stream was read (a request that failed)
        print(exc.offset, exc.partial_message.text)    # 4000 Here are the basic (stop_reason "error")
