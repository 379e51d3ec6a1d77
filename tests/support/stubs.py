"""A scripted HTTP server on 127.0.0.1 that stands in for Cohere, an LLM API or Qdrant.

Tests queue replies per path; each request takes the next reply (the last one repeats). A reply can
be JSON, raw bytes, a status with headers, a hang (held open until the client gives up, released at
teardown: no sleeps), a connection reset, a streamed body (pieces written one by one as HTTP chunks,
with `Hold` points where the stub waits for the test, and `CUT` to drop the connection mid-body), or
a callable computing the reply from the request. Every request is recorded, so tests assert on the
real wire format the SDKs produced.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Hold:
    """A point in a streamed body where the stub stops writing until the test calls `release()`
    (or the stub is torn down). `released_in_time` says which: True when the test released it, False
    when the stub gave up waiting, None while it has not been reached."""

    def __init__(self, bound_s: float = 30.0) -> None:
        self._event = threading.Event()
        self._bound_s = bound_s
        self.released_in_time: bool | None = None

    def release(self) -> None:
        self._event.set()

    def wait(self) -> None:
        self.released_in_time = self._event.wait(self._bound_s)


# In a streamed body: close the connection without ending the chunked body (a dropped upstream).
CUT = object()
StreamPiece = bytes | Hold | object


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str -> raw
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    reset: bool = False
    stream: list[StreamPiece] | None = None  # a chunked body, written piece by piece (text/event-stream)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: tuple[str, int] = ("", 0)  # the client's address: one per TCP connection

    def json(self) -> Any:
        return json.loads(self.body or b"null")


ReplySpec = Reply | Callable[[Recorded], Reply]


class StubServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[ReplySpec]] = {}
        self.requests: list[Recorded] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._holds: list[Hold] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: with Nagle on, the body waits for the client's
            # delayed ACK (~40 ms a reply on Linux).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except ConnectionError:  # the client went away (it timed out under test): nothing to answer
                    self.close_connection = True

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                recorded = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                    self.client_address[:2])
                with stub._lock:
                    stub.requests.append(recorded)
                    spec = stub._next(path)
                reply = spec(recorded) if callable(spec) else spec
                if reply.hang:
                    stub._release.wait(60)
                    self.close_connection = True
                    return
                if reply.reset:
                    # SO_LINGER 0 makes close() send RST: the client sees "connection reset by peer".
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply.stream is not None:
                    self._stream(reply)
                    return
                if isinstance(reply.body, bytes | str):
                    payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
                    ctype = "application/json"
                else:
                    payload = json.dumps(reply.body if reply.body is not None else {}).encode()
                    ctype = "application/json"
                self.send_response(reply.status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    for piece in reply.stream or []:
                        if isinstance(piece, Hold):
                            with stub._lock:
                                stub._holds.append(piece)
                            piece.wait()
                        elif piece is CUT:
                            self.close_connection = True
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        elif isinstance(piece, bytes) and piece:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client gave up (a timeout under test): nobody is left to write to
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits for one, and every test stops a stub.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _next(self, path: str) -> ReplySpec:
        for prefix in sorted(self.routes, key=len, reverse=True):
            if path.startswith(prefix):
                queue = self.routes[prefix]
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return Reply(404, {"message": "no stub for " + path})

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def on(self, path_prefix: str, *replies: ReplySpec) -> StubServer:
        self.routes[path_prefix] = list(replies)
        return self

    def calls(self, path_prefix: str = "") -> list[Recorded]:
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        with self._lock:
            for hold in self._holds:
                hold.release()
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A loopback port with nothing listening: connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
