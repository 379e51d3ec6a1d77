"""Scheduled warm-ups: leave the container ready for its first real request, with no paid call.

A warm-up builds every client and service of the function through the container, runs one search,
and sends one request through Mangum and FastAPI, so the next real request imports nothing and
builds nothing.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from bookrag.errors import BookRAGError
from bookrag.observability import get_tracer, logger
from bookrag.runtime.http import FunctionKind, get_handler
from bookrag.runtime.lambda_context import SyntheticContext

if TYPE_CHECKING:
    from bookrag.config.settings import Settings


def http_event(method: str, path: str) -> dict[str, Any]:
    """A minimal API Gateway HTTP API (payload 2.0) event, as Mangum reads it."""
    return {
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "user-agent": "bookrag-warm-up"},
        "requestContext": {"http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                                    "sourceIp": "127.0.0.1", "userAgent": "bookrag-warm-up"},
                           "requestId": "warm-up", "stage": "$default", "timeEpoch": 0},
        "body": base64.b64encode(b"").decode(), "isBase64Encoded": True,
    }


def uses_cohere(settings: Settings, kind: FunctionKind) -> bool:
    """Whether this function calls Cohere on a request: to embed a query, to rerank, or to answer."""
    from bookrag.adapters.llm import PROVIDERS  # the registry's table only: no SDK

    provider = PROVIDERS.get(settings.resolved_llm_provider)
    return (settings.resolved_embedding_provider == "cohere" or settings.cohere_rerank_model is not None
            or (kind == "agent" and provider is not None and provider.shares_cohere))


def warm(kind: FunctionKind) -> dict[str, Any]:
    """Build the app, the tracer, the embedder, the store client and the guard; never a paid call."""
    from bookrag.services.container import current
    from bookrag.services.health import health

    container = current()
    handler = get_handler(kind)
    get_tracer()
    _ = container.guard  # built, not called
    _ = container.question_log, container.question_log_writer  # the log's store and writer (no thread yet)
    store_ok = True
    try:
        container.retriever.warm_up()
    except BookRAGError as exc:
        store_ok = False
        logger.warning("warm-up: store not ready", extra={"code": exc.code})
    if kind == "agent":
        container.agent.leaks("warm up")  # loads the codecs its output check reads answers through
        import bookrag.services.conversations  # noqa: F401  (the answer route's; imported on first use)
    if uses_cohere(container.settings, kind):  # the deployed configuration: load the SDK now, not on a request
        from bookrag.adapters.cohere import warm_up_replies

        _ = container.cohere
        warm_up_replies()
    # One request through Mangum and FastAPI loads the rest of the HTTP path (anyio's thread pool,
    # request parsing, response serialisation). /api/health is open: no key checked, no rate counted.
    handler(http_event("GET", "/api/health"), SyntheticContext(function_name="bookrag-warm-up",
                                                              aws_request_id="warm-up"))
    summary = health(app_ready=True)
    summary["warmed"] = True
    summary["store_ready"] = store_ok
    return summary
