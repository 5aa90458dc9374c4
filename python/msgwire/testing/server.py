"""``ScriptedServer``: a real HTTP server on 127.0.0.1, in a thread, that answers every provider
dialect with the replies scripted for it (``replies.py``) and records every request."""

from __future__ import annotations

import http.server
import re
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from msgwire.formats import to_response_json
from msgwire.stream import assemble
from msgwire.transcode import transcode
from msgwire.types import AssistantMessage, Dialect

from .replies import KEEP, Reply, error_body, failed_body, failed_stream, stream_bytes

__all__ = ["Received", "ScriptedServer"]

_CONTENT_TYPES = {"gemini": "text/event-stream", "ollama": "application/x-ndjson"}
# A keep-alive: an SSE comment (which every reader skips), an empty line in NDJSON.
_KEEPALIVE = {"ollama": b"\n", "*": b": keep-alive\n\n"}
_EVENT_END = {"ollama": re.compile(rb"(?<=\n)"), "*": re.compile(rb"(?<=\n\n)|(?<=\r\n\r\n)")}


@dataclass
class Received:
    """A request the server received, and what it did about it (final once ``done`` is set)."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    dialect: str | None
    stream: bool
    model: str | None
    status: int = 0
    request_id: str = ""
    body_size: int = 0
    """Bytes of the reply body the script had to send."""
    bytes_sent: int = 0
    """Bytes of the reply body sent (chunk framing not counted)."""
    completed: bool = False
    client_closed: bool = False
    """The client closed the connection before the body's end."""
    first_byte_at: float | None = None
    """``time.perf_counter()`` when the first body byte was written."""
    keepalives: int = 0
    """Keep-alives sent while the body waited (``Reply.keepalive``; not in ``bytes_sent``)."""
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def json(self) -> Any:
        return msgspec.json.decode(self.body)


_SUFFIXES: tuple[tuple[str, Dialect], ...] = (
    ("/chat/completions", "openai"),
    ("/responses", "openai-responses"),
    ("/messages", "anthropic"),
)


def _route(method: str, path: str, body: bytes) -> tuple[Dialect | None, bool, str | None]:
    """The dialect, streamed or not, and model of a request."""
    route = path.partition("?")[0]
    try:
        data = msgspec.json.decode(body) if body else {}
    except msgspec.DecodeError:
        data = {}
    data = data if isinstance(data, dict) else {}
    model = data.get("model") if isinstance(data.get("model"), str) else None
    if method != "POST":
        return None, False, None
    for suffix, dialect in _SUFFIXES:
        if route.endswith(suffix):
            return dialect, bool(data.get("stream")), model
    if route.endswith("/api/chat"):
        return "ollama", data.get("stream", True) is not False, model
    head, _, method_name = route.rpartition(":")
    if method_name in ("streamGenerateContent", "generateContent") and "/models/" in head:
        return "gemini", method_name == "streamGenerateContent", head.rpartition("/models/")[2]
    return None, False, None


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each piece leaves at once (no 40 ms Nagle/delayed-ACK stall)
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_POST(self) -> None:
        self.server.owner._handle(self)

    def do_GET(self) -> None:
        self.server.owner._handle(self)


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        failure = sys.exc_info()[1]
        if isinstance(failure, (ConnectionError, TimeoutError)):
            return  # a client that went away between two requests of a kept-alive connection
        if isinstance(failure, Exception):
            self.owner.errors.append(failure)


