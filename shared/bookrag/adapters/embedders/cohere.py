"""Cohere embed-english-v3.0 through the real SDK (ClientV2)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Literal

import numpy as np

from bookrag.adapters.cohere import get_cohere_client, translate_cohere_error
from bookrag.adapters.retrying import call_with_retries
from bookrag.errors import BookRAGError, EmbeddingError

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

MAX_TEXTS_PER_CALL = 96  # the API's limit per request
DIMENSIONS = {"embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024,
              "embed-english-light-v3.0": 384, "embed-multilingual-light-v3.0": 384}


class CohereEmbedder:
    """Documents are embedded as `search_document`, queries as `search_query` (v3 is asymmetric)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.model = settings.cohere_embed_model
        self.name = f"cohere/{self.model}"
        self.dimension = DIMENSIONS.get(self.model, 1024)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Raises `EmbeddingError` subclasses; waits out rate limits (ingest is a batch job)."""
        s = self._settings
        out = [
            call_with_retries(
                partial(self._call, texts[i : i + MAX_TEXTS_PER_CALL], "search_document",
                        s.cohere_ingest_timeout_s),
                attempts=s.cohere_ingest_retries + 1, max_wait=60.0, retry_timeouts=True,
            )
            for i in range(0, len(texts), MAX_TEXTS_PER_CALL)
        ]
        return np.vstack(out) if out else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """At most one retry, never waiting more than a second: this runs inside an API request."""
        vectors: np.ndarray = call_with_retries(
            lambda: self._call([text], "search_query", self._settings.cohere_timeout_s),
            attempts=2, max_wait=1.0, retry_timeouts=False,
        )
        first: np.ndarray = vectors[0]
        return first

    def _call(self, texts: Sequence[str], input_type: Literal["search_document", "search_query"],
              timeout_s: float) -> np.ndarray:
        client = get_cohere_client(self._settings, timeout_s)
        try:
            response = client.embed(texts=list(texts), model=self.model, input_type=input_type,
                                    embedding_types=["float"])
            vectors = response.embeddings.float_
        except BookRAGError:
            raise
        except Exception as exc:  # every SDK/transport failure becomes our typed error
            raise translate_cohere_error(exc, "embedding") from None
        if vectors is None or len(vectors) != len(texts) or any(len(v) != self.dimension for v in vectors):
            raise EmbeddingError("Embedding service returned an unexpected response")
        matrix = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        normalised: np.ndarray = matrix / np.maximum(norms, 1e-12)
        return normalised
