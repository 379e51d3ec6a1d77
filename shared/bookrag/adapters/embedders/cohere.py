"""Cohere embed-english-v3.0 through the real SDK (ClientV2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from bookrag.adapters.circuit import CircuitBreaker
from bookrag.adapters.cohere import ClientProvider, call_cohere
from bookrag.errors import EmbeddingError

if TYPE_CHECKING:
    from cohere.core.request_options import RequestOptions

    from bookrag.config.settings import Settings

MAX_TEXTS_PER_CALL = 96  # the API's limit per request
DIMENSIONS = {"embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024,
              "embed-english-light-v3.0": 384, "embed-multilingual-light-v3.0": 384}


class CohereEmbedder:
    """Documents are embedded as `search_document`, queries as `search_query` (v3 is asymmetric)."""

    def __init__(self, settings: Settings, client: ClientProvider) -> None:
        self._settings = settings
        self._client = client
        self.model = settings.cohere_embed_model
        self.name = f"cohere/{self.model}"
        self.dimension = DIMENSIONS.get(self.model, 1024)
        # Queries only: a request can fall back to BM25 when Cohere is down; an ingest cannot, and fails.
        self.breaker = CircuitBreaker(f"{self.name} queries")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Raises `EmbeddingError` subclasses; waits out rate limits (ingest is a batch job)."""
        s = self._settings
        out = [
            self._call(texts[i : i + MAX_TEXTS_PER_CALL], "search_document", timeout_s=s.cohere_ingest_timeout_s,
                       attempts=s.cohere_ingest_retries + 1, max_wait=60.0, retry_timeouts=True)
            for i in range(0, len(texts), MAX_TEXTS_PER_CALL)
        ]
        return np.vstack(out) if out else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passages on a request (grounding's near misses): the query's timeout, retry and circuit, never
        the ingest retry policy, whose waits would outlast the request."""
        timeout_s = self._settings.cohere_timeout_s

        def batch(at: int) -> Callable[[], np.ndarray]:
            return lambda: self._call(texts[at : at + MAX_TEXTS_PER_CALL], "search_document", timeout_s=timeout_s)

        parts = [self.breaker.call(batch(at)) for at in range(0, len(texts), MAX_TEXTS_PER_CALL)]
        return np.vstack(parts) if parts else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """At most one retry, never waiting more than a second: this runs inside an API request. While
        the circuit is open (Cohere failed just now) `CircuitOpenError`, at once."""
        timeout_s = self._settings.cohere_timeout_s
        vectors = self.breaker.call(lambda: self._call([text], "search_query", timeout_s=timeout_s))
        first: np.ndarray = vectors[0]
        return first

    def _call(self, texts: Sequence[str], input_type: Literal["search_document", "search_query"], *,
              timeout_s: float, attempts: int = 2, max_wait: float = 1.0, retry_timeouts: bool = False) -> np.ndarray:
        def embed(options: RequestOptions) -> np.ndarray:
            response = self._client().embed(texts=list(texts), model=self.model, input_type=input_type,
                                            embedding_types=["float"], request_options=options)
            vectors = response.embeddings.float_
            if vectors is None or len(vectors) != len(texts) or any(len(v) != self.dimension for v in vectors):
                raise EmbeddingError("Embedding service returned an unexpected response")
            matrix = np.asarray(vectors, dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            normalised: np.ndarray = matrix / np.maximum(norms, 1e-12)
            return normalised

        return call_cohere(embed, "embedding", timeout_s=timeout_s, attempts=attempts, max_wait=max_wait,
                           retry_timeouts=retry_timeouts)
