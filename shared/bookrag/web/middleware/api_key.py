"""API key authentication and per-key rate limiting (OWASP API2, API4), before any route runs.

Pure ASGI middleware, the outermost of the app: a request without a valid key is answered (401, or 429
with Retry-After) before its body is read, validated or embedded. On Lambda the API Gateway authorizer
has already refused invalid keys; this middleware then counts the request against its key's limit (one
UpdateItem) and checks the source IP's failures (one GetItem), and still verifies the key (its record is
cached for a minute per container) in case a route is ever exposed without the authorizer. Locally
(`bookrag serve`, AUTH_ENABLED=true, API_KEY_HASHES) it is the whole check, in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool

from bookrag.auth.guard import OPEN_PATHS, Guard, presented_key, request_origin
from bookrag.domain.keys import ANONYMOUS
from bookrag.errors import BookRAGError
from bookrag.observability import logger
from bookrag.services.container import current
from bookrag.web.errors import error_response

Scope = dict[str, Any]
BOOKS_STATE = "api_key_books"  # the admitted key's books, for `BookChoice` (absent when keys are off)


def caller(scope: Mapping[str, Any]) -> str:
    """The id of the key this middleware admitted for the request ("anonymous" when keys are off)."""
    return str((scope.get("state") or {}).get("api_key_id") or ANONYMOUS)


def _current_guard() -> Guard | None:
    return current().guard


class ApiKeyAuth:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        guard = _current_guard()
        if guard is None:
            await self.app(scope, receive, send)
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers") or []]
        client = scope.get("client")
        source_ip = client[0] if client else "unknown"
        try:
            # DynamoDB calls block: keep them off the event loop (uvicorn serves other requests meanwhile).
            principal = await run_in_threadpool(guard.admit, presented_key(headers), source_ip,
                                                origin=request_origin(headers), path=scope["path"])
        except BookRAGError as exc:
            if exc.http_status >= 500:
                logger.warning("authentication unavailable", extra={"code": exc.code})
            await error_response(scope["path"], exc)(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["api_key_id"] = principal.key_id
        state[BOOKS_STATE] = principal.books
        await self.app(scope, receive, send)
