"""The retrieval core: a query in, ranked chunks out, whatever interface asked.

Ranking and scoring. The ranker (dense, BM25, or both fused inside Qdrant, optionally reranked by
Cohere) decides which chunks are returned and in which order; thresholds are about meaning, so they
apply to each chunk's cosine similarity to the query (clamped to [0, 1]), whatever ranked it.

The contracts promise results in descending score order. Re-sorting the fused top_k by cosine would
undo the fusion's ordering (on textbook-2, MRR@10 0.87 sorted by cosine against 0.90 in fused order,
benchmarks/eval-textbook-2.md), so results keep the ranker's order and each carries a *monotone*
score: the lowest cosine among itself and every result ranked above it (a running minimum). Hence:

- scores lie in [0, 1] and never increase down the list;
- a result's score never exceeds its own cosine, so `score >= t` still means "at least t similar";
- `min_score=t` keeps exactly the chunks whose cosine is at least t, as before;
- where the ranker agrees with cosine (always, in dense mode) the score *is* the cosine.

`order="score"` gives the former behaviour (sorted by cosine, score = cosine), for comparison.

When the query cannot be embedded because the embedder is down (a timeout, a 429, a 5xx, or its
circuit open: a recoverable `EmbeddingError`), the search runs on the BM25 half alone
(`sparse-fallback`, `domain.retrieval_mode`), and a hit's "cosine" is its lexical coverage instead: the
share of the query's content words (stemmed) its text and headings hold. Thresholds keep their
meaning of "enough of the question is there"; an auth or configuration error is still raised.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import numpy as np

from bookrag.adapters.store.port import BookStore, Fusion
from bookrag.domain.edition import BookEditions, note_untranslated, record, resolve, wanted
from bookrag.domain.models import Filters, SearchHit, SearchResult, SparseVector, StoredHit
from bookrag.domain.query import Interface
from bookrag.domain.retrieval_mode import mark_degraded
from bookrag.domain.thresholds import DEFAULT_THRESHOLDS
from bookrag.errors import ConfigError, EmbeddingError, InvalidInputError
from bookrag.observability import record_fallback
from bookrag.retrieval.ranking import diversify, monotone_scores
from bookrag.retrieval.rerank import RelevanceModel, rerank
from bookrag.text.bm25 import STOP_WORDS, BM25Encoder, term_id, tokenize
from bookrag.text.facets import facet_stems
from bookrag.text.overlap import carried_over, joined

if TYPE_CHECKING:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.config.settings import RetrievalMode, Settings

Order = Literal["score", "rank"]
T = TypeVar("T")

_VOCABULARY_WORD = re.compile(r"[^\W\d_]{4,}")  # words a typo may stand for: letters, four or more

# Candidates fetched per search: enough for the diversity caps and the reranker to choose from
# without scoring the whole book. Deeper prefetches (50, 100) measured no better (eval-textbook-2.md).
MIN_CANDIDATES = 24
CANDIDATES_PER_RESULT = 4
MAX_CANDIDATES = 200
# Reciprocal rank fusion: rank-based, so it needs no calibration between cosine and BM25 scales and
# behaves the same for every embedder. DBSF ranked better on textbook-2 (MRR@10 0.96 vs 0.90) but
# lost a multi-part question's second file (hit@5 0.95 vs 0.98); see the benchmark notes.
DEFAULT_FUSION: Fusion = "rrf"
# With diversity on, a file fills at most this many results (a section at most
# DIVERSITY_MAX_PER_SECTION, default 2): a multi-part question needs its second file, and one long
# chapter would otherwise take all five slots (multi hit@5 0.71 -> 0.86 on textbook-2, 0.75 -> 1.0 on
# the sample book).
DIVERSITY_MAX_PER_FILE = 3


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
    order: Order = "rank"
    fusion: Fusion | None = None  # None: DEFAULT_FUSION
    per_file: int = DIVERSITY_MAX_PER_FILE  # with diversity on, a file fills at most this many results


def lexical_coverage(query: str, hits: list[StoredHit]) -> list[StoredHit]:
    """`hits` with the share of the query's content words each one holds as its similarity (the
    sparse fallback has no query vector to measure a cosine with)."""
    wanted = set(tokenize(query))
    if not wanted:
        return hits
    out = []
    for h in hits:
        p = h.payload
        terms = set(tokenize(" ".join([p.doc_title, *p.heading_path, p.content_text])))
        out.append(replace(h, cosine=len(wanted & terms) / len(wanted)))
    return out


class Retriever:
    """Embeds the query, searches the store, applies threshold, reranking and diversity. Thread-safe."""

    def __init__(self, settings: Settings, embedder: CachedEmbedder, store: BookStore,
                 reranker: RelevanceModel | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.store = store
        self.reranker = reranker
        self.bm25 = BM25Encoder()
        self._read: dict[str, tuple[str, object]] = {}  # per book version: its pages, its vocabulary

    def describe(self) -> dict[str, Any]:
        """The ranking configuration, for evaluation reports and health output."""
        return {"fusion": DEFAULT_FUSION, "rrf_k": self.settings.rrf_k,
                "candidates": f"max({CANDIDATES_PER_RESULT}*top_k, {MIN_CANDIDATES})",
                "diversity": {"per_section": self.settings.diversity_max_per_section,
                              "per_file": DIVERSITY_MAX_PER_FILE if self.settings.diversity_max_per_section else 0},
                "bm25": {"k1": self.bm25.k1, "b": self.bm25.b, "avg_doc_len": self.bm25.avg_doc_len},
                "reranker": self.reranker.model if self.reranker else None}

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        """Raises `EmbeddingError`, `StoreError`/`StoreConnectionError`, `InvalidInputError`.

        Reranking failures are not raised: the fused order is kept (and the failure logged).
        """
        opts = options or SearchOptions()
        if not query:
            raise InvalidInputError("Query text is required", code="MISSING_QUERY", field="query")
        t0 = time.perf_counter()
        mode = opts.mode or self.settings.retrieval_mode
        sparse = self.bm25.encode_query(query, facet_stems(query))
        try:
            vector = self.embedder.embed_query(query)
        except EmbeddingError as exc:
            if not exc.recoverable or not sparse.indices:  # a bad key is not an outage; no words, no BM25
                raise
            record_fallback(exc.code)
            mark_degraded()
            vector, mode = None, "sparse"
        t1 = time.perf_counter()
        self.store.check_embedder(self.embedder.name, self.embedder.dimension)
        dense = vector if vector is not None else np.zeros(self.embedder.dimension, dtype=np.float32)
        stored = self.store.search(dense, sparse, mode=mode,
                                   limit=candidate_limit(opts.top_k), filters=self.confined(opts.filters),
                                   rrf_k=self.settings.rrf_k, fusion=opts.fusion or DEFAULT_FUSION)
        if vector is None:
            stored = lexical_coverage(query, stored)
        kept = [h for h in stored if h.cosine >= opts.min_score]
        reranker = self._reranker(opts.rerank)  # down: its circuit skips it, the fused order stays
        if reranker is not None:
            kept = rerank(reranker, query, kept)
        t2 = time.perf_counter()
        cap = self.settings.diversity_max_per_section if opts.diversify else 0
        chosen = diversify(kept, opts.top_k, cap, opts.per_file if cap else 0)
        if opts.order == "score":
            chosen.sort(key=lambda h: h.cosine, reverse=True)
        scores = monotone_scores([h.cosine for h in chosen])
        hits = [SearchHit(chunk_id=h.chunk_id, score=round(score, 6), rank_score=h.rank_score, payload=h.payload)
                for h, score in zip(chosen, scores, strict=True)]
        note_untranslated(h.payload.content_locale for h in hits)
        return SearchResult(hits=hits, total_candidates=len(stored),
                            query_vector=vector.tolist() if vector is not None else [],
                            embed_ms=(t1 - t0) * 1000, search_ms=(t2 - t1) * 1000)

    def _reranker(self, wanted: bool | None) -> RelevanceModel | None:
        if wanted is False:
            return None
        if wanted and self.reranker is None:
            raise ConfigError("Reranking was requested but COHERE_RERANK_MODEL is not set")
        return self.reranker

    def neighbours(self, hit: SearchHit, window: int = 1) -> str:
        """The hit's text with its adjacent chunks (by chunk_index), for an answerer's context."""
        idx = hit.chunk_index
        total = hit.payload.total_chunks
        wanted = [i for i in range(idx - window, idx + window + 1) if 0 <= i < total]
        if len(wanted) <= 1:
            return hit.text
        chunks = self.store.fetch_chunks(hit.source_file, wanted)
        return "\n\n".join(c.content_text for c in chunks) or hit.text

    def opening(self, source_file: str, count: int) -> list[SearchHit]:
        """A page's first `count` chunks, in its order, as hits: read, not ranked (score 0)."""
        return [SearchHit(c.chunk_id, 0.0, 0.0, c) for c in self.store.fetch_chunks(source_file, list(range(count)))]

    def page_before(self, hit: SearchHit) -> str:
        """What the hit's rendered page shows above it: the sidebar (every page's title), then its file's
        earlier chunks, each sentence once. What a text fragment's start must not occur in."""
        texts = [c.content_text for c in self.store.fetch_chunks(hit.source_file, list(range(hit.chunk_index)))] \
            if hit.chunk_index > 0 else []
        page = joined(texts)
        # Its last chunk's tail is the hit's own start, carried over: not above the hit.
        shared = carried_over(texts[-1], hit.text) if texts else 0
        return "\n".join([*self.page_titles(), page[: len(page) - shared] if shared else page])

    def page_titles(self) -> list[str]:
        """Every page's title, as a sidebar lists them; read once per book version."""
        return [title for _, title in self.pages() if title]

    def pages(self) -> list[tuple[str, str]]:
        """Every page of the edition this request reads as (source_file, title), in the book's order (the
        table of contents'); read once per book version."""
        def read() -> dict[tuple[str, str], list[tuple[str, str]]]:
            pages: dict[tuple[str, str], dict[tuple[int, str], str]] = {}
            for p in self.store.scroll_payloads(["doc_title", "page_number", "source_file", "locale", "version"]):
                edition = (str(p.get("locale") or ""), str(p.get("version") or ""))
                key = (int(p.get("page_number") or 0), str(p.get("source_file") or ""))
                pages.setdefault(edition, {})[key] = str(p.get("doc_title") or "")
            return {e: [(source, title) for (_, source), title in sorted(found.items())] for e, found in pages.items()}

        every = self._per_version("pages", read)
        scope = self.confined(None)
        return every.get((scope.locale or "", scope.version or "") if scope else ("", ""), [])

    def editions(self) -> BookEditions:
        """The locales and versions the book holds (none for a docs folder alone), as its book version records
        them: no read beyond the version the store already resolves for every request."""
        version = self.store.book_version()
        if version is None or not version.site_locales:
            return BookEditions()
        return BookEditions(frozenset(version.site_locales), frozenset(version.site_versions),
                            version.site_default_locale, version.site_latest)

    def confined(self, filters: Filters | None) -> Filters | None:
        """`filters` narrowed to the edition this request reads (`domain.edition`): the one it names, else the
        site's default locale and version, so no search mixes two versions or languages. A book without
        editions (a docs folder) is searched as asked."""
        editions = self.editions()
        if not editions.sited:
            return filters
        found = resolve(editions, wanted())
        record(found)
        return replace(filters or Filters(), locale=found.locale, version=found.version)

    def vocabulary(self) -> frozenset[str]:
        """Every word of the book's text, lower-cased (what a misspelt word of a question may have meant);
        read once per book version, and only when a question needs it."""
        return self._per_version("vocabulary", lambda: frozenset(
            w.lower() for p in self.store.scroll_payloads(["content_text"])
            for w in _VOCABULARY_WORD.findall(str(p.get("content_text") or ""))))

    def _per_version(self, name: str, read: Callable[[], T]) -> T:
        """What `read` makes of the book, kept until the store serves another book version."""
        version = self.store.book_version()
        key = version.label if version else ""
        kept = self._read.get(name)
        if kept is None or kept[0] != key:
            kept = self._read[name] = (key, read())
        return cast(T, kept[1])

    def book_title(self) -> str:
        """The served book's title as its version records it ('' when ingest knew none)."""
        version = self.store.book_version()
        return version.title if version else ""

    def uses_term(self, term: str) -> bool:
        """True when the book contains the stemmed `term` anywhere: its sparse index holds every term."""
        zero = np.zeros(self.embedder.dimension, dtype=np.float32)
        return bool(self.store.search(zero, SparseVector([term_id(term)], [1.0]), mode="sparse", limit=1))

    def best_cosines(self, vectors: np.ndarray) -> list[float]:
        """Each row's cosine with its nearest chunk of the book (dense search, one hit; 0.0 for an empty book):
        how near a question is to anything the book says, whatever the book answers. Raises `StoreError`s
        and `EmbedderMismatchError` as `search` does."""
        self.store.check_embedder(self.embedder.name, self.embedder.dimension)
        empty = SparseVector([], [])
        return [max((h.cosine for h in self.store.search(np.asarray(row, dtype=np.float32), empty, mode="dense",
                                                        limit=1)), default=0.0) for row in vectors]

    def book_words(self, text: str) -> frozenset[str]:
        """The words of `text` the book itself uses (four letters or more, not stop words): its names and
        terms, which a question keeps in any language ("Isaac Sim", "Windows")."""
        vocabulary = self.vocabulary()
        return frozenset(w for w in (m.lower() for m in _VOCABULARY_WORD.findall(text))
                         if w in vocabulary and w not in STOP_WORDS)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed_documents(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Passages embedded on a request, within its limits (`CachedEmbedder.embed_passages`)."""
        return self.embedder.embed_passages(texts)

    @property
    def embeds_locally(self) -> bool:
        """Whether embedding costs nothing but CPU (so an answerer may embed sentences on a request)."""
        return self.settings.resolved_embedding_provider == "local"

    def warm_up(self) -> None:
        """Check the index and run one search, so the first request finds every model and query type
        built. Never a paid call: with a remote embedder any unit vector exercises the same code."""
        self.store.check_embedder(self.embedder.name, self.embedder.dimension)
        if self.embeds_locally:
            vector = self.embedder.inner.embed_query("warm up")  # not cached: pages in the weights
        else:
            dim = self.embedder.dimension
            vector = np.full(dim, 1.0 / math.sqrt(dim), dtype=np.float32)
        self.store.search(vector, self.bm25.encode_query("warm up"), mode=self.settings.retrieval_mode, limit=1)
        self.store.book_version()  # so that health, which calls nothing, can say which book is served
