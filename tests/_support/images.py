"""Test support for the resources tests: images rendered with Pillow, a real HTTP server on
127.0.0.1 (image files, redirects, a scripted model answering OpenAI Chat Completions), and a
vision model adapter that talks to it through msgwire's own request and response formats.

Fonts: Debian's fonts-dejavu-core (Makefile SYSTEM_PACKAGES)."""

from __future__ import annotations

import io
import json
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from PIL import Image, ImageDraw, ImageFont

import msgwire
from msgwire import AssistantMessage, UserMessage, formats

FONTS = "/usr/share/fonts/truetype/dejavu/"
ENGLISH = [
    "The quick brown fox jumps over the lazy dog.",
    "Please pay the invoice within thirty days.",
    "Thank you for your order and your trust.",
]
GERMAN = [
    "Bitte zahlen Sie die Rechnung innerhalb von",
    "dreißig Tagen. Vielen Dank für Ihre Bestellung",
    "und Ihr Vertrauen in unsere Arbeit.",
]


def render(
    lines: list[str],
    *,
    font: str = "DejaVuSans.ttf",
    size: int = 28,
    rotate: int = 0,
    noise: float = 0.0,
    fmt: str = "PNG",
) -> bytes:
    """Black text on white, one line per entry; ``noise``: that share of pixels flipped at random
    (seeded); ``rotate``: degrees counter-clockwise."""
    face = ImageFont.truetype(FONTS + font, size)
    width = max(int(face.getlength(line)) for line in lines) + 60
    step = int(size * 1.8)
    image = Image.new("L", (width, len(lines) * step + 40), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((30, 20 + i * step), line, font=face, fill=0)
    if noise:
        rnd = random.Random(7)
        pixels = image.load()
        assert pixels is not None
        for _ in range(int(image.width * image.height * noise)):
            pixels[rnd.randrange(image.width), rnd.randrange(image.height)] = rnd.choice((0, 255))
    if rotate:
        image = image.rotate(rotate, expand=True, fillcolor=255)
    out = io.BytesIO()
    image.convert("RGB" if fmt == "JPEG" else "L").save(out, fmt)
    return out.getvalue()


def words(text: str) -> list[str]:
    return [w.strip(".,:;") for w in text.split()]


class Server:
    """A real HTTP server on 127.0.0.1: ``routes[path] = (status, headers, body)``, or a callable
    taking the request body and returning that; every request is recorded."""

    def __init__(self) -> None:
        self.routes: dict[str, Any] = {}
        self.requests: list[tuple[str, str, bytes]] = []
        routes, requests = self.routes, self.requests

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                requests.append((self.command, self.path, body))
                route = routes.get(self.path.split("?")[0], (404, {}, b"not found"))
                status, headers, payload = route(body) if callable(route) else route
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@contextmanager
def serving(**routes: Any) -> Iterator[Server]:
    with Server() as server:
        server.routes.update({"/" + k.replace("__", "."): v for k, v in routes.items()})
        yield server


def scripted_model(
    reply: Callable[[dict[str, Any]], AssistantMessage],
) -> Callable[[bytes], tuple[int, dict[str, str], bytes]]:
    """A model endpoint answering like OpenAI Chat Completions (the reply written by
    ``msgwire.to_response``), from what ``reply`` makes of the request body."""

    def answer(body: bytes) -> tuple[int, dict[str, str], bytes]:
        message = reply(json.loads(body))
        return 200, {"Content-Type": "application/json"}, json.dumps(msgwire.to_response(message, "openai")).encode()

    return answer


class HttpVision:
    """A ``VisionModel`` over HTTP: the request written by ``formats.to_request``, the reply read
    by ``msgwire.from_response`` (what the providers of harness part 2 do)."""

    def __init__(self, url: str, *, sees_images: bool = True) -> None:
        self.url = url
        self._sees = sees_images

    @property
    def sees_images(self) -> bool:
        return self._sees

    def analyze(self, message: UserMessage) -> AssistantMessage:
        body = {"model": "scripted-vision", **formats.to_request([message], "openai")}
        response = httpx.post(self.url, json=body, timeout=10)
        response.raise_for_status()
        return msgwire.from_response(response.content, "openai")
