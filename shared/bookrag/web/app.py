"""The FastAPI app. `create_app(kind)` wires routes, error handlers and middleware; routes are thin
and delegate to the container's services. The Lambda runtime builds one per process."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI

from bookrag.contracts.base import ErrorBody
from bookrag.contracts.health import HealthResponse
from bookrag.version import __version__
from bookrag.web import errors as web_errors
from bookrag.web.middleware.api_key import ApiKeyAuth
from bookrag.web.middleware.body_limit import BodySizeLimit
from bookrag.web.middleware.book import BookChoice
from bookrag.web.middleware.book_version import BookVersionHeader
from bookrag.web.middleware.cors import Cors
from bookrag.web.middleware.retrieval_mode import RetrievalModeHeader

AppKind = Literal["retrieval", "agent", "all"]
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input (contract error codes)"},
    401: {"model": ErrorBody, "description": "Missing or invalid API key"},
    413: {"model": ErrorBody, "description": "Request body too large"},
    429: {"model": ErrorBody, "description": "Rate limited; see Retry-After"},
    500: {"model": ErrorBody, "description": "Upstream or internal error (EMBEDDING_ERROR, SEARCH_ERROR, "
                                              "CONNECTION_ERROR, AUTH_ERROR)"},
}


def create_app(kind: AppKind = "all") -> FastAPI:
    # strict_content_type=False: a JSON body without a Content-Type header (API Gateway test events,
    # terse clients) is still read as JSON; a body that is not JSON still gets a 400.
    app = FastAPI(title="bookrag", version=__version__, responses=ERROR_RESPONSES, strict_content_type=False,
                  description="Answers questions about a book, and only from the book.")
    web_errors.install(app)
    # Innermost: the request's book, from its key and the X-Book header or `book` field (a bounded body).
    app.add_middleware(BookChoice)
    app.add_middleware(BodySizeLimit)
    # Added after the body limit, so outside it: a request without a valid key is refused before its body
    # is even read.
    app.add_middleware(ApiKeyAuth)
    # Every response carries X-Book-Version, a refused one too; one book version per request.
    app.add_middleware(BookVersionHeader)
    # X-Retrieval-Mode: sparse-fallback when the query could not be embedded and BM25 answered alone.
    app.add_middleware(RetrievalModeHeader)
    # Outermost: a browser's preflight carries no key, and an error answered to an allowed site must carry
    # its CORS header for the widget to read it.
    app.add_middleware(Cors)

    @app.get("/api/health", response_model=HealthResponse, tags=["ops"])
    def get_health() -> dict[str, Any]:
        from bookrag.services.health import health

        return health()

    if kind in ("retrieval", "all"):
        from bookrag.web.routes.retrieval import build_router

        app.include_router(build_router())  # the tools registered by now
    if kind in ("agent", "all"):
        from bookrag.web.routes.agent import router as agent_router
        from bookrag.web.routes.feedback import router as feedback_router
        from bookrag.web.routes.pages import router as pages_router
        from bookrag.web.routes.widget import router as widget_router

        app.include_router(agent_router)
        app.include_router(feedback_router)
        app.include_router(pages_router)
        app.include_router(widget_router)
        _mount_mcp(app, "all")
    return app


def _mount_mcp(app: FastAPI, tool_set: Literal["retrieval", "all"]) -> None:
    """/mcp (stateless streamable HTTP, POST only), inside the app's middleware: the same keys, rate
    limits and body limit as every route. Served where answer_question can run (the agent function)."""
    from starlette.routing import Route

    from bookrag.mcp.asgi import McpEndpoint

    app.router.routes.append(Route("/mcp", McpEndpoint(tool_set), methods=["POST"], include_in_schema=False))


