"""Optional reranking of the fused candidates by a relevance model (`adapters.rerank`: Cohere Rerank).

Reranking is an improvement, never a dependency: when the model fails (rate limit, outage, timeout,
a malformed reply) the request keeps the fused order and a warning is logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from bookrag import errors
from bookrag.domain.models import StoredHit, embedding_text
from bookrag.observability import logger

MAX_DOCUMENTS = 100  # Cohere bills a search per 100 documents; our candidate lists stay below it


class RelevanceModel(Protocol):
    """Scores documents for a query. Raises our `BookRAGError`s, never an SDK's."""

    model: str

    def scores(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `documents`, relevance score) pairs, most relevant first."""
        ...


def rerank_text(hit: StoredHit) -> str:
    """The chunk as the reranker sees it: with its place in the book, as it was embedded."""
    p = hit.payload
    return embedding_text(p.doc_title, p.heading_path, p.content_text)


def rerank(reranker: RelevanceModel, query: str, hits: list[StoredHit]) -> list[StoredHit]:
    """`hits` in the reranker's order (its relevance as `rank_score`); unchanged if the call fails.

    Candidates the reranker did not return keep their fused order after the reranked ones.
    """
    head, tail = hits[:MAX_DOCUMENTS], hits[MAX_DOCUMENTS:]
    if len(head) < 2:
        return hits
    try:
        ranked = reranker.scores(query, [rerank_text(h) for h in head])
    except errors.BookRAGError as exc:
        logger.warning("rerank failed; keeping the fused order", extra={"error_code": exc.code,
                                                                        "model": reranker.model})
        return hits
    seen: set[int] = set()
    out = []
    for index, score in ranked:
        if index not in seen:
            seen.add(index)
            out.append(replace(head[index], rank_score=score))
    out.extend(h for i, h in enumerate(head) if i not in seen)
    return out + tail
