import httpx
from msgwire.sse import connect_sse, SSEParser

url = "https://example.com/events"           # your text/event-stream endpoint
with httpx.Client() as client, connect_sse(client, "GET", url) as source:
    for event in source.iter_sse():          # ServerSentEvent(event, data, id, retry), .json()
        print(event.event, event.data)

parser = SSEParser()
events = parser.feed(b"data: one\n\ndata: tw")  # every event this chunk completed, in one call: "one"
