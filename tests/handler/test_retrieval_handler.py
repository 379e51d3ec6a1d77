"""Every retrieval event in events/ through the real Lambda entry point, on the indexed sample book."""

from __future__ import annotations

from typing import Any

import pytest

from bookrag.services.container import current
from tests.support.events import body_of

REST_FIELDS = {"chunk_id", "similarity_score", "content_text", "source_file", "module_name", "section_heading",
               "chunk_index", "total_chunks", "token_count"}


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any) -> None:
    """Every test here runs against the session's indexed sample book."""


def test_retrieve_valid(retrieval_handler: Any, invoke: Any) -> None:
    response = invoke(retrieval_handler, "retrieve-valid.json")

    assert response["statusCode"] == 200
    body = body_of(response)
    assert body["original_query"] == "How do I install ROS 2 Humble?"
    assert body["query_id"] and body["retrieval_time_ms"] > 0
    assert body["total_candidates"] >= len(body["retrieved_chunks"])
    chunks = body["retrieved_chunks"]
    assert 1 <= len(chunks) <= 3
    assert all(set(c) >= REST_FIELDS and c["content_text"] and 0 <= c["similarity_score"] <= 1 for c in chunks)
    assert [c["similarity_score"] for c in chunks] == sorted((c["similarity_score"] for c in chunks), reverse=True)
    assert chunks[0]["source_file"] == "module-1-ros2/installation.md"


def test_retrieve_with_defaults_returns_results_on_the_local_embedder(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "retrieve-defaults.json"))
    assert 1 <= len(body["retrieved_chunks"]) <= 5


def test_retrieve_filtered_by_module(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "retrieve-filtered.json"))
    assert body["retrieved_chunks"]
    assert {c["module_name"] for c in body["retrieved_chunks"]} == {"module-4-humanoids"}


@pytest.mark.parametrize(("event", "code", "field"), [
    ("retrieve-missing-query.json", "MISSING_QUERY", "query"),
    ("retrieve-empty-query.json", "MISSING_QUERY", "query"),
    ("retrieve-query-too-long.json", "INVALID_QUERY_LENGTH", "query"),
    ("retrieve-top-k-too-large.json", "INVALID_TOP_K", "top_k"),
    ("retrieve-threshold-out-of-range.json", "INVALID_SCORE_THRESHOLD", "score_threshold"),
    ("tool-retrieve-book-content-invalid.json", "INVALID_QUERY", "query"),
    ("tool-perform-retrieval-invalid.json", "INVALID_TOP_K", "top_k"),
])
def test_invalid_requests_get_contract_codes(retrieval_handler: Any, invoke: Any, event: str, code: str,
                                              field: str) -> None:
    response = invoke(retrieval_handler, event)

    assert response["statusCode"] == 400
    body = body_of(response)
    assert body["code"] == code and body["details"]["field"] == field and body["error"]


@pytest.mark.parametrize("event", ["retrieve-not-json.json", "retrieve-not-object.json"])
def test_malformed_bodies_get_400_in_the_envelope(retrieval_handler: Any, invoke: Any, event: str) -> None:
    response = invoke(retrieval_handler, event)

    assert response["statusCode"] == 400
    assert set(body_of(response)) >= {"error", "code", "details"}


def test_tool_retrieve_book_content(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "tool-retrieve-book-content.json"))

    assert len(body["query_embedding_used"]) == 384
    assert 1 <= len(body["results"]) <= 3
    first = body["results"][0]
    assert {"id", "content", "score", "source_url", "page_number", "section_title", "metadata"} <= set(first)


def test_tool_retrieve_book_content_reports_no_results(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "tool-retrieve-book-content.json",
                          body={"query": "What is the capital of Australia?", "min_score": 0.99}))
    assert body["results"] == [] and body["message"] == "No relevant content found"


def test_tool_perform_retrieval(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "tool-perform-retrieval.json"))

    assert body["query"] == "What is the difference between a topic and a service?"
    assert body["total_results"] == len(body["results"]) == 2
    assert all({"content", "source_url", "similarity_score", "position"} <= set(r) for r in body["results"])


def test_tool_retrieve_book_context(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "tool-retrieve-book-context.json"))

    assert body["context"].startswith("Context from the book:\n\n[Source: ")
    assert body["sources"]


def test_tools_list_has_the_three_contract_tools(retrieval_handler: Any, invoke: Any) -> None:
    body = body_of(invoke(retrieval_handler, "tools-list.json"))
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["retrieve_book_content", "perform_retrieval", "retrieve_book_context"]


def test_openapi_documents_routes_and_errors(retrieval_handler: Any, invoke: Any) -> None:
    spec = body_of(invoke(retrieval_handler, "openapi.json"))
    assert "/api/retrieve" in spec["paths"] and "/api/tools/perform_retrieval" in spec["paths"]
    assert "400" in spec["paths"]["/api/retrieve"]["post"]["responses"]
    # Every route that retrieves documents X-Retrieval-Mode, the header of a BM25-only fallback (issue 36).
    for path in ("/api/retrieve", "/api/tools/perform_retrieval"):
        assert "X-Retrieval-Mode" in spec["paths"][path]["post"]["responses"]["200"]["headers"]


def test_health(retrieval_handler: Any, invoke: Any) -> None:
    response = invoke(retrieval_handler, "health.json")
    assert response["statusCode"] == 200
    body = body_of(response)
    assert body["status"] == "ok" and body["embedding_provider"] == "local" and body["store"] == "embedded"


def test_scheduled_warmup_returns_health_and_builds_clients(retrieval_handler: Any, invoke: Any) -> None:
    summary = invoke(retrieval_handler, "scheduled-warmup.json")
    assert summary["warmed"] is True and summary["store_ready"] is True
    assert summary["clients_ready"] == {"embedder": True, "store": True, "app": True}


def test_clients_are_built_once_per_container(retrieval_handler: Any, invoke: Any) -> None:
    invoke(retrieval_handler, "retrieve-valid.json")
    embedder, client, built = current().embedder, current().store.client, set(current().built_names())

    invoke(retrieval_handler, "retrieve-defaults.json")
    invoke(retrieval_handler, "tool-perform-retrieval.json")

    assert current().embedder is embedder and current().store.client is client
    assert set(current().built_names()) == built
