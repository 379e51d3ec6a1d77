"""The agent's ASGI app as the Lambda Web Adapter runs it: the deployed streaming path.

Python's managed runtime returns a handler's response whole, and Mangum buffers it, so behind API
Gateway `/api/answer/stream` arrives in one piece. The stream function (template.yaml,
`StreamFunction`) instead runs the AWS Lambda Web Adapter layer: its wrapper starts
`functions/stream/run.sh`, which serves `create()` under uvicorn on 127.0.0.1:$PORT; the adapter
waits for the readiness path (`/api/health`), then forwards each function URL invocation (InvokeMode
RESPONSE_STREAM) as an HTTP request and streams the body back as it is written.

A function URL has no authorizer: the app's own middleware checks keys, origins and rate limits
(`web.middleware.api_key`), as `bookrag serve` does. What this wrapper adds is what the adapter
changes about a request:

- the reader's address: every request comes from the adapter on 127.0.0.1, and the invocation's
  request context, with `http.sourceIp`, rides in the `x-amzn-request-context` header, which the
  adapter always sets itself (a client's header of that name is replaced), so per-IP limits read it;
- non-HTTP events: the adapter POSTs them to `/events` with a `null` request context (a client's
  request never has one); the scheduled warm-up is such an event, answered here by `runtime.warmup`;
- metrics: no `@log_metrics` handler flushes them, so each request flushes its own;
- the question log: its writer is waited for before a response's last byte (`services.question_log`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool

from bookrag.observability import logger, metrics, next_invocation

REQUEST_CONTEXT = b"x-amzn-request-context"
PASS_THROUGH_PATH = "/events"  # the adapter's default AWS_LWA_PASS_THROUGH_PATH

Scope = dict[str, Any]


def request_context(scope: Scope) -> Any:
    """The invocation's request context the adapter sent; None when absent or unreadable."""
    raw = dict(scope.get("headers") or []).get(REQUEST_CONTEXT)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def source_ip(context: Any) -> str | None:
    """The caller's address in a function URL's (or HTTP API's) request context."""
    if not isinstance(context, dict):
        return None
    http = context.get("http")
    ip = http.get("sourceIp") if isinstance(http, dict) else None
    return ip if isinstance(ip, str) and ip else None


class WebAdapterApp:
    """Pure ASGI: the agent app, seen through the adapter (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        next_invocation()
        has_context = REQUEST_CONTEXT in dict(scope.get("headers") or [])
        context = request_context(scope)
        if scope["path"] == PASS_THROUGH_PATH and scope["method"] == "POST" and has_context and context is None:
            await self._warm_up(send)
            return
        ip = source_ip(context)
        if ip is not None:
            scope = {**scope, "client": (ip, 0)}
        try:
            await self.app(scope, receive, _flushing_before_the_end(send))
        finally:
            if metrics.metric_set:
                metrics.flush_metrics()

    async def _warm_up(self, send: Any) -> None:
        from bookrag.runtime.warmup import warm

        summary = await run_in_threadpool(warm, "agent")
        body = json.dumps(summary).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _flushing_before_the_end(send: Any) -> Any:
    """`send`, waiting for the question log's writer before a response's last body message: the adapter ends
    the invocation (and Lambda may freeze the process) with it. A stream's events are already sent."""

    async def sent(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body"):
            from bookrag.services.container import flush_question_log

            if not await run_in_threadpool(flush_question_log):
                logger.warning("question log flush timed out")
        await send(message)

    return sent


def create() -> WebAdapterApp:
    """uvicorn's factory (`--factory bookrag.runtime.web_adapter:create`)."""
    from bookrag.web.app import create_app

    return WebAdapterApp(create_app("agent"))