class ScriptedServer:
    """The server: ``ScriptedServer(replies, respond=None)``; a context manager (or
    ``start()`` / ``stop()``). Replies are served in turn; ``respond(received) -> Reply``, when
    given, answers every request instead. A request with no reply left gets a 400
    ``script_exhausted`` error."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        respond: Callable[[Received], Reply] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        hold_timeout: float = 10.0,
    ) -> None:
        self._replies = list(replies)
        self._respond = respond
        self._hold_timeout = hold_timeout
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self.requests: list[Received] = []
        self.errors: list[Exception] = []
        """Failures of the server itself (a bug, never a client's doing)."""
        self._httpd = _HTTPServer((host, port), _Handler, bind_and_activate=False)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT``) to give every provider."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, *replies: Reply) -> None:
        """More replies, served after those already scripted."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Replies not served yet."""
        with self._lock:
            return len(self._replies)

    def start(self) -> ScriptedServer:
        self._httpd.server_bind()
        self._httpd.server_activate()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="msgwire-scripted", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def wait(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Wait until ``count`` requests were received and answered (their ``done`` set);
        returns them. Raises ``TimeoutError`` when that takes longer than ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"{len(self.requests)} requests received, waiting for {count}")
            received = self.requests[:count]
        for record in received:
            if not record.done.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"request {record.index} is still being answered")
        return received

    # --- serving ---------------------------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        dialect, streamed, model = _route(handler.command, handler.path, body)
        with self._lock:
            record = Received(
                index=len(self.requests),
                method=handler.command,
                path=handler.path,
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=body,
                dialect=dialect,
                stream=streamed,
                model=model,
                request_id=f"req_scripted_{len(self.requests) + 1:04d}",
            )
            self.requests.append(record)
            self._lock.notify_all()
        try:
            if dialect is None:
                data = error_body("openai", 404, "not_found_error", f"no model API at {handler.path}")
                self._send_error(handler, record, 404, data)
                return
            answer = self._next(record)
            try:
                self._serve(handler, record, dialect, answer)
            except (BrokenPipeError, ConnectionResetError):
                record.client_closed = True
                handler.close_connection = True
            except Exception as failure:  # a reply the writers refuse: say so, as a server would
                if record.status:
                    raise
                data = error_body(dialect, 500, "api_error", f"scripted server: {failure}")
                self._send_error(handler, record, 500, data)
        finally:
            record.done.set()

    def _next(self, record: Received) -> Reply:
        if self._respond is not None:
            return self._respond(record)
        with self._lock:
            if self._replies:
                return self._replies.pop(0)
        return Reply(status=400, error_type="script_exhausted", error_message="the script has no reply left")

    def _serve(self, handler: _Handler, record: Received, dialect: Dialect, answer: Reply) -> None:
        if answer.drop:
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if answer.status >= 400:
            message = answer.error_message or f"scripted error {answer.status}"
            data = error_body(dialect, answer.status, answer.error_type, message, answer.error_code)
            if answer.sse:
                data = b"data: " + data + b"\n\n"
            self._send_error(handler, record, answer.status, data, answer.headers, sse=answer.sse)
            return
        data = self._body(record, dialect, answer)
        content_type = _CONTENT_TYPES.get(dialect, "text/event-stream") if record.stream else "application/json"
        record.status, record.body_size = answer.status, len(data)
        handler.send_response(answer.status)
        handler.send_header("content-type", content_type)
        handler.send_header("transfer-encoding", "chunked")
        handler.send_header(_request_id_header(dialect), record.request_id)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        self._send_body(handler, record, dialect, answer, data)

    def _body(self, record: Received, dialect: Dialect, answer: Reply) -> bytes:
        if answer.in_stream:
            words = answer.error_message or "scripted error"
            if not record.stream:
                return failed_body(dialect, answer.error_type, words, answer.error_code)
            message = answer.message or AssistantMessage()
            return failed_stream(message, dialect, answer.error_type, words, answer.error_code)
        if answer.recorded is not None:
            source = answer.recorded_dialect or dialect
            if not record.stream:
                return to_response_json(assemble(answer.recorded, source), dialect, policy=KEEP)
            if source == dialect:
                return answer.recorded
            return b"".join(transcode([answer.recorded], source, dialect))
        message = answer.message or AssistantMessage(stop_reason="end_turn")
        if message.model is None and record.model:
            message = msgspec.structs.replace(message, model=record.model)
        return stream_bytes(message, dialect) if record.stream else to_response_json(message, dialect, policy=KEEP)

    def _send_error(
        self,
        handler: _Handler,
        record: Received,
        status: int,
        data: bytes,
        headers: dict[str, str] | None = None,
        *,
        sse: bool = False,
    ) -> None:
        record.status, record.body_size = status, len(data)
        handler.send_response(status)
        handler.send_header("content-type", "text/event-stream" if sse else "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header(_request_id_header(record.dialect or "openai"), record.request_id)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        record.first_byte_at = time.perf_counter()
        handler.wfile.write(data)
        record.bytes_sent, record.completed = len(data), True

    def _send_body(self, handler: _Handler, record: Received, dialect: str, answer: Reply, data: bytes) -> None:
        sock = handler.connection
        cuts = (answer.reset_after, answer.close_after, answer.hold_after)
        cut = next((c for c in cuts if c is not None), None)
        pieces = _pieces(data, dialect if record.stream else None, answer.chunk_size)
        if answer.keepalive and record.stream:
            ends = _event_ends(data, dialect)
            if answer.hold_after is not None:  # a comment inside an event would break it
                cut = max((end for end in ends if end <= answer.hold_after), default=0)
            keepalives = _KEEPALIVE["ollama" if dialect == "ollama" else "*"]
        else:
            ends, keepalives = set(), b""
        if answer.gate is not None:
            answer.gate.wait(self._hold_timeout)
        for i, piece in enumerate(pieces):
            if cut is not None and record.bytes_sent + len(piece) >= cut:
                self._write(handler, record, piece[: cut - record.bytes_sent])
                handler.close_connection = True
                if answer.reset_after is not None:
                    _reset(sock)
                elif answer.close_after is not None:
                    sock.shutdown(socket.SHUT_RDWR)
                else:
                    keepalive = keepalives if record.bytes_sent in ends else b""
                    record.client_closed = self._pause(handler, record, self._hold_timeout, answer.keepalive, keepalive)
                return
            self._write(handler, record, piece)
            keepalive = keepalives if record.bytes_sent in ends else b""
            if (
                answer.delay
                and i < len(pieces) - 1
                and self._pause(handler, record, answer.delay, answer.keepalive, keepalive)
            ):
                record.client_closed = True
                handler.close_connection = True
                return
        handler.wfile.write(b"0\r\n\r\n")
        record.completed = True

    def _write(self, handler: _Handler, record: Received, piece: bytes) -> None:
        if not piece:
            return
        if record.first_byte_at is None:
            record.first_byte_at = time.perf_counter()
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        record.bytes_sent += len(piece)

    def _pause(
        self, handler: _Handler, record: Received, seconds: float, interval: float | None, keepalive: bytes
    ) -> bool:
        """Let the body wait ``seconds``, sending ``keepalive`` every ``interval`` seconds
        meanwhile (between events only: none when empty); ``True`` as soon as the client closed
        the connection."""
        if not interval or not keepalive:
            return self._wait_closed(handler.connection, seconds)
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._wait_closed(handler.connection, min(interval, left)):
                return True
            if self._stopping.is_set():
                return False
            if deadline - time.monotonic() > 0:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(keepalive), keepalive))
                record.keepalives += 1
        return False

    def _wait_closed(self, sock: socket.socket, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; ``True`` as soon as the client closed the connection."""
        deadline = time.monotonic() + timeout
        while not self._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([sock], [], [], min(left, 0.1))
            if not readable:
                continue
            try:
                if sock.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:  # reset by the client
                return True
            time.sleep(min(left, 0.01))  # the client sent something (a next request): keep waiting
        return False


def _request_id_header(dialect: str) -> str:
    """Anthropic's API names its request id ``request-id`` (its SDK reads that); OpenAI's and the
    others' ``x-request-id``."""
    return "request-id" if dialect == "anthropic" else "x-request-id"


def _pieces(data: bytes, stream_dialect: str | None, chunk_size: int | None) -> list[bytes]:
    if chunk_size:
        return [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    if stream_dialect is None:
        return [data]
    pattern = _EVENT_END["ollama" if stream_dialect == "ollama" else "*"]
    return [piece for piece in pattern.split(data) if piece]


def _event_ends(data: bytes, dialect: str) -> set[int]:
    """The offsets in ``data`` where a stream event ends (where a keep-alive may go)."""
    pattern = _EVENT_END["ollama" if dialect == "ollama" else "*"]
    return {0, *(match.end() for match in pattern.finditer(data))}


def _reset(sock: socket.socket) -> None:
    """Close the connection with a TCP reset (what a crashed proxy or a dropped link looks like)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
