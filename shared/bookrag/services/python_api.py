"""The Python API on the process-wide settings: the retrieval contract's `retrieve_chunks` and
`validate_retrieval`; the agent contract's `run_agent`, `get_embedding`, `search_vectors` and
`retrieve_book_context`. Each raises the contract's errors (`bookrag.errors`: `InvalidInputError`,
`EmbeddingError`, `RetrievalError`, `AgentError`), all importable from `bookrag`."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from bookrag.answering.agent import validate_query
from bookrag.answering.context import book_context
from bookrag.contracts.agent import Response, ScoredPoint
from bookrag.contracts.python_api import RetrievedChunk
from bookrag.domain.models import Filters, SparseVector
from bookrag.domain.query import POLICIES, has_visible_character, normalize_query
from bookrag.errors import InvalidInputError
from bookrag.retrieval.retriever import SearchOptions, default_threshold
from bookrag.services.container import current

MAX_QUERY_CHARS = POLICIES["python"].max_query_chars
MAX_TOP_K = POLICIES["python"].max_top_k


def _check(query_text: object, top_k: object, min_score: object) -> str:
    if not isinstance(query_text, str):
        raise InvalidInputError("query_text must be a string", code="INVALID_QUERY", field="query_text")
    # The one length rule (bookrag.domain.query): characters as sent, then normalised.
    if not has_visible_character(query_text):
        raise InvalidInputError("query_text must not be empty", code="MISSING_QUERY", field="query_text")
    if len(query_text) > MAX_QUERY_CHARS:
        raise InvalidInputError(f"query_text must be at most {MAX_QUERY_CHARS} characters",
                                code="INVALID_QUERY_LENGTH", field="query_text")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInputError(f"top_k must be an integer between 1 and {MAX_TOP_K}",
                                code="INVALID_TOP_K", field="top_k")
    if isinstance(min_score, bool) or not isinstance(min_score, int | float) \
            or not math.isfinite(min_score) or not 0.0 <= min_score <= 1.0:
        raise InvalidInputError("min_score must be a number between 0.0 and 1.0",
                                code="INVALID_SCORE_THRESHOLD", field="min_score")
    return normalize_query(query_text)


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
              source_file: str | None = None, locale: str | None = None, version: str | None = None) -> Response:
    """Answer `query` from the book only, citing its sections, or refuse (the agent contract).

    Optionally a follow-up: `history` (earlier {"question", "answer"} turns, oldest first) or a
    `session_id` from an earlier call with `start_session=True`; and a `selected_text` the question is
    about. Without them the result is the contract's `Response`, exactly as before. Of a site's book,
    `locale` and `version` name the edition read (the response then says which, `Response.locale`).

    Raises `InvalidInputError` (ValueError), `EmbeddingError`, store errors and `AnswerError` subclasses;
    `bookrag.contracts.agent.error_response(exc)` gives the contract's `ErrorResponse` for any of them.
    """
    from bookrag.domain.book_version import one_version
    from bookrag.domain.edition import reading
    from bookrag.services.editions import annotate

    wanted = SimpleNamespace(locale=locale, version=version)
    # One book version for the whole answer, stamped on it (`Response.book_version`), and one site edition.
    with one_version(), reading(locale, version) as seen:
        container = current()
        if history is None and session_id is None and not start_session and selected_text is None \
                and source_url is None and source_file is None:
            from bookrag.services.conversations import stamped

            return annotate(stamped(container, container.agent.run(query)), wanted, seen)
        from bookrag.services.conversations import answer, parse_request

        request = parse_request(query=query, history=history, session_id=session_id, start_session=start_session,
                                selected_text=selected_text, source_url=source_url, source_file=source_file)
        return annotate(answer(container, request), wanted, seen)


def get_embedding(text: str) -> list[float]:
    """The configured embedder's query embedding of `text` (the agent contract's `get_embedding`):
    1024 floats with Cohere embed-english-v3.0 (input_type search_query), 384 with the local model.

    Raises `InvalidInputError` (the contract's 400: not a string, empty, over 1,000 characters) and
    `EmbeddingError` subclasses (rate limited, timed out, upstream refused our key:
    `bookrag.errors.AuthenticationError`).
    """
    query = validate_query(text)
    return [float(x) for x in current().retriever.embed_query(query)]


def search_vectors(embedding: list[float], top_k: int = 5) -> list[ScoredPoint]:
    """The `top_k` points most similar to `embedding` (the agent contract's `search_vectors`), best
    first, each at least the agent's threshold in force similar (0.75 with Cohere, as the contract's
    `score_threshold`; the measured one for the local embedder, see /api/health).

    Raises `InvalidInputError` (not a list of finite numbers of the collection's dimension, or `top_k`
    outside 1..100) and `RetrievalError` subclasses.
    """
    import numpy as np

    retriever = current().retriever
    dimension = retriever.embedder.dimension
    if (not isinstance(embedding, list | tuple) or len(embedding) != dimension
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in embedding)):
        raise InvalidInputError(f"embedding must be a list of {dimension} finite numbers",
                                code="INVALID_EMBEDDING", field="embedding")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInputError(f"top_k must be an integer between 1 and {MAX_TOP_K}",
                                code="INVALID_TOP_K", field="top_k")
    vector = np.asarray(embedding, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        raise InvalidInputError("embedding must not be all zeros", code="INVALID_EMBEDDING", field="embedding")
    retriever.store.check_embedder(retriever.embedder.name, dimension)
    threshold = default_threshold(retriever.settings, "agent")
    hits = retriever.store.search(vector / norm, SparseVector([], []), mode="dense", limit=top_k)
    return [ScoredPoint(id=h.chunk_id, score=round(h.cosine, 6), payload=h.payload.to_dict())
            for h in sorted(hits, key=lambda h: h.cosine, reverse=True) if h.cosine >= threshold]


def retrieve_book_context(query: str) -> str:
    """The agent contract's tool: "Context from the book:" and a `[Source: ...]` block per chunk, or
    "No relevant content found in the book for this query.". Raises as `get_embedding` and
    `search_vectors` do."""
    context, _ = book_context(current().retriever, validate_query(query))
    return context
