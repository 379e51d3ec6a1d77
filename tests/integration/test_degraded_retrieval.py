"""Reading survives a Cohere outage: retrieval and answers fall back to BM25 alone, say so, and a dead
upstream stops costing each request its attempts (a circuit breaker); ingest still fails, loudly.

Cohere is the real SDK against a stub on 127.0.0.1 answering 503 or 429; the store is a stub Qdrant
(the fault matrix's, tests/integration/test_upstream_faults.py) or the session's embedded sample book.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag import errors
from bookrag.adapters.circuit import CircuitBreaker, CircuitOpenError
from bookrag.adapters.embedders.cohere import CohereEmbedder
from bookrag.adapters.rerank import CohereReranker
from bookrag.config.settings import Settings, load_settings
from bookrag.observability import metrics
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for
from tests.support.stubs import Reply, StubServer
from tests.support.upstreams import COLLECTION, cohere_embed, serve_qdrant, stub_env

QUERY = "How do I install ROS 2 Humble?"
EMBED = "/v2/embed"
SEARCH = f"/collections/{COLLECTION}/points/query"
DOWN = {"503": Reply(503, {"message": "down"}), "429": Reply(429, {"message": "trial key"}, {"Retry-After": "0"})}

pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


@pytest.fixture
def qdrant() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture
def client() -> TestClient:
    from bookrag.web.app import create_app

    return TestClient(create_app("all"))


@pytest.fixture
def configure(use_env: Callable[..., None], stub: StubServer, qdrant: StubServer) -> None:
    serve_qdrant(qdrant)
    use_env(**stub_env(stub.url, qdrant.url, cohere_key="co-canary-degraded", qdrant_key="qd-canary-degraded"))


@pytest.mark.parametrize("status", DOWN)
def test_an_open_circuit_spares_later_requests_the_dead_upstream(status: str, client: TestClient, stub: StubServer,
                                                               qdrant: StubServer, configure: None) -> None:
    # GIVEN Cohere's embed endpoint down (503, or 429 on a trial key)
    stub.on(EMBED, DOWN[status])
    metrics.metric_set.clear()

    # WHEN three readers ask in turn
    calls, modes = [], []
    for _ in range(3):
        before = len(stub.calls(EMBED))
        response = client.post("/api/retrieve", json={"query": QUERY})
        assert response.status_code == 200, response.text
        assert response.json()["retrieved_chunks"]
        calls.append(len(stub.calls(EMBED)) - before)
        modes.append(response.headers.get("x-retrieval-mode"))

    # THEN each is answered from BM25 and says so; the first two paid a call and its retry, the third
    # none (the circuit is open), and the fallbacks are counted in the metrics
    assert modes == ["sparse-fallback"] * 3
    assert calls == [2, 2, 0]
    assert sum(metrics.metric_set["RetrievalFallbacks"]["Value"]) == 3
    assert len(qdrant.calls(SEARCH)) == 3


def test_a_healthy_embedder_is_not_degraded(client: TestClient, stub: StubServer, qdrant: StubServer,
                                            configure: None) -> None:
    stub.on(EMBED, cohere_embed)

    response = client.post("/api/retrieve", json={"query": QUERY})

    assert response.status_code == 200
    assert "x-retrieval-mode" not in response.headers
    assert "prefetch" in qdrant.calls(SEARCH)[0].json()  # the hybrid query


def test_a_streamed_answer_says_it_was_degraded(client: TestClient, stub: StubServer, configure: None) -> None:
    stub.on(EMBED, DOWN["503"])

    response = client.post("/api/answer/stream", json={"query": QUERY})

    assert response.status_code == 200
    assert response.headers["x-retrieval-mode"] == "sparse-fallback"
    assert "event: final" in response.text


def test_the_circuit_lets_one_call_through_after_its_window() -> None:
    now = [0.0]
    breaker = CircuitBreaker("test", failures=2, open_s=20.0, clock=lambda: now[0])
    seen: list[str] = []

    def down() -> None:
        seen.append("call")
        raise errors.EmbeddingUnavailableError()

    for _ in range(2):
        with pytest.raises(errors.EmbeddingUnavailableError):
            breaker.call(down)
    with pytest.raises(CircuitOpenError):
        breaker.call(down)
    assert len(seen) == 2 and breaker.state == "open"

    now[0] = 20.0  # the window has passed: one trial call, which fails, and the circuit opens again
    with pytest.raises(errors.EmbeddingUnavailableError):
        breaker.call(down)
    assert len(seen) == 3 and breaker.state == "open"

    now[0] = 40.0  # the next trial succeeds: closed
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state == "closed"


def test_a_refusing_upstream_does_not_open_the_circuit() -> None:
    breaker = CircuitBreaker("test", failures=1)

    def refuses() -> None:
        raise errors.EmbeddingAuthError()

    for _ in range(3):
        with pytest.raises(errors.EmbeddingAuthError):
            breaker.call(refuses)
    assert breaker.state == "closed"


def test_ingest_still_fails_clearly_while_queries_fall_back(make_settings: Any, stub: StubServer) -> None:
    # GIVEN Cohere down, and the query circuit already open
    stub.on(EMBED, DOWN["503"])
    settings = make_settings(embedding_provider="cohere", cohere_api_key="co-canary-ingest", cohere_base_url=stub.url,
                             cohere_timeout_s=1.0, cohere_ingest_timeout_s=1.0, cohere_ingest_retries=1)
    embedder = CohereEmbedder(settings, lambda: container_for(settings).cohere)
    for _ in range(2):
        with pytest.raises(errors.EmbeddingUnavailableError):
            embedder.embed_query(QUERY)
    assert embedder.breaker.state == "open"
    before = len(stub.calls(EMBED))

    # WHEN an ingest embeds its documents
    with pytest.raises(errors.EmbeddingUnavailableError) as failure:
        embedder.embed_documents(["one chunk", "another chunk"])

    # THEN it asked Cohere (no circuit on the batch path) and failed with the contract's code
    assert len(stub.calls(EMBED)) - before == 2
    assert not isinstance(failure.value, CircuitOpenError)
    assert failure.value.code == "CONNECTION_ERROR"


def test_a_dead_reranker_is_skipped_without_a_call(book_env: Settings, stub: StubServer) -> None:
    # GIVEN the sample book with a reranker whose upstream answers 503
    settings = load_settings(qdrant_path=book_env.qdrant_path, embedding_provider="local",
                             cohere_rerank_model="rerank-v3.5", cohere_api_key="co-canary-rerank",
                             cohere_base_url=stub.url, cohere_timeout_s=0.5)
    book = container_for(book_env)
    retriever = Retriever(settings, book.embedder, book.store,
                          CohereReranker(settings, lambda: container_for(settings).cohere))
    stub.on("/v2/rerank", Reply(503, {"message": "down"}))
    fused = [h.chunk_id for h in retriever.search(QUERY, SearchOptions(rerank=False)).hits]

    # WHEN three searches ask for reranking
    calls = []
    for _ in range(3):
        before = len(stub.calls("/v2/rerank"))
        hits = retriever.search(QUERY, SearchOptions()).hits
        assert [h.chunk_id for h in hits] == fused
        calls.append(len(stub.calls("/v2/rerank")) - before)

    # THEN the third never called it
    assert calls == [2, 2, 0]


def test_passages_embedded_on_a_request_keep_to_the_requests_limits(stub: StubServer,
                                                                    make_settings: Callable[..., Settings]) -> None:
    # GIVEN Cohere down, and an ingest policy that would retry five times
    stub.on(EMBED, DOWN["503"])
    settings = make_settings(embedding_provider="cohere", cohere_api_key="co-canary-passages", cohere_base_url=stub.url,
                             cohere_timeout_s=1.0, cohere_ingest_timeout_s=1.0, cohere_ingest_retries=4)
    embedder = CohereEmbedder(settings, lambda: container_for(settings).cohere)

    # WHEN grounding embeds passages on two requests, then a third
    for _ in range(2):
        with pytest.raises(errors.EmbeddingUnavailableError):
            embedder.embed_passages(["a sentence the model wrote", "the passage it cites"])
    calls = len(stub.calls(EMBED))
    with pytest.raises(CircuitOpenError):
        embedder.embed_passages(["a sentence the model wrote"])

    # THEN each request made the query's two attempts, not the ingest's five, and the open circuit none
    assert calls == 4
    assert len(stub.calls(EMBED)) == calls
