"""The retrieval core: a query in, ranked chunks out, whatever interface asked.

Ranking and scoring are separate on purpose. The ranker (dense, BM25, or both fused inside Qdrant,
optionally reranked by Cohere) decides *which* chunks are returned; every returned chunk's `score`
is its cosine similarity to the query, clamped to [0, 1], so a threshold always means "at least this
semantically similar" whatever ranked the chunk. The contracts promise results sorted by that score,
so the chosen top_k are returned in descending cosine order (`order="rank"` keeps the ranker's order,
for evaluation).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from bookrag.errors import ConfigError, InvalidInputError
from bookrag.models import SearchHit, SearchResult
from bookrag.sparse import BM25Encoder
from bookrag.store import Filters, StoredHit, VectorStore, get_store
from bookrag.thresholds import DEFAULT_THRESHOLDS

if TYPE_CHECKING:
    from bookrag.embedders import CachedEmbedder
    from bookrag.rerank import CohereReranker
    from bookrag.settings import RetrievalMode, Settings

Interface = Literal["rest", "tool_content", "agent", "python", "perform_retrieval"]
Order = Literal["score", "rank"]

# Candidates fetched per search: enough for the diversity cap and the reranker to choose from
# without scoring the whole book.
MIN_CANDIDATES = 24
CANDIDATES_PER_RESULT = 4
MAX_CANDIDATES = 200


def default_threshold(settings: Settings, interface: Interface) -> float:
    return DEFAULT_THRESHOLDS[settings.resolved_embedding_provider][interface]


def candidate_limit(top_k: int) -> int:
    return min(MAX_CANDIDATES, max(top_k * CANDIDATES_PER_RESULT, MIN_CANDIDATES))


@dataclass(frozen=True, slots=True)
class SearchOptions:
    top_k: int = 5
    min_score: float = 0.0
    filters: Filters | None = None
    mode: RetrievalMode | None = None
    diversify: bool = True
    rerank: bool | None = None  # None: rerank when COHERE_RERANK_MODEL is set
    order: Order = "score"


class Retriever:
    """Embeds the query, searches the store, applies threshold, reranking and diversity. Thread-safe."""

    def __init__(self, settings: Settings, embedder: CachedEmbedder, store: VectorStore,
                 reranker: CohereReranker | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.store = store
        self.reranker = reranker
        self.bm25 = BM25Encoder()

    def describe(self) -> dict[str, Any]:
        """The ranking configuration, for evaluation reports and health output."""
        return {"fusion": "rrf", "rrf_k": self.settings.rrf_k, "candidates": f"max({CANDIDATES_PER_RESULT}*top_k, "
                f"{MIN_CANDIDATES})", "bm25_k1": self.bm25.k1, "bm25_b": self.bm25.b,
                "bm25_avg_doc_len": self.bm25.avg_doc_len, "reranker": self.reranker.model if self.reranker else None}

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        """Raises `EmbeddingError`, `StoreError`/`StoreConnectionError`, `InvalidInputError`.

        Reranking failures are not raised: the fused order is kept (and the failure logged).
        """
        opts = options or SearchOptions()
        if not query:
            raise InvalidInputError("Query text is required", code="MISSING_QUERY", field="query")
        t0 = time.perf_counter()
        vector = self.embedder.embed_query(query)
        t1 = time.perf_counter()
        self.store.check_embedder(self.embedder.name, self.embedder.dimension)
        mode = opts.mode or self.settings.retrieval_mode
        stored = self.store.search(vector, self.bm25.encode_query(query), mode=mode,
                                   limit=candidate_limit(opts.top_k), filters=opts.filters,
                                   rrf_k=self.settings.rrf_k)
        kept = [h for h in stored if h.cosine >= opts.min_score]
        reranker = self._reranker(opts.rerank)
        if reranker is not None:
            kept = reranker.rerank(query, kept)
        t2 = time.perf_counter()
        cap = self.settings.diversity_max_per_section if opts.diversify else 0
        chosen = diversify(kept, opts.top_k, cap)
        if opts.order == "score":
            chosen.sort(key=lambda h: h.cosine, reverse=True)
        hits = [SearchHit(chunk_id=h.chunk_id, score=round(h.cosine, 6), rank_score=h.rank_score,
                          payload=h.payload) for h in chosen]
        return SearchResult(hits=hits, total_candidates=len(stored), query_vector=vector.tolist(),
                            embed_ms=(t1 - t0) * 1000, search_ms=(t2 - t1) * 1000)

    def _reranker(self, wanted: bool | None) -> CohereReranker | None:
        if wanted is False:
            return None
        if wanted and self.reranker is None:
            raise ConfigError("Reranking was requested but COHERE_RERANK_MODEL is not set")
        return self.reranker

    def neighbours(self, hit: SearchHit, window: int = 1) -> str:
        """The hit's text with its adjacent chunks (by chunk_index), for an answerer's context."""
        idx = hit.chunk_index
        total = int(hit.payload.get("total_chunks", 0))
        wanted = [i for i in range(idx - window, idx + window + 1) if 0 <= i < total]
        if len(wanted) <= 1:
            return hit.text
        chunks = self.store.fetch_chunks(hit.source_file, wanted)
        return "\n\n".join(str(c.get("content_text", "")) for c in chunks) or hit.text


def diversify(hits: list[StoredHit], top_k: int, cap: int) -> list[StoredHit]:
    """Take hits in rank order, at most `cap` per (file, section); fill from the rest if short.

    Adjacent chunks of one section overlap and say much the same; capping them leaves room for the
    other sections (and files) a question may need.
    """
    if cap <= 0:
        return hits[:top_k]
    counts: Counter[tuple[str, str]] = Counter()
    chosen: list[StoredHit] = []
    deferred: list[StoredHit] = []
    for h in hits:
        key = (str(h.payload.get("source_file")), str(h.payload.get("section_heading")))
        if counts[key] < cap:
            counts[key] += 1
            chosen.append(h)
        else:
            deferred.append(h)
        if len(chosen) == top_k:
            return chosen
    return chosen + deferred[: top_k - len(chosen)]


@lru_cache(maxsize=8)
def get_retriever(settings: Settings) -> Retriever:
    """Raises `ConfigError` when a rerank model is set without a Cohere key."""
    from bookrag.embedders import get_embedder

    reranker = None
    if settings.cohere_rerank_model:
        from bookrag.rerank import CohereReranker

        reranker = CohereReranker(settings)
    return Retriever(settings, get_embedder(settings), get_store(settings), reranker)
