"""The model server of the many-conversations bench (``benches/many.py``): OpenAI Chat Completions
over HTTP/1.1 keep-alive, in a process of its own, on asyncio, paced as a real model is.

Every conversation takes two model calls: the first answer streams a tool call (``lookup``, its
arguments in ``CALL_CHUNKS`` pieces), the second a 100-chunk text answer (``ANSWER_CHUNKS``). A
request is answered by the step its body is at (the number of assistant messages it holds).
Chunks leave ``pace`` seconds apart; every stream is written from one timer tick per pace (a loop
over the streams due, not a sleep per stream), so that the server, not the client, never becomes
the bottleneck at a thousand streams. The first chunk of the answer names its id
``chatcmpl-<server time in ns>``, so that a client can measure the time to its first token.

Run: ``python benches/many_server.py PACE``; prints ``http://127.0.0.1:PORT``, serves until its
standard input closes.
"""

from __future__ import annotations

import asyncio
import collections
import os
import sys
import time

import msgspec

CALL_CHUNKS = 10
ANSWER_CHUNKS = 100
WORD = "token "
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _chunk(cid: str, delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + _encode(body) + b"\n\n"


def _usage(cid: str) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o", "choices": []}
    body["usage"] = {"prompt_tokens": 50, "completion_tokens": 100, "total_tokens": 150}
    return b"data: " + _encode(body) + b"\n\n"


def _tool_call_events(n: int) -> list[bytes]:
    cid = f"chatcmpl-call{n}"
    arguments = _encode({"key": f"k{n}", "padding": "x" * 40}).decode()
    step = -(-len(arguments) // CALL_CHUNKS)
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    first = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": "lookup", "arguments": ""}}
    events = [_chunk(cid, {"role": "assistant", "tool_calls": [first]})]
    events += [_chunk(cid, {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    return [*events, _chunk(cid, {}, "tool_calls"), _usage(cid), b"data: [DONE]\n\n"]


def _answer_events() -> list[bytes]:
    # the first chunk's id is stamped when it is written (see Stream.next)
    events = [_chunk("chatcmpl-later", {"content": WORD}) for _ in range(ANSWER_CHUNKS - 1)]
    return [*events, _chunk("chatcmpl-later", {"content": WORD}, "stop"), _usage("chatcmpl-later"), b"data: [DONE]\n\n"]


_ANSWER = _answer_events()


class _Stream:
    __slots__ = ("at", "done", "events", "stamp", "writer")

    def __init__(self, writer: asyncio.StreamWriter, events: list[bytes], stamp: bool) -> None:
        self.writer, self.events, self.at, self.stamp = writer, events, 0, stamp
        self.done = asyncio.Event()

    def next(self) -> bool:
        """Write the next event as one HTTP chunk; whether more are left."""
        event = self.events[self.at]
        if self.at == 0 and self.stamp:  # the answer's first token: when the server wrote it
            event = _chunk(f"chatcmpl-{time.time_ns()}", {"role": "assistant", "content": WORD})
        self.writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.at += 1
        if self.at < len(self.events):
            return True
        self.writer.write(b"0\r\n\r\n")
        self.done.set()
        return False


class Server:
    def __init__(self, pace: float) -> None:
        self.pace = pace
        self.due: collections.deque[_Stream] = collections.deque()
        self.calls = 0

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(self.pace)
            for _ in range(len(self.due)):
                stream = self.due.popleft()
                if stream.next():
                    self.due.append(stream)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = _decode(await reader.readexactly(length)) if length else {}
                step = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                    b"x-request-id: req_bench\r\n\r\n"
                )
                if step == 0:
                    self.calls += 1
                    stream = _Stream(writer, _tool_call_events(self.calls), stamp=False)
                else:
                    stream = _Stream(writer, _ANSWER, stamp=True)
                if stream.next():
                    self.due.append(stream)
                await stream.done.wait()  # the next request on this connection after this reply's end
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()


async def main(pace: float) -> None:
    server = Server(pace)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0, backlog=4096)
    port = listener.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}", flush=True)
    ticker = asyncio.create_task(server.tick())
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    ticker.cancel()
    listener.close()


if __name__ == "__main__":
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})  # the last core: the client has the first
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.02))
