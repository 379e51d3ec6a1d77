"""Exception handlers: the one place where errors become HTTP responses.

Every body comes from `contracts.envelope`. A validation error gets the contract code that the failed
route's request model names for the field (`error_codes`); our typed errors get their own code and
status; anything else is a generic 500 whose cause is logged, never returned.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from bookrag import errors
from bookrag.contracts.base import FieldCodes
from bookrag.contracts.envelope import error_body, error_headers, interface_of
from bookrag.contracts.validation import invalid_input, model_codes

logger = logging.getLogger("bookrag.web")
_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE"}


def error_response(request_path: str, exc: errors.BookRAGError) -> JSONResponse:
    return JSONResponse(error_body(exc, interface_of(request_path)), status_code=exc.http_status,
                        headers=error_headers(exc))


def _field_codes(request: Request) -> FieldCodes:
    """The `error_codes` of the request model of the route that matched."""
    route = request.scope.get("route")
    params = getattr(getattr(route, "dependant", None), "body_params", None) or []
    return model_codes(params[0].field_info.annotation if params else None)


def _validation_error(request: Request, exc: RequestValidationError) -> errors.InvalidInputError:
    return invalid_input(_field_codes(request), exc.errors())


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request.url.path, _validation_error(request, exc))

    @app.exception_handler(errors.BookRAGError)
    async def _on_ours(request: Request, exc: errors.BookRAGError) -> JSONResponse:
        if exc.http_status >= 500:
            logger.warning("request failed", extra={"code": exc.code, "error_class": type(exc).__name__})
        return error_response(request.url.path, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        error = errors.InvalidInputError(str(exc.detail) if exc.status_code < 500 else "Error", code=code,
                                         status=exc.status_code)
        response = error_response(request.url.path, error)
        # RFC 9110: a 405 names the methods the resource does allow (Starlette puts them on the exception).
        allow = (exc.headers or {}).get("Allow")
        if exc.status_code == 405 and allow:
            response.headers["Allow"] = allow
        return response

    @app.exception_handler(Exception)
    async def _on_anything(request: Request, exc: Exception) -> JSONResponse:
        logger.error("unhandled error", extra={"error_class": type(exc).__name__})
        return error_response(request.url.path, errors.BookRAGError())
