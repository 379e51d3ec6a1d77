"""A scripted HTTP server on 127.0.0.1 that stands in for Cohere, an LLM API or Qdrant.

Tests queue replies per path; each request takes the next reply (the last one repeats). A reply can
be JSON, raw bytes, a status with headers, a hang (held open until the client gives up, released at
teardown: no sleeps), a connection reset, or a callable computing the reply from the request.
Every request is recorded, so tests assert on the real wire format the SDKs produced.
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


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str -> raw
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    reset: bool = False


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


ReplySpec = Reply | Callable[[Recorded], Reply]


class StubServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[ReplySpec]] = {}
        self.requests: list[Recorded] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: with Nagle on, the body waits for the client's
            # delayed ACK (~40 ms a reply on Linux).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                recorded = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
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
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A loopback port with nothing listening: connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
