"""A Lambda Runtime API on 127.0.0.1, as `awslambdaric` talks to it inside a Lambda container.

`GET /2018-06-01/runtime/invocation/next` hands out the queued events one by one (and holds the
runtime there once the queue is empty); the handler's result or error comes back on
`POST .../invocation/{id}/response|error`, an init failure on `POST .../init/error`.
"""

from __future__ import annotations

import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/2018-06-01/runtime"
FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:bookrag-runtime-test"


class RuntimeApi:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self._events: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        for i, event in enumerate(events):
            self._events.put((f"request-{i}", event))
        self.results: queue.Queue[tuple[str, str, Any]] = queue.Queue()  # (request id, "response"|"error", body)
        self._stop = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != f"{PREFIX}/invocation/next":
                    self.send_error(404)
                    return
                while not api._stop.is_set():
                    try:
                        request_id, event = api._events.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    body = json.dumps(event).encode()
                    self.send_response(200)
                    self.send_header("Lambda-Runtime-Aws-Request-Id", request_id)
                    self.send_header("Lambda-Runtime-Deadline-Ms", "9999999999999")
                    self.send_header("Lambda-Runtime-Invoked-Function-Arn", FUNCTION_ARN)
                    self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = self.path.removeprefix(PREFIX).strip("/").split("/")
                if parts[:2] == ["init", "error"]:
                    api.results.put(("init", "error", raw.decode(errors="replace")))
                elif len(parts) == 3 and parts[0] == "invocation" and parts[2] in ("response", "error"):
                    api.results.put((parts[1], parts[2], json.loads(raw or b"null")))
                else:
                    self.send_error(404)
                    return
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    def __enter__(self) -> RuntimeApi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
