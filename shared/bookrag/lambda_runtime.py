"""What both Lambda handlers share: recognise the event, then warm up, answer health, or serve HTTP.

Health and scheduled warm-ups are answered here without FastAPI: a health probe must not pay for
imports it does not use. A warm-up does the opposite: it builds every client and the app, so the
next real request finds the container fully initialised.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Literal

from bookrag.errors import BookRAGError
from bookrag.observability import logger, next_invocation, traced

FunctionKind = Literal["retrieval", "agent"]


def is_scheduled(event: dict[str, Any]) -> bool:
    return event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event"


def is_health(event: dict[str, Any]) -> bool:
    http = (event.get("requestContext") or {}).get("http") or {}
    return http.get("method") == "GET" and event.get("rawPath") == "/api/health"


def _http(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"content-type": "application/json"},
            "body": json.dumps(body), "isBase64Encoded": False}


@lru_cache(maxsize=2)
def get_handler(kind: FunctionKind) -> Any:
    from mangum import Mangum

    from bookrag.web.app import get_app

    # lifespan="off": Mangum would otherwise run the ASGI lifespan on every invocation.
    return Mangum(get_app(kind), lifespan="off")


def warm(kind: FunctionKind) -> dict[str, Any]:
    """Build the app, the embedder and the store client; never a paid call."""
    from bookrag.health import health
    from bookrag.retrieval import get_retriever
    from bookrag.settings import get_settings

    get_handler(kind)
    settings = get_settings()
    retriever = get_retriever(settings)
    store_ok = True
    try:
        retriever.store.check_embedder(retriever.embedder.name, retriever.embedder.dimension)
    except BookRAGError as exc:
        store_ok = False
        logger.warning("warm-up: store not ready", extra={"code": exc.code})
    if settings.resolved_embedding_provider == "local":
        retriever.embedder.inner.embed_query("warm up")  # pages in the weights; free, local
    if kind == "agent":
        from bookrag.agent import get_agent

        get_agent(settings)
    summary = health()
    summary["warmed"] = True
    summary["store_ready"] = store_ok
    return summary


def handle(event: dict[str, Any], context: Any, kind: FunctionKind) -> dict[str, Any]:
    next_invocation()
    if is_scheduled(event):
        return warm(kind)
    if is_health(event):
        from bookrag.health import health

        try:
            return _http(200, health())
        except BookRAGError as exc:
            return _http(exc.http_status, {"error": exc.message, "code": exc.code, "details": {},
                                           "recoverable": False})
    handler = get_handler(kind)
    return traced("http", lambda: handler(event, context))  # type: ignore[no-any-return]
