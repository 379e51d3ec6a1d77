"""Optional Cohere Rerank over the fused candidates (`COHERE_RERANK_MODEL`, e.g. `rerank-v3.5`).

Reranking is an improvement, never a dependency: when the call fails (rate limit, outage, timeout,
a malformed reply) the request keeps the fused order and a warning is logged. One retry at most,
waiting at most a second, because the request is already inside API Gateway's 30 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.adapters.cohere import ClientProvider, call_cohere
from bookrag.domain.models import StoredHit, embedding_text
from bookrag.observability import logger

if TYPE_CHECKING:
    from cohere.core.request_options import RequestOptions

    from bookrag.config.settings import Settings

MAX_DOCUMENTS = 100  # Cohere bills a search per 100 documents; our candidate lists stay below it


def rerank_text(hit: StoredHit) -> str:
    """The chunk as the reranker sees it: with its place in the book, as it was embedded."""
    p = hit.payload
    return embedding_text(p.doc_title, p.heading_path, p.content_text)


class CohereReranker:
    """Cohere `ClientV2.rerank`. Raises our `EmbeddingError` family (the same upstream, the same failures)."""

    def __init__(self, settings: Settings, client: ClientProvider) -> None:
        if settings.cohere_rerank_model is None:
            raise errors.ConfigError("COHERE_RERANK_MODEL is not set")
        if settings.cohere_api_key is None:
            raise errors.ConfigError("COHERE_API_KEY is required when COHERE_RERANK_MODEL is set")
        self.settings = settings
        self.model = settings.cohere_rerank_model
        self._client = client

    def scores(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `documents`, relevance score) pairs, most relevant first."""
        def rerank(options: RequestOptions) -> list[tuple[int, float]]:
            response = self._client().rerank(model=self.model, query=query, documents=list(documents),
                                             top_n=len(documents), request_options=options)
            ranked = [(int(r.index), float(r.relevance_score)) for r in response.results]
            if any(not 0 <= i < len(documents) for i, _ in ranked):
                raise errors.EmbeddingUnavailableError("The reranker returned an unknown document index")
            return ranked

        return call_cohere(rerank, "embedding", timeout_s=self.settings.cohere_timeout_s)

    def rerank(self, query: str, hits: list[StoredHit]) -> list[StoredHit]:
        """`hits` in the reranker's order (its relevance as `rank_score`); unchanged if the call fails.

        Candidates the reranker did not return keep their fused order after the reranked ones.
        """
        head, tail = hits[:MAX_DOCUMENTS], hits[MAX_DOCUMENTS:]
        if len(head) < 2:
            return hits
        try:
            ranked = self.scores(query, [rerank_text(h) for h in head])
        except errors.BookRAGError as exc:
            logger.warning("rerank failed; keeping the fused order", extra={"error_code": exc.code,
                                                                            "model": self.model})
            return hits
        seen: set[int] = set()
        out = []
        for index, score in ranked:
            if index not in seen:
                seen.add(index)
                out.append(replace(head[index], rank_score=score))
        out.extend(h for i, h in enumerate(head) if i not in seen)
        return out + tail
