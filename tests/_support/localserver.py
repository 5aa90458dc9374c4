"""A real HTTP server on 127.0.0.1 for the wire layer's tests: each path serves a scripted
response (status, headers, body in chunks), so httpx, requests and aiohttp read real sockets.

    with LocalServer() as server:
        server.route("/x", Reply(401, body=b'{"error": ...}', headers={"x-request-id": "req_1"}))
        httpx.get(server.url("/x"))
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunk: int = 997  # bytes per write: the client sees the body in pieces


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {}
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                reply = routes.get(self.path, Reply(404, b"no route"))
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                for start in range(0, len(reply.body), reply.chunk):
                    self.wfile.write(reply.body[start : start + reply.chunk])
                    self.wfile.flush()

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def route(self, path: str, reply: Reply) -> str:
        self.routes[path] = reply
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
