"""Retrieval routes: POST /api/retrieve, one route per registered tool with a REST path, GET /api/tools."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from bookrag.contracts.rest import RetrieveRequest, RetrieveResponse
from bookrag.domain.edition import reading
from bookrag.domain.models import Filters
from bookrag.errors import BookRAGError
from bookrag.observability import record_query_type, record_retrieval
from bookrag.services.container import current
from bookrag.services.editions import edition_headers
from bookrag.services.operations import rest_retrieve
from bookrag.services.question_log import Entry
from bookrag.services.tools import Tool, registered, served_title
from bookrag.web.middleware.api_key import caller
from bookrag.web.middleware.retrieval_mode import DOCUMENTED as RETRIEVAL_MODE


def retrieve(body: RetrieveRequest, request: Request, http: Response) -> dict[str, Any]:
    """Retrieve the textbook chunks most relevant to a query (rest-api-retrieve contract); of a site's book,
    from the edition the body names (`locale`, `version`), reported in `X-Book-Edition`."""
    container = current()
    entry = Entry("retrieve", body.query, caller(request.scope))
    try:
        with reading(body.locale, body.version) as seen:
            result = rest_retrieve(container.retriever, body.query, body.top_k, body.score_threshold,
                                   Filters(body.module_name, body.source_file))
    except BookRAGError as exc:
        entry.failed(container, exc)
        raise
    http.headers.update(edition_headers(seen))
    entry.query_id = result["query_id"]  # the body's id names the record: one id per request
    entry.retrieved(container, result)
    record_retrieval(result["retrieval_time_ms"], len(result["retrieved_chunks"]))
    record_query_type(body.query_type)
    return result


def list_tools() -> dict[str, Any]:
    """The tool definitions, ready to register with an OpenAI-style function-calling agent; defaults are
    the ones in force for the configured embedder; descriptions name the request's book by its title."""
    container = current()
    title = served_title(container)
    return {"tools": [{"type": "function", "function": tool.function(container.settings, title)}
                      for tool in registered() if tool.listed]}


def _endpoint(tool: Tool) -> Callable[..., BaseModel | dict[str, Any]]:
    def endpoint(body: BaseModel, http: Response) -> BaseModel | dict[str, Any]:
        with reading(getattr(body, "locale", None), getattr(body, "version", None)) as seen:
            result = tool.run(current(), body)
        http.headers.update(edition_headers(seen))
        return result

    # FastAPI validates the body with the parameter's annotation: the tool's own request model.
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("body", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=tool.request),
         inspect.Parameter("http", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Response)])
    return endpoint


def build_router() -> APIRouter:
    """The routes, with the tools registered now (in registration order, after /api/retrieve)."""
    router = APIRouter()
    documented: dict[int | str, dict[str, Any]] = {200: {"headers": RETRIEVAL_MODE}}
    router.add_api_route("/api/retrieve", retrieve, methods=["POST"], response_model=RetrieveResponse,
                         responses=documented, tags=["retrieval"])
    for tool in registered():
        if tool.rest_path is not None:
            router.add_api_route(tool.rest_path, _endpoint(tool), methods=["POST"], name=tool.name,
                                 description=tool.rest_doc, response_model=tool.response,
                                 response_model_exclude_none=tool.exclude_none, responses=documented,
                                 tags=["tools"])
    router.add_api_route("/api/tools", list_tools, methods=["GET"], tags=["tools"])
    return router
