"""CORS for the sites in `CORS_ALLOWED_ORIGINS` (a book's pages calling the API through the widget).

Pure ASGI, the outermost middleware: a preflight (`OPTIONS` with `Access-Control-Request-Method`) from an
allowed origin is answered here, before the key check (browsers send no key with a preflight); any other
request from an allowed origin gets its `Access-Control-Allow-Origin` on the way out, errors included,
so the widget can read the error envelope. Another origin gets no CORS header: the browser blocks it,
and a preflight from it falls through to the app (405, in the envelope). No credentials: the widget
sends a publishable key in a header, never cookies. On Lambda, API Gateway's own CorsConfiguration
(template.yaml, the same origins) answers instead; it ignores these headers.
"""

from __future__ import annotations

from typing import Any

from bookrag.errors import BookRAGError
from bookrag.services.container import current
from bookrag.web.middleware.stamp import stamping

Scope = dict[str, Any]
_METHODS = b"GET, POST"
_HEADERS = b"content-type, x-api-key, authorization"
_MAX_AGE = b"600"


def _allowed() -> frozenset[str]:
    try:
        return current().settings.cors_origins
    except BookRAGError:  # invalid settings: the route answers that in the envelope; no site is allowed
        return frozenset()


class Cors:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin", b"").decode("latin-1")
        if not origin or origin.lower() not in _allowed():
            await self.app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": [
                *allow, (b"access-control-allow-methods", _METHODS), (b"access-control-allow-headers", _HEADERS),
                (b"access-control-max-age", _MAX_AGE), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return

        exposed = [*allow, (b"access-control-expose-headers", b"Retry-After, X-Retrieval-Mode, X-Query-Id")]
        await self.app(scope, receive, stamping(send, lambda: exposed))
