"""What both Lambda handlers share: recognise the event, then warm up, answer health, or serve HTTP.

Health and scheduled warm-ups are answered here without FastAPI: a health probe must not pay for
imports it does not use. A warm-up does the opposite: it builds every client and the app and sends
one request through them, so the next real request imports nothing and builds nothing.

SnapStart (template.yaml): `install_snapstart_hooks(kind)` warms the function before Lambda takes the
snapshot, so a restored container starts fully initialised, and after each restore drops the cached
clients that hold network connections (stale in a restored microVM) so they are rebuilt on first use.
"""

from __future__ import annotations

import base64
import json
import math
import random
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from bookrag.errors import BookRAGError
from bookrag.observability import _state, get_tracer, logger, next_invocation, traced

if TYPE_CHECKING:
    from bookrag.config.settings import Settings
    from bookrag.retrieval.retriever import Retriever
    from bookrag.runtime.lambda_context import SyntheticContext

FunctionKind = Literal["retrieval", "agent"]
HookKind = Literal["before_snapshot", "after_restore"]


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


# --- warm-up -------------------------------------------------------------------------------------


def _warm_up_context() -> SyntheticContext:
    from bookrag.runtime.lambda_context import SyntheticContext  # imported here: health never needs it

    return SyntheticContext(function_name="bookrag-warm-up", aws_request_id="warm-up")


def _http_event(method: str, path: str) -> dict[str, Any]:
    """A minimal API Gateway HTTP API (payload 2.0) event, as Mangum reads it."""
    return {
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "user-agent": "bookrag-warm-up"},
        "requestContext": {"http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                                    "sourceIp": "127.0.0.1", "userAgent": "bookrag-warm-up"},
                           "requestId": "warm-up", "stage": "$default", "timeEpoch": 0},
        "body": base64.b64encode(b"").decode(), "isBase64Encoded": True,
    }


def _prime_search(retriever: Retriever, settings: Settings) -> None:
    """One store search, so the first request finds qdrant-client's query models built; never a paid call."""
    import numpy as np

    if settings.resolved_embedding_provider == "local":
        vector = retriever.embedder.inner.embed_query("warm up")  # local and free; pages in the weights
    else:  # a paid embedding is not worth a warm-up: any unit vector exercises the same code
        dim = retriever.embedder.dimension
        vector = np.full(dim, 1.0 / math.sqrt(dim), dtype=np.float32)
    retriever.store.search(vector, retriever.bm25.encode_query("warm up"), mode=settings.retrieval_mode, limit=1)


def _prime_auth(settings: Settings) -> None:
    """Build the API-key guard (and its DynamoDB client) without calling it."""
    from bookrag.auth.guard import get_guard

    get_guard(settings)


def warm(kind: FunctionKind) -> dict[str, Any]:
    """Build the app, the tracer, the embedder, the store client and the guard; never a paid call."""
    from bookrag.config.settings import get_settings
    from bookrag.retrieval.retriever import get_retriever
    from bookrag.services.health import health

    settings = get_settings()
    handler = get_handler(kind)
    get_tracer()
    _prime_auth(settings)
    retriever = get_retriever(settings)
    store_ok = True
    try:
        retriever.store.check_embedder(retriever.embedder.name, retriever.embedder.dimension)
        _prime_search(retriever, settings)
    except BookRAGError as exc:
        store_ok = False
        logger.warning("warm-up: store not ready", extra={"code": exc.code})
    if kind == "agent":
        from bookrag.answering.agent import get_agent

        get_agent(settings)
    # One request through Mangum and FastAPI loads the rest of the HTTP path (anyio's thread pool,
    # request parsing, response serialisation). /api/health is open: no key checked, no rate counted.
    handler(_http_event("GET", "/api/health"), _warm_up_context())
    summary = health()
    summary["warmed"] = True
    summary["store_ready"] = store_ok
    return summary


# --- SnapStart -------------------------------------------------------------------------------------

# (module, factory) pairs whose cached objects hold network clients. Only modules already imported are
# touched: importing one here would cost the restore what it saves.
_NETWORK_FACTORIES = (
    ("bookrag.retrieval.retriever", "get_retriever"),  # holds the store and the embedder (and a reranker's client)
    ("bookrag.adapters.cohere", "get_cohere_client"),
    ("bookrag.auth.guard", "get_guard"),
    ("bookrag.auth.dynamodb", "get_dynamodb_client"),
    ("bookrag.answering.agent", "get_agent"),
    ("bookrag.answering.answerers.chat_completions", "get_http_client"),  # Gemini / OpenAI-compatible pool
)
_hooks: dict[HookKind, list[Callable[[], None]]] = {"before_snapshot": [], "after_restore": []}
_installed: set[str] = set()


def _clear(module_name: str, factory: str) -> None:
    module = sys.modules.get(module_name)
    fn = getattr(module, factory, None) if module else None
    if fn is not None and hasattr(fn, "cache_clear"):
        fn.cache_clear()


def after_restore() -> None:
    """Forget every cached network client; the next request builds fresh ones (new sockets, new TLS).

    The embedded Qdrant store and the local embedder hold no connection and stay in the snapshot: they
    are what makes it worth taking. Also re-seeds `random` (each restore would otherwise replay the
    snapshot's sequence) and restarts the uptime clock.
    """
    from bookrag.config.settings import get_settings

    settings = get_settings()
    for module_name, factory in _NETWORK_FACTORIES:
        _clear(module_name, factory)
    if settings.qdrant_remote_url:
        _clear("bookrag.adapters.qdrant.store", "get_store")
        _clear("bookrag.adapters.qdrant.store", "get_qdrant_client")
    if settings.resolved_embedding_provider != "local":
        _clear("bookrag.adapters.embedders", "get_embedder")
    random.seed()
    _state["started"] = time.time()
    logger.info("restored from a snapshot: network clients will be rebuilt on first use")


def _before_snapshot(kind: FunctionKind) -> None:
    try:
        warm(kind)
    except Exception as exc:  # a warm-up failure must not fail the deployment: the snapshot is just colder
        logger.warning("before-snapshot warm-up failed", extra={"error_class": type(exc).__name__})


def _register(hook: HookKind, fn: Callable[[], None]) -> None:
    _hooks[hook].append(fn)
    try:
        import snapshot_restore_py  # only in Lambda's managed Python runtimes (3.12+)
    except ImportError:
        return
    getattr(snapshot_restore_py, f"register_{hook}")(fn)


def install_snapstart_hooks(kind: FunctionKind) -> None:
    """Register this function's SnapStart runtime hooks once per process (no-op registration locally)."""
    if kind in _installed:
        return
    if not _installed:
        _register("after_restore", after_restore)
    _installed.add(kind)
    _register("before_snapshot", lambda: _before_snapshot(kind))


def registered_hooks(hook: HookKind) -> list[Callable[[], None]]:
    """The callables registered for `hook`, in registration order (tests call them as Lambda would)."""
    return list(_hooks[hook])


# --- entry point -----------------------------------------------------------------------------------


def handle(event: dict[str, Any], context: Any, kind: FunctionKind) -> dict[str, Any]:
    next_invocation()
    if is_scheduled(event):
        return warm(kind)
    if is_health(event):
        from bookrag.services.health import health

        try:
            return _http(200, health())
        except BookRAGError as exc:
            return _http(exc.http_status, {"error": exc.message, "code": exc.code, "details": {},
                                           "recoverable": False})
    handler = get_handler(kind)
    return traced("http", lambda: handler(event, context))  # type: ignore[no-any-return]
