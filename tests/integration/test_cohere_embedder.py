"""The Cohere embedder through the real SDK, over HTTP, against a stub on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bookrag import errors
from bookrag.adapters.embedders.cohere import CohereEmbedder
from bookrag.services.container import container_for
from tests.support.stubs import Reply, closed_port
from tests.support.upstreams import embed_reply

KEY = "co-canary-4f1c9b"


@pytest.fixture
def embedder(make_settings: Any, stub: Any) -> CohereEmbedder:
    settings = make_settings(embedding_provider="cohere", cohere_api_key=KEY, cohere_base_url=stub.url,
                             cohere_timeout_s=1.0, cohere_ingest_timeout_s=1.0, cohere_ingest_retries=2)
    return CohereEmbedder(settings, lambda: container_for(settings).cohere)


def test_query_request_shape(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", embed_reply())

    vector = embedder.embed_query("How do I install ROS 2?")

    (call,) = stub.calls("/v2/embed")
    body = call.json()
    assert body["model"] == "embed-english-v3.0"
    assert body["input_type"] == "search_query"
    assert body["embedding_types"] == ["float"]
    assert body["texts"] == ["How do I install ROS 2?"]
    assert call.headers["authorization"] == f"Bearer {KEY}"
    assert vector.shape == (1024,) and vector.dtype == np.float32
    assert np.isclose(np.linalg.norm(vector), 1.0)


def test_documents_are_batched_by_96(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", embed_reply())
    texts = [f"chunk {i}" for i in range(200)]

    vectors = embedder.embed_documents(texts)

    sizes = [len(c.json()["texts"]) for c in stub.calls("/v2/embed")]
    assert sizes == [96, 96, 8]
    assert {c.json()["input_type"] for c in stub.calls("/v2/embed")} == {"search_document"}
    assert vectors.shape == (200, 1024)


def test_ingest_waits_out_a_short_rate_limit(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(429, {"message": "slow down"}, {"Retry-After": "0"}), embed_reply())

    vectors = embedder.embed_documents(["a", "b"])

    assert len(stub.calls("/v2/embed")) == 2
    assert vectors.shape == (2, 1024)


def test_query_rate_limit_with_long_retry_after_is_not_waited(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(429, {"message": "slow down"}, {"Retry-After": "30"}))

    with pytest.raises(errors.EmbeddingRateLimitError) as caught:
        embedder.embed_query("q")

    assert caught.value.recoverable and caught.value.retry_after == 30.0
    assert len(stub.calls("/v2/embed")) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure(embedder: CohereEmbedder, stub: Any, status: int) -> None:
    stub.on("/v2/embed", Reply(status, {"message": "invalid api token"}))

    with pytest.raises(errors.EmbeddingAuthError) as caught:
        embedder.embed_query("q")

    assert caught.value.code == "AUTH_ERROR" and not caught.value.recoverable
    assert len(stub.calls("/v2/embed")) == 1  # never retried
    assert KEY not in str(caught.value) and "127.0.0.1" not in str(caught.value)


def test_server_error_is_retried_once_on_the_request_path(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(503, {"message": "busy"}))

    with pytest.raises(errors.EmbeddingUnavailableError):
        embedder.embed_query("q")

    assert len(stub.calls("/v2/embed")) == 2


def test_hang_times_out_without_retry(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(hang=True))

    with pytest.raises(errors.EmbeddingTimeoutError) as caught:
        embedder.embed_query("q")

    assert caught.value.recoverable
    assert len(stub.calls("/v2/embed")) == 1


def test_malformed_json_is_an_embedding_error(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(200, b"{not json"))

    with pytest.raises(errors.EmbeddingError) as caught:
        embedder.embed_query("q")

    assert "not json" not in str(caught.value)


def test_wrong_vector_count_is_refused(embedder: CohereEmbedder, stub: Any) -> None:
    stub.on("/v2/embed", Reply(200, {"id": "x", "response_type": "embeddings_by_type",
                                     "embeddings": {"float": []}, "meta": {}}))

    with pytest.raises(errors.EmbeddingError):
        embedder.embed_query("q")


def test_refused_connection(make_settings: Any) -> None:
    settings = make_settings(embedding_provider="cohere", cohere_api_key=KEY,
                             cohere_base_url=f"http://127.0.0.1:{closed_port()}")

    with pytest.raises(errors.EmbeddingUnavailableError) as caught:
        CohereEmbedder(settings, lambda: container_for(settings).cohere).embed_query("q")

    assert caught.value.code == "CONNECTION_ERROR"
