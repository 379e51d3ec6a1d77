"""REST retrieve (`POST /api/retrieve`) and the book version a request read.

Takes already-validated input and returns the contract's shape as a plain dict. The agent tools'
operations are their entries in the tools registry (`services.tools`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

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
