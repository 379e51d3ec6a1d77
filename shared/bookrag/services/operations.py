"""The retrieval-shaped contracts: REST retrieve and the three agent tools.

Each function takes already-validated input and returns the contract's shape as a plain dict, so the
same code serves HTTP routes, the agent's tool calls and the CLI.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from bookrag.answering.context import book_context, source_summary
from bookrag.contracts.tools import (
    NO_CONTENT_TOOL,
    BookContentRequest,
    BookContextRequest,
    PerformRetrievalRequest,
)
from bookrag.domain.models import Filters, SearchHit
from bookrag.retrieval.retriever import Retriever, SearchOptions, default_threshold


def rest_retrieve(retriever: Retriever, query: str, top_k: int, score_threshold: float | None,
                  filters: Filters | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    threshold = score_threshold if score_threshold is not None else default_threshold(retriever.settings, "rest")
    result = retriever.search(query, SearchOptions(top_k=top_k, min_score=threshold, filters=filters))
    return {
        "query_id": f"query_{uuid.uuid4().hex}",
        "original_query": query,
        "retrieval_time_ms": round(max((time.perf_counter() - started) * 1000, 0.001), 3),
        "total_candidates": result.total_candidates,
        "retrieved_chunks": [_rest_chunk(h) for h in result.hits],
        "book_version": book_version_label(retriever),
    }


def book_version_label(retriever: Retriever) -> str | None:
    """The label of the book version this request read (the same collection as its search)."""
    version = retriever.store.book_version()
    return version.label if version else None


def _rest_chunk(hit: SearchHit) -> dict[str, Any]:
    p = hit.payload
    return {
        "chunk_id": hit.chunk_id,
        "similarity_score": hit.score,
        "content_text": p.content_text,
        "source_file": p.source_file,
        "module_name": p.module_name,
        "section_heading": p.section_heading,
        "chunk_index": p.chunk_index,
        "total_chunks": p.total_chunks,
        "token_count": p.token_count,
        "source_url": p.source_url,
        "page_number": p.page_number,
    }


def retrieve_book_content(retriever: Retriever, query: str, top_k: int = 5, min_score: float | None = None,
                          filters: Filters | None = None) -> dict[str, Any]:
    threshold = min_score if min_score is not None else default_threshold(retriever.settings, "tool_content")
    result = retriever.search(query, SearchOptions(top_k=top_k, min_score=threshold, filters=filters))
    out: dict[str, Any] = {
        "results": [
            {
                "id": h.chunk_id,
                "content": h.text,
                "score": h.score,
                "source_url": h.payload.source_url,
                "page_number": h.payload.page_number,
                "section_title": h.section_heading,
                "metadata": _metadata(h),
            }
            for h in result.hits
        ],
        "query_embedding_used": result.query_vector,
        "book_version": book_version_label(retriever),
    }
    if not result.hits:
        out["message"] = NO_CONTENT_TOOL
    return out


def perform_retrieval(retriever: Retriever, query: str, top_k: int = 5,
                      filters: Filters | None = None) -> dict[str, Any]:
    threshold = default_threshold(retriever.settings, "perform_retrieval")
    result = retriever.search(query, SearchOptions(top_k=top_k, min_score=threshold, filters=filters))
    results = [
        {"content": h.text, "source_url": h.payload.source_url,
         "similarity_score": h.score, "position": h.chunk_index}
        for h in result.hits
    ]
    return {"results": results, "query": query, "total_results": len(results),
            "book_version": book_version_label(retriever)}


_METADATA = ("source_file", "module_name", "doc_title", "heading_path", "chunk_index", "total_chunks", "token_count",
             "created_at")


def _metadata(hit: SearchHit) -> dict[str, Any]:
    stored = hit.payload.to_dict()
    return {k: stored[k] for k in _METADATA}


# --- the tool operations as their HTTP routes and MCP tools call them: one mapping from request to call ---


def book_content_for(retriever: Retriever, body: BookContentRequest) -> dict[str, Any]:
    return retrieve_book_content(retriever, body.query, body.result_count, body.min_score,
                                 Filters(body.module_name, body.source_file))


def perform_retrieval_for(retriever: Retriever, body: PerformRetrievalRequest) -> dict[str, Any]:
    return perform_retrieval(retriever, body.query, body.top_k, Filters(body.module_name, body.source_file))


def book_context_for(retriever: Retriever, body: BookContextRequest) -> dict[str, Any]:
    context, hits = book_context(retriever, body.query)
    return {"context": context, "sources": [source_summary(h) for h in hits],
            "book_version": book_version_label(retriever)}
