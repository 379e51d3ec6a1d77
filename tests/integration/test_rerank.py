"""Cohere Rerank through the real SDK, over HTTP, against a stub: the wire format and every fallback.

The retriever searches the session's indexed sample book (embedded Qdrant, local embedder); only the
reranker talks to the stub.
"""

from __future__ import annotations

from typing import Any

import pytest

from bookrag.adapters.rerank import CohereReranker
from bookrag.config.settings import Settings, load_settings
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for
from tests.support.stubs import Recorded, Reply

KEY = "co-canary-7d2e01"
QUERY = "How do I install ROS 2 Humble?"


@pytest.fixture
def rerank_settings(book_env: Settings, stub: Any) -> Settings:
    return load_settings(qdrant_path=book_env.qdrant_path, embedding_provider="local",
                         cohere_rerank_model="rerank-v3.5", cohere_api_key=KEY, cohere_base_url=stub.url,
                         cohere_timeout_s=0.5)


@pytest.fixture
def retriever(book_env: Settings, rerank_settings: Settings) -> Retriever:
    # The book's own store and embedder: one embedded Qdrant client per folder and process.
    book = container_for(book_env)
    reranker = CohereReranker(rerank_settings, lambda: container_for(rerank_settings).cohere)
    return Retriever(rerank_settings, book.embedder, book.store, reranker)


def reversed_ranking(req: Recorded) -> Reply:
    """Rank the documents last-first, with decreasing relevance."""
    n = len(req.json()["documents"])
    return Reply(200, {"id": "r1", "results": [{"index": n - 1 - i, "relevance_score": 0.99 - i * 0.01}
                                                for i in range(n)], "meta": {}})


def fused(retriever: Retriever, top_k: int = 5) -> list[str]:
    opts = SearchOptions(top_k=top_k, rerank=False, order="rank")
    return [h.chunk_id for h in retriever.search(QUERY, opts).hits]


def test_request_shape_and_reranked_order(retriever: Retriever, stub: Any) -> None:
    stub.on("/v2/rerank", reversed_ranking)

    hits = retriever.search(QUERY, SearchOptions(top_k=5, order="rank")).hits

    (call,) = stub.calls("/v2/rerank")
    body = call.json()
    assert call.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "rerank-v3.5" and body["query"] == QUERY
    assert len(body["documents"]) == body["top_n"] >= 24
    assert all(isinstance(d, str) and d for d in body["documents"])
    # The reranker's favourite (the last candidate sent) now leads, with its relevance as rank score.
    assert hits[0].text in body["documents"][-1] and hits[0].rank_score == pytest.approx(0.99)
    assert [h.chunk_id for h in hits] != fused(retriever)


def test_scores_stay_in_range_and_descending_after_reranking(retriever: Retriever, stub: Any) -> None:
    stub.on("/v2/rerank", reversed_ranking)

    hits = retriever.search(QUERY, SearchOptions(top_k=5)).hits

    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert {h.rank_score for h in hits} <= {0.99 - i * 0.01 for i in range(100)}


def test_one_retry_on_429_then_reranked(retriever: Retriever, stub: Any) -> None:
    stub.on("/v2/rerank", Reply(429, {"message": "slow down"}), reversed_ranking)

    hits = retriever.search(QUERY, SearchOptions(top_k=5, order="rank")).hits

    assert len(stub.calls("/v2/rerank")) == 2
    assert hits[0].rank_score == pytest.approx(0.99)


@pytest.mark.parametrize("replies", [
    pytest.param([Reply(500, {"message": "boom"})], id="500-twice"),
    pytest.param([Reply(429, {"message": "later"}, headers={"Retry-After": "30"})], id="429-long-retry-after"),
    pytest.param([Reply(401, {"message": "bad key"})], id="401"),
    pytest.param([Reply(200, {"results": [{"index": 999, "relevance_score": 0.5}]})], id="unknown-index"),
    pytest.param([Reply(200, b"not json")], id="garbage"),
    pytest.param([Reply(hang=True)], id="hang"),
])
def test_failures_fall_back_to_the_fused_order(retriever: Retriever, stub: Any, replies: list[Reply],
                                               caplog: pytest.LogCaptureFixture) -> None:
    stub.on("/v2/rerank", *replies)

    hits = retriever.search(QUERY, SearchOptions(top_k=5, order="rank")).hits

    assert [h.chunk_id for h in hits] == fused(retriever)
    assert "rerank failed" in caplog.text
    assert 1 <= len(stub.calls("/v2/rerank")) <= 2


def test_long_retry_after_and_timeouts_are_not_retried(retriever: Retriever, stub: Any) -> None:
    stub.on("/v2/rerank", Reply(429, {"message": "later"}, headers={"Retry-After": "30"}))

    retriever.search(QUERY, SearchOptions(top_k=5))

    assert len(stub.calls("/v2/rerank")) == 1


def test_reranking_is_off_unless_configured(book_env: Settings) -> None:
    from bookrag.services.container import container_for

    assert container_for(book_env).retriever.reranker is None


def test_rerank_model_without_a_key_fails_at_start(make_settings: Any) -> None:
    from bookrag.errors import ConfigError

    with pytest.raises(ConfigError, match="COHERE_API_KEY"):
        settings = make_settings(cohere_rerank_model="rerank-v3.5")
        CohereReranker(settings, lambda: container_for(settings).cohere)
