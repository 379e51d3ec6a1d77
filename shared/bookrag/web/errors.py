"""The one place where errors become HTTP responses.

Request validation errors get the contract's codes per route and field; our typed errors get their
code and status; anything else is a generic 500 whose cause is logged, never returned.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from bookrag import errors

logger = logging.getLogger("bookrag.web")

# Per route: field -> (code for a missing/empty/wrong-typed value, code for a too-long value).
FIELD_CODES: dict[str, dict[str, tuple[str, str]]] = {
    "/api/retrieve": {
        "query": ("MISSING_QUERY", "INVALID_QUERY_LENGTH"),
        "top_k": ("INVALID_TOP_K", "INVALID_TOP_K"),
        "score_threshold": ("INVALID_SCORE_THRESHOLD", "INVALID_SCORE_THRESHOLD"),
    },
    "/api/tools/retrieve_book_content": {
        "query": ("INVALID_QUERY", "INVALID_QUERY"),
        "top_k": ("INVALID_TOP_K", "INVALID_TOP_K"),
        "min_score": ("INVALID_SCORE_THRESHOLD", "INVALID_SCORE_THRESHOLD"),
    },
    "/api/tools/perform_retrieval": {
        "query": ("INVALID_QUERY", "INVALID_QUERY_LENGTH"),
        "top_k": ("INVALID_TOP_K", "INVALID_TOP_K"),
    },
    "/api/tools/retrieve_book_context": {"query": ("INVALID_QUERY", "INVALID_QUERY")},
    "/api/answer": {"query": ("INVALID_QUERY", "INVALID_QUERY_LENGTH")},
}

MESSAGES = {
    "MISSING_QUERY": "Query text is required",
    "INVALID_QUERY_LENGTH": "Query is too long",
    "INVALID_TOP_K": "top_k must be an integer between 1 and 10",
    "INVALID_SCORE_THRESHOLD": "Score threshold must be a number between 0.0 and 1.0",
    "INVALID_QUERY": "Invalid query provided",
    "INVALID_REQUEST": "Request body must be a JSON object with the documented fields",
}

def error_response(request_path: str, exc: errors.BookRAGError) -> JSONResponse:
    body: dict[str, Any] = {"error": exc.message, "code": exc.code, "details": dict(exc.details),
                            "recoverable": exc.recoverable}
    if request_path.startswith("/api/answer"):
        # Imported here: the retrieval function never serves /api/answer and should not load the agent.
        from bookrag.contracts.agent import agent_error_fields  # the agent contract's error table lives with the agent

        body.update(agent_error_fields(exc))
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    return JSONResponse(body, status_code=exc.http_status, headers=headers)


def _validation_error(path: str, exc: RequestValidationError) -> errors.InvalidInputError:
    codes = FIELD_CODES.get(path, {})
    for item in exc.errors():
        loc = [str(p) for p in item.get("loc", ()) if p != "body"]
        field = loc[0] if loc else None
        if field is None or field not in codes:
            continue
        missing_code, long_code = codes[field]
        code = long_code if item.get("type") == "string_too_long" else missing_code
        return errors.InvalidInputError(MESSAGES[code], code=code, field=field)
    first = exc.errors()[0] if exc.errors() else {}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    return errors.InvalidInputError(MESSAGES["INVALID_REQUEST"], code="INVALID_REQUEST",
                                    field=loc[0] if loc else None)


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request.url.path, _validation_error(request.url.path, exc))

    @app.exception_handler(errors.BookRAGError)
    async def _on_ours(request: Request, exc: errors.BookRAGError) -> JSONResponse:
        if exc.http_status >= 500:
            logger.warning("request failed", extra={"code": exc.code, "error_class": type(exc).__name__})
        return error_response(request.url.path, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE"}
        code = codes.get(exc.status_code, "HTTP_ERROR")
        error = errors.InvalidInputError(str(exc.detail) if exc.status_code < 500 else "Error", code=code,
                                         status=exc.status_code)
        return error_response(request.url.path, error)

    @app.exception_handler(Exception)
    async def _on_anything(request: Request, exc: Exception) -> JSONResponse:
        logger.error("unhandled error", extra={"error_class": type(exc).__name__})
        return error_response(request.url.path, errors.BookRAGError())
