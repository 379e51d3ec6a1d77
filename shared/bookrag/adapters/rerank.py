"""Cohere Rerank (`COHERE_RERANK_MODEL`, e.g. `rerank-v3.5`) on the container's one Cohere client.

It scores documents for a query; what to rerank and what to do when it fails is the retriever's
(`retrieval.rerank`). One retry at most, waiting at most a second: a request is inside API Gateway's 30 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.adapters.circuit import CircuitBreaker
from bookrag.adapters.cohere import ClientProvider, call_cohere

if TYPE_CHECKING:
    from cohere.core.request_options import RequestOptions

    from bookrag.config.settings import Settings


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
        # A dead reranker is skipped (the fused order is kept) without costing each request its timeout.
        self.breaker = CircuitBreaker(f"cohere/{self.model}")

    def scores(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `documents`, relevance score) pairs, most relevant first."""
        def rerank(options: RequestOptions) -> list[tuple[int, float]]:
            response = self._client().rerank(model=self.model, query=query, documents=list(documents),
                                             top_n=len(documents), request_options=options)
            ranked = [(int(r.index), float(r.relevance_score)) for r in response.results]
            if any(not 0 <= i < len(documents) for i, _ in ranked):
                raise errors.EmbeddingUnavailableError("The reranker returned an unknown document index")
            return ranked

        return self.breaker.call(lambda: call_cohere(rerank, "embedding", timeout_s=self.settings.cohere_timeout_s))
