"""What every HTTP Lambda handler does: recognise the event, then warm up, answer health, or serve HTTP.

Health and scheduled warm-ups are answered here without FastAPI: a health probe must not pay for
imports it does not use. Everything else goes through Mangum into the FastAPI app of the function.
"""

from __future__ import annotations

import json
from typing import Any

from bookrag.errors import BookRAGError
from bookrag.observability import logger, next_invocation, traced
from bookrag.runtime.http import FunctionKind, get_handler


def is_scheduled(event: dict[str, Any]) -> bool:
    return event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event"


def is_health(event: dict[str, Any]) -> bool:
    http = (event.get("requestContext") or {}).get("http") or {}
    return http.get("method") == "GET" and event.get("rawPath") == "/api/health"


def http_response(status: int, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if body.get("book_version"):  # as the app's middleware does (bookrag.web.middleware.book_version)
        headers["x-book-version"] = str(body["book_version"])
    return {"statusCode": status, "headers": headers, "body": json.dumps(body), "isBase64Encoded": False}


def handle(event: dict[str, Any], context: Any, kind: FunctionKind) -> dict[str, Any]:
    next_invocation()
    if is_scheduled(event):
        from bookrag.runtime.warmup import warm

        return warm(kind)
    if is_health(event):
        from bookrag.services.health import health

        try:
            return http_response(200, health(app_ready=get_handler.cache_info().currsize > 0))
        except BookRAGError as exc:
            from bookrag.contracts.envelope import error_body

            return http_response(exc.http_status, error_body(exc))
    handler = get_handler(kind)
    try:
        return traced("http", lambda: handler(event, context))  # type: ignore[no-any-return]
    finally:
        from bookrag.services.container import flush_question_log

        # Lambda freezes the process when this returns: the question log's writer finishes first.
        if not flush_question_log():
            logger.warning("question log flush timed out")
