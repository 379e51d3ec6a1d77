"""Retrieval routes: POST /api/retrieve and the agent tools over HTTP."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from bookrag.contracts.rest import RetrieveRequest, RetrieveResponse
from bookrag.contracts.tools import (
    BookContentRequest,
    BookContentResponse,
    BookContextRequest,
    BookContextResponse,
    PerformRetrievalRequest,
    PerformRetrievalResponse,
    tool_definitions,
)
from bookrag.domain.models import Filters
from bookrag.observability import record_query_type, record_retrieval
from bookrag.retrieval.retriever import Retriever, default_threshold
from bookrag.services import operations as tools
from bookrag.services.container import current

router = APIRouter(prefix="/api")


def _retriever() -> Retriever:
    return current().retriever


@router.post("/retrieve", response_model=RetrieveResponse, tags=["retrieval"])
def retrieve(body: RetrieveRequest) -> dict[str, Any]:
    """Retrieve the textbook chunks most relevant to a query (rest-api-retrieve contract)."""
    result = tools.rest_retrieve(_retriever(), body.query, body.top_k, body.score_threshold,
                                 Filters(body.module_name, body.source_file))
    record_retrieval(result["retrieval_time_ms"], len(result["retrieved_chunks"]))
    record_query_type(body.query_type)
    return result


@router.post("/tools/retrieve_book_content", response_model=BookContentResponse,
             response_model_exclude_none=True, tags=["tools"])
def retrieve_book_content(body: BookContentRequest) -> dict[str, Any]:
    """The `retrieve_book_content` agent tool."""
    return tools.book_content_for(_retriever(), body)


@router.post("/tools/perform_retrieval", response_model=PerformRetrievalResponse, tags=["tools"])
def perform_retrieval(body: PerformRetrievalRequest) -> dict[str, Any]:
    """The `perform_retrieval` agent tool."""
    return tools.perform_retrieval_for(_retriever(), body)


@router.post("/tools/retrieve_book_context", response_model=BookContextResponse, tags=["tools"])
def retrieve_book_context(body: BookContextRequest) -> dict[str, Any]:
    """The `retrieve_book_context` agent tool: formatted context with [Source: ...] headers."""
    return tools.book_context_for(_retriever(), body)


@router.get("/tools", tags=["tools"])
def list_tools() -> dict[str, Any]:
    """The tool definitions, ready to register with an OpenAI-style function-calling agent; defaults are
    the ones in force for the configured embedder."""
    definitions = tool_definitions(default_threshold(current().settings, "tool_content"))
    return {"tools": [{"type": "function", "function": d} for d in definitions]}
