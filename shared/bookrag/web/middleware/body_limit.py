"""Request body size limit (OWASP API4): oversized bodies get 413 before any parsing."""

from __future__ import annotations

from typing import Any

from bookrag.errors import PayloadTooLargeError
from bookrag.web.errors import error_response

MAX_BODY_BYTES = 16 * 1024  # a 1,000-character query in JSON is far below this

Scope = dict[str, Any]


class BodySizeLimit:
    """Pure ASGI middleware: cheaper than BaseHTTPMiddleware on every request."""

    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(scope["path"], PayloadTooLargeError(self.max_bytes))(scope, receive, send)
            return
        # Also count what actually arrives: a client may send a body without (or beyond) its length.
        buffered: list[dict[str, Any]] = []
        size = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await error_response(scope["path"], PayloadTooLargeError(self.max_bytes))(scope, receive, send)
                return
            if not message.get("more_body"):
                break

        async def replay() -> dict[str, Any]:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)
