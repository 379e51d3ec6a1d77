"""`X-Retrieval-Mode: sparse-fallback` on a response whose retrieval ran on BM25 alone, because the
query could not be embedded (`domain.retrieval_mode`). A normal response carries no such header."""

from __future__ import annotations

from typing import Any

from bookrag.domain.retrieval_mode import HEADER, SPARSE_FALLBACK, request_mode
from bookrag.web.middleware.stamp import stamping

_HEADER = HEADER.lower().encode()

# The header as the OpenAPI document shows it on every route that retrieves (its routes add it to their 200).
DOCUMENTED: dict[str, Any] = {HEADER: {
    "description": "`sparse-fallback` when the query could not be embedded and BM25 alone retrieved (the embedder "
                   "timed out, was rate limited or failed); absent on a normal response",
    "schema": {"type": "string", "enum": [SPARSE_FALLBACK]}}}


class RetrievalModeHeader:
    """Pure ASGI middleware (see BodySizeLimit). A stream's status line goes after its retrieval
    (`web.sse.event_stream`), so a streamed answer carries the header too."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with request_mode() as mode:
            await self.app(scope, receive, stamping(
                send, lambda: [(_HEADER, mode["mode"].encode())] if mode.get("mode") else []))
