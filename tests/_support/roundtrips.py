"""A relay between PostgreSQL clients and a server's Unix socket that counts round trips: a
"flight" is what a client sends before it hears back, so a call that waits for the server
``n`` times makes ``n`` flights. Point a store at ``RoundTrips(server).url(...)`` and read
``flights`` around the call.

A flight begins when a client writes after the server last spoke on that connection (or
first); bytes a client sends while it has not heard back belong to the same flight, however
the kernel splits them. The server's words are held back ``delay`` seconds (what a network
would do), and whatever the client sent meanwhile joins the flight before they are passed on:
a client that did not wait for them is not counted twice.

``lose_commit_reply()``: the next reply that reports a ``COMMIT`` is read whole (up to the
server's ReadyForQuery: the transaction is stored) and not passed on; the client's connection is
closed instead, as a network that fails at that moment would (a reply lost after the commit).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from types import TracebackType

from tests._support.postgres import PostgresServer

__all__ = ["RoundTrips"]


class RoundTrips:
    """A relay for ``server`` in a directory of its own (``with RoundTrips(server) as relay``)."""

    def __init__(self, server: PostgresServer, *, delay: float = 0.01) -> None:
        self.server = server
        self.delay = delay
        self.folder = Path(tempfile.mkdtemp(prefix="msgwire-relay-"))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.folder / ".s.PGSQL.5432"))
        self._listener.listen(64)
        self._lock = threading.Lock()
        self._flights = 0
        self._closed = threading.Event()
        self._lose_commit = threading.Event()
        self.lost_replies = 0  # replies lose_commit_reply() kept from their client
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, name="relay-accept", daemon=True)
        self._accepting.start()

    @property
    def flights(self) -> int:
        """Flights so far, every connection's."""
        with self._lock:
            return self._flights

    def lose_commit_reply(self) -> None:
        """Keep the next reply that reports a ``COMMIT`` from its client (see the module docs)."""
        self._lose_commit.set()

    def url(self, options: str | None = None) -> str:
        """A ``postgresql://`` URL to the server through this relay."""
        query = {"host": str(self.folder), "port": "5432"} | ({"options": options} if options else {})
        return f"postgresql://postgres@/postgres?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"

    def schema_url(self) -> str:
        """Like ``PostgresServer.schema_url``: a fresh schema of its own, through the relay."""
        direct = self.server.schema_url()
        options = urllib.parse.parse_qs(urllib.parse.urlsplit(direct).query)["options"][0]
        return self.url(options)

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for thread in [self._accepting, *self._threads]:
            thread.join(10)
        with contextlib.suppress(OSError):
            os.unlink(self.folder / ".s.PGSQL.5432")
        with contextlib.suppress(OSError):
            self.folder.rmdir()

    def __enter__(self) -> RoundTrips:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(self.server.socket_dir / ".s.PGSQL.5432"))
            thread = threading.Thread(target=self._relay, args=(client, upstream), name="relay", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        heard_back = True  # a client's first bytes begin a flight
        with client, upstream, selectors.DefaultSelector() as selector:
            selector.register(client, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, client)
            while not self._closed.is_set():
                for key, _ in selector.select(0.2):
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    try:
                        data = source.recv(1 << 16)
                    except OSError:
                        return
                    if not data:
                        return
                    try:
                        if source is client:
                            if heard_back:
                                with self._lock:
                                    self._flights += 1
                            heard_back = False
                        else:
                            if self._lose_commit.is_set():
                                kept = self._unless_commit(upstream, data)
                                if kept is None:
                                    return  # closes the client's connection, the reply unsent
                                data = kept
                            time.sleep(self.delay)
                            upstream.sendall(_pending(client))  # sent before hearing this: the same flight
                            heard_back = True
                        key.data.sendall(data)
                    except OSError:
                        return

    def _unless_commit(self, upstream: socket.socket, data: bytes) -> bytes | None:
        """The reply beginning with ``data``, read whole (up to ReadyForQuery: everything
        before it was executed); ``None`` when it reports a ``COMMIT`` and is to be lost."""
        reply = data
        while not _ready_for_query(reply):
            more = upstream.recv(1 << 16)
            if not more:
                break
            reply += more
        if b"C\x00\x00\x00\x0bCOMMIT\x00" not in reply:
            return reply
        with self._lock:
            if not self._lose_commit.is_set():
                return reply
            self._lose_commit.clear()
            self.lost_replies += 1
        return None


def _ready_for_query(reply: bytes) -> bool:
    """Whether ``reply`` ends with the server's ReadyForQuery (idle: the transaction ended)."""
    return reply.endswith((b"Z\x00\x00\x00\x05I", b"Z\x00\x00\x00\x05E", b"Z\x00\x00\x00\x05T"))


def _pending(sock: socket.socket) -> bytes:
    """What ``sock`` has received and not been read yet (without waiting)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(1 << 16, socket.MSG_DONTWAIT)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
