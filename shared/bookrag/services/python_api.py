"""The Python API: the retrieval contract's `retrieve_chunks` and `validate_retrieval`, and the agent
contract's `run_agent`, on the process-wide settings."""

from __future__ import annotations

import math
from typing import Any

from bookrag.contracts.agent import Response
from bookrag.contracts.python_api import RetrievedChunk
from bookrag.domain.models import Filters
from bookrag.domain.query import normalize_query
from bookrag.errors import InvalidInputError
from bookrag.retrieval.retriever import SearchOptions
from bookrag.services.container import current

MAX_QUERY_CHARS = 1000
MAX_TOP_K = 100


def _check(query_text: object, top_k: object, min_score: object) -> str:
    if not isinstance(query_text, str):
        raise InvalidInputError("query_text must be a string", code="INVALID_QUERY", field="query_text")
    query = normalize_query(query_text)
    if not query:
        raise InvalidInputError("query_text must not be empty", code="MISSING_QUERY", field="query_text")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(f"query_text must be at most {MAX_QUERY_CHARS} characters",
                                code="INVALID_QUERY_LENGTH", field="query_text")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInputError(f"top_k must be an integer between 1 and {MAX_TOP_K}",
                                code="INVALID_TOP_K", field="top_k")
    if isinstance(min_score, bool) or not isinstance(min_score, int | float) \
            or not math.isfinite(min_score) or not 0.0 <= min_score <= 1.0:
        raise InvalidInputError("min_score must be a number between 0.0 and 1.0",
                                code="INVALID_SCORE_THRESHOLD", field="min_score")
    return query


def retrieve_chunks(query_text: str, top_k: int = 5, min_score: float = 0.0, *,
                    module_name: str | None = None, source_file: str | None = None) -> list[RetrievedChunk]:
    """Retrieve the chunks most relevant to `query_text`, sorted by similarity score descending.

    Raises:
        ValueError: empty or over-long query, `top_k` outside 1..100, `min_score` outside 0..1
            (`bookrag.errors.InvalidInputError`).
        ConnectionError: the vector store is unreachable (`StoreConnectionError`).
        RuntimeError: the embedding model failed (`EmbeddingError`) or the search failed (`StoreError`).
    """
    query = _check(query_text, top_k, min_score)
    retriever = current().retriever
    result = retriever.search(query, SearchOptions(
        top_k=top_k, min_score=float(min_score), filters=Filters(module_name, source_file)))
    return [RetrievedChunk.from_hit(h) for h in result.hits]


_REQUIRED = ("text", "source_url", "chunk_id")


def validate_retrieval(query_text: str, expected_sources: list[str] | None = None) -> dict[str, Any]:
    """Retrieve for `query_text` and report relevance and metadata integrity (the contract's dict).

    `semantic_relevance_score` is the share of `expected_sources` (source URLs, with or without
    their `#anchor`, or source file paths) found among the results when given; otherwise the mean
    similarity score of the results.
    """
    chunks = retrieve_chunks(query_text)
    integrity = all(
        all(getattr(c, f) for f in _REQUIRED) and 0.0 <= c.score <= 1.0 and c.position >= 0 and c.created_at > 0
        for c in chunks
    )
    found: list[str] = []
    if expected_sources:
        for expected in expected_sources:
            bare = expected.split("#", 1)[0]
            if any(c.source_url == expected or c.source_url.split("#", 1)[0] == bare or c.source_file == expected
                   for c in chunks):
                found.append(expected)
        relevance = len(found) / len(expected_sources)
    else:
        relevance = sum(c.score for c in chunks) / len(chunks) if chunks else 0.0
    return {
        "query": query_text,
        "retrieved_count": len(chunks),
        "semantic_relevance_score": round(relevance, 4),
        "metadata_integrity": integrity,
        "results": [c.model_dump() for c in chunks],
        "expected_sources_found": found,
    }


def run_agent(query: str, *, history: list[dict[str, str]] | None = None, session_id: str | None = None,
              start_session: bool = False, selected_text: str | None = None, source_url: str | None = None,
              source_file: str | None = None) -> Response:
    """Answer `query` from the book only, citing its sections, or refuse (the agent contract).

    Optionally a follow-up: `history` (earlier {"question", "answer"} turns, oldest first) or a
    `session_id` from an earlier call with `start_session=True`; and a `selected_text` the question is
    about. Without them the result is the contract's `Response`, exactly as before.

    Raises `InvalidInputError` (ValueError), `EmbeddingError`, store errors and `AnswerError` subclasses;
    `bookrag.contracts.agent.error_response(exc)` gives the contract's `ErrorResponse` for any of them.
    """
    if history is None and session_id is None and not start_session and selected_text is None \
            and source_url is None and source_file is None:
        return current().agent.run(query)
    from bookrag.services.conversations import answer, parse_request

    request = parse_request(query=query, history=history, session_id=session_id, start_session=start_session,
                            selected_text=selected_text, source_url=source_url, source_file=source_file)
    return answer(current(), request)
