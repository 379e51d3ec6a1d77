"""The embedder the settings name, with a bounded LRU cache of query vectors."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from bookrag.adapters.embedders.base import Embedder
from bookrag.text.tokens import approx_token_count

if TYPE_CHECKING:
    import numpy as np

    from bookrag.adapters.cohere import ClientProvider
    from bookrag.config.settings import Settings

__all__ = ["CachedEmbedder", "Embedder", "build_embedder"]


class CachedEmbedder:
    """Wraps an embedder; repeated queries in a warm container skip the model or the paid API call."""

    def __init__(self, inner: Embedder, cache_size: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._cached = lru_cache(maxsize=cache_size)(self._embed_query_readonly)

    def _embed_query_readonly(self, text: str) -> np.ndarray:
        vector = self.inner.embed_query(text)
        vector.setflags(write=False)  # shared between callers: nobody may mutate it
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._cached(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passages embedded on a request (grounding): under the request's limits where the embedder has
        them (a remote one's ingest path retries for minutes); the documents' embedding otherwise."""
        passages = getattr(self.inner, "embed_passages", None)
        return np.asarray(passages(texts)) if passages is not None else self.inner.embed_documents(texts)

    def count_tokens(self, text: str) -> int:
        counter = getattr(self.inner, "count_tokens", None)
        if counter is not None:
            return int(counter(text))
        # Remote models tokenise on their side; word pieces run ~1.3 per word token here.
        return int(approx_token_count(text) * 1.3)

    def cache_info(self) -> object:
        return self._cached.cache_info()


def build_embedder(settings: Settings, cohere_client: ClientProvider) -> CachedEmbedder:
    """The configured embedder, wrapped in the query-vector cache (the container builds it once)."""
    inner: Embedder
    if settings.resolved_embedding_provider == "cohere":
        from bookrag.adapters.embedders.cohere import CohereEmbedder

        inner = CohereEmbedder(settings, cohere_client)
    else:
        from bookrag.adapters.embedders.batching import BatchedQueries
        from bookrag.adapters.embedders.local import LocalEmbedder

        inner = BatchedQueries(LocalEmbedder())
    return CachedEmbedder(inner, settings.query_cache_size)
